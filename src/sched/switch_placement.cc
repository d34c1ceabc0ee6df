// Switch placement: the kernel switch instant. Times follow the kernel's own accounting (exec
// runtime, run delay), which stamps a switch with the runqueue clock. A wakeup that finds
// need-resched set on the CPU it queues a task on asks the next __schedule() to skip the clock
// update (rq_clock_skip_update()), so the kernel switches at the wakeup's clock, before the trace
// shows the switch (the interrupt exit, idle exit and __schedule() in between):
//
//   CPU 0:  A running        sched_wakeup(B, need-resched)   ...   sched_switch A ==> B
//   trace:  A on CPU ---------------------------------------------|  B on CPU ----->
//   kernel: A on CPU --------|  B on CPU (exec runtime, no run delay) ------------->
//                            ^ rq clock of the wakeup: the switch instant for A and B
//
// With sched_stat_runtime (the kernel's run-time increments, each computed with the
// runqueue clock), the kernel's instants are read off the increments themselves:
//
//   trace:   switch-in ......... incr(r1) .... incr(r2) ....... sched_switch out
//   kernel:  S = t(incr1) - r1 ---------------- S + r1 + r2 = E |
//
// so a running thread's segments are held (Thread::held_from) from the last accounted
// instant until the next increment or its switch: the switch-in settles at the first
// increment (SettleIn), the switch-out at E (RewindHeld; a preemption's E at the next
// task's S, SettleOut). Without the increments a runqueue-clock model stands in: from a
// skip-requesting wakeup on, the switch happens at that wakeup's clock (or a later
// visible update: another wakeup queueing there, the tick). A switch the kernel did not
// trace at all (an idle CPU picking up a woken task) is placed the same way. Per thread,
// Thread::placement counts how far the kernel's instants are from the traced ones.
#include <algorithm>
#include <optional>
#include <vector>

#include "sched/state_machine.h"
#include "sched/state_machine_inl.h"

namespace cstool {
namespace {

// `seg` with its stretch inside [from, to) in the state of `as`: its pieces, in time
// order, each to `piece` (`seg` whole when it does not meet the stretch). A copy of `seg`:
// `piece` may append to the list it came from.
template <typename Piece>
void RelabelledPieces(const Thread::Segment seg, int64_t from, int64_t to,
                      const Thread::Segment& as, Piece&& piece) {
  const int64_t a = std::max(seg.start, from);
  const int64_t b = std::min(seg.end, to);
  if (a >= b) {
    piece(seg);
    return;
  }
  if (seg.start < a) piece(Thread::Segment{seg.state, seg.abstract, seg.cpu, seg.start, a});
  piece(Thread::Segment{as.state, as.abstract, as.cpu, a, b});
  if (b < seg.end) piece(Thread::Segment{seg.state, seg.abstract, seg.cpu, b, seg.end});
}

}  // namespace

// `t` starts running in state `s`: at `in_ts` as the runqueue clock model places the
// switch, traced at `ts`. With the kernel's run-time increments in the trace, its first
// one settles where in [in_ts, ts] the kernel switched it in; until then, and from each
// increment to the next, its segments are held so that the switch-out can be placed.
void StateMachine::StartRun(Thread& t, Microstate s, AbstractState a, int64_t in_ts, int64_t ts) {
  EmitUntracedSwitchOut(t, false);  // runs again with no wakeup: it had been preempted
  // Woken (sched_waking) and running with no enqueue in the trace: it was queued by now,
  // when the trace cannot tell, so its wait counts whole from the waking, plus the sleep
  // since a move while asleep (which queued it). (Not where lost events cut the wait: its
  // stretch then begins at the gap's end, not at the waking.) Either way that wakeup is
  // over: a move before it is no part of the next one's wait.
  if (t.waking_unqueued && t.state == Microstate::kWaitCpuWakeup && !t.lost_touched)
    NoteEnqueued(t, t.since);
  t.moved_asleep_at = -1;
  t.maybe_moved_asleep_ns = 0;
  t.seen_running = true;
  t.awaits_first_wakeup = false;
  t.woken_onto_untraced_cpu = false;
  t.early_waker = nullptr;
  SettleOut(t, -1);  // switched in again before the one it yielded to told its clock
  t.placement.in_early_ns += ts - in_ts;
  t.run_start = -1;
  t.run_ns = 0;
  t.run_ns_before_ipi = -1;
  if (caps_.stat_runtime && t.held_from < 0) {
    // The kernel may have switched it in before the model's instant too (a reused clock
    // whose update the trace does not show), but not before its wait began: hold that.
    t.held_from = t.since;
    t.settle_in_before = {t.state, t.abstract, t.cpu, t.since, 0};
    t.settle_in_run = {s, a, t.cpu, in_ts, 0};
    t.settle_in_from = in_ts;
    t.settle_in_to = ts;
  }
  Transition(t, s, a, in_ts);
  if (in_ts < ts && t.cpu >= 0 && static_cast<size_t>(t.cpu) < cpus_.size())
    RunInterruptsSince(t, cpus_[t.cpu], ts);
}

// `t` has run on `cpu` since the kernel switched it in, before the switch the trace shows
// at `ts`: an interrupt that ended in between (the rest of the tick whose wakeup preempted
// the task before) was in its run, so its time is `t`'s irq or softirq, not its running
// state's. (The task before ends its run at the switch's instant, inside the interrupt.)
void StateMachine::RunInterruptsSince(Thread& t, const Cpu& cpu, int64_t ts) {
  // They close in time order: none since the run began is the common case.
  if (cpu.closed_interrupts.empty() || cpu.closed_interrupts.newest().end <= t.since) return;
  const Microstate s = t.state;
  const AbstractState a = t.abstract;
  cpu.closed_interrupts.ForEach([&](const Cpu::ClosedInterrupt& c) {
    const int64_t from = std::max(c.start, t.since);
    const int64_t to = std::min(c.end, ts);
    if (from >= to) return;
    Transition(t, c.state, AbstractState::kNone, from);
    Transition(t, s, a, to);
  });
}

// The held segments of `t` between `from` and `to` take the state of `as`.
void StateMachine::RelabelHeld(Thread& t, int64_t from, int64_t to, const Thread::Segment& as) {
  if (from >= to) return;  // nothing to relabel (a switch placed at the model's instant)
  ScratchSegments scratch(held_scratch_);
  Thread::SegmentList& held = scratch.get();
  held.swap(t.held_segments);
  for (const Thread::Segment& seg : held)
    RelabelledPieces(seg, from, to, as,
                     [&](const Thread::Segment& p) { t.held_segments.push_back(p); });
}

// The kernel switched `t` in at `start` (within its settle window): what was held
// before that was still the state it was in before.
void StateMachine::SettleIn(Thread& t, int64_t start) {
  // Between the model's instant and the kernel's, the earlier state or the run's first
  // one takes over the other's stretch.
  const int64_t from = std::min(start, t.settle_in_from);
  const int64_t to = std::max(start, t.settle_in_from);
  const Thread::Segment& fill = start > t.settle_in_from ? t.settle_in_before : t.settle_in_run;
  RelabelHeld(t, from, to, fill);
  if (t.since < to) {  // still in the run's first state, which began at the model's instant
    t.held_segments.push_back({fill.state, fill.abstract, fill.cpu, t.since, to});
    t.since = to;
  }
  t.placement.in_early_ns -= start - t.settle_in_from;
  t.settle_in_from = -1;
  // An exit record's accounting at the switch-in is settled by now (AccountIncrement,
  // or the model's instant stands); a fatal signal's candidate is settled here.
  t.record_at_switch_in = false;
  if (t.signal_exit_at_switch_in) t.accounted_at_signal_exit_wakeup = start;
  t.signal_exit_at_switch_in = false;
}

// Where the kernel's accounting of `t` stands as the trace shows it: its run's increments
// so far, else the run's start (-1: not running, or no start known).
int64_t StateMachine::AccountedSoFar(const Thread& t) {
  return t.run_start >= 0 ? t.run_start + t.run_ns : t.settle_in_from;
}

// Whether AccountedSoFar is the run's switch-in as the model placed it, which the run's
// first increment may still move (SettleIn).
bool StateMachine::AccountedAtUnsettledSwitchIn(const Thread& t) {
  return t.run_start < 0 && t.settle_in_from >= 0;
}

// The dying thread's exit record (taskstats) was taken at `ts`: it holds the accounting
// as of the kernel's last update before then.
void StateMachine::NoteExitRecord(Thread& t, int64_t ts) {
  t.exit_record_ts = ts;
  t.accounted_at_record = AccountedSoFar(t);
  t.record_at_switch_in = AccountedAtUnsettledSwitchIn(t);
}

// Whether a wakeup of `wakee_tid` by the dying thread can be the one taskstats_exit()
// does: of the recorder's listener when the file names it. Else any but the thread's own
// process's: exit_group() and a fatal signal wake the other threads first, to kill them
// (a thread pool's exit() had its record placed there: 1.5 ms of its run before the
// record left out).
bool StateMachine::WakesExitListener(const Thread& dying, int32_t wakee_tid) const {
  if (caps_.exit_listener_tid > 0) return wakee_tid == caps_.exit_listener_tid;
  const int32_t tgid = threads_.KnownTgid(wakee_tid);
  return tgid == 0 || tgid != dying.tgid;
}

// A wakeup by `t` in task context outside any syscall: rare but for one case, a fatal
// signal's exit (do_exit() on the way back to user mode, no exit syscall), whose
// taskstats_exit() wakes the listener right after it sampled the accounting.
void StateMachine::NoteSignalExitCandidate(Thread& t, int64_t ts) {
  t.signal_exit_wakeup_ts = ts;
  t.accounted_at_signal_exit_wakeup = AccountedSoFar(t);
  t.signal_exit_at_switch_in = AccountedAtUnsettledSwitchIn(t);
  t.update_after_signal_exit_wakeup = -1;
}

// At sched_process_exit: an exit that no exit syscall began was a fatal signal's, since
// the thread's last syscall. Its record was taken at the first wakeup since then (else
// now, as for an exit syscall's without one), and the first increment after the record
// tells the accounting it holds, as for an exit syscall (AccountIncrement).
void StateMachine::BeginSignalExit(Thread& t, int64_t ts) {
  // Without syscall events (or for a kernel thread) no syscall tells where the exit began.
  if (t.exit_accounting_pending || t.accounted_at_exit >= 0 || t.exit_record_ts >= 0 ||
      t.syscall != kNotInSyscall || !t.on_cpu || !caps_.syscalls || t.kernel_thread)
    return;
  t.exit_accounting_pending = true;
  if (t.signal_exit_wakeup_ts >= 0) {
    t.exit_record_ts = t.signal_exit_wakeup_ts;
    t.accounted_at_record = t.accounted_at_signal_exit_wakeup;
    t.record_at_switch_in = t.signal_exit_at_switch_in;
    // The listener woken on this CPU: that wakeup's own update (its preemption check)
    // came between the record and now, and it tells what the record holds already.
    if (t.update_after_signal_exit_wakeup >= 0)
      SettleExitRecord(t, t.update_after_signal_exit_wakeup, INT64_MIN, INT64_MAX);
  } else {
    NoteExitRecord(t, ts);
  }
}

// The first update of the dying thread's accounting after its exit record began at
// `update` (its increment's event at `event_ts`; `before`: where the increments before it
// ended): the kernel's update before it is what the record holds. An update whose
// increment the trace lacks (done from an unfollowed task's context, e.g. another CPU
// reading the dying task's runtime) shows only as that start; it is in the record only if
// it came before the record was taken, else the record holds what the trace showed then.
void StateMachine::SettleExitRecord(Thread& t, int64_t update, int64_t before, int64_t event_ts) {
  if (t.exit_record_ts >= 0 && t.accounted_at_record >= 0)
    t.accounted_at_exit = update <= t.exit_record_ts ? std::max(t.accounted_at_record, update)
                                                     : t.accounted_at_record;
  else
    t.accounted_at_exit = std::min(event_ts, std::max(before, update));
  t.exit_accounting_pending = false;
  DropEqualExitCandidate(t);
}

// What of `t`'s held segments may become final, up to `to`. While a wakeup may have been
// a fatal signal's exit record (NoteSignalExitCandidate), not what ran after the
// accounting that record sampled: the kernel's counters, if it was one, end there.
int64_t StateMachine::FinalUpTo(const Thread& t, int64_t to) {
  if (t.signal_exit_wakeup_ts < 0) [[likely]]
    return to;
  return std::min(to, t.accounted_at_signal_exit_wakeup >= 0 ? t.accounted_at_signal_exit_wakeup
                                                             : t.signal_exit_wakeup_ts);
}

// The second candidate for the exit record's accounting is only one when it differs.
void StateMachine::DropEqualExitCandidate(Thread& t) {
  if (t.accounted_before_exit_tick >= t.accounted_at_exit) t.accounted_before_exit_tick = -1;
}

// A dying thread whose exit record was taken, with no increment since: where the record
// stands is known only at its next increment (or its end), so what the model inferred
// after the record (a clock update, a reschedule IPI) must not make its segments final.
bool StateMachine::ExitRecordUnsettled(const Thread& t) {
  return t.exit_accounting_pending && t.exit_record_ts >= 0;
}

// Whatever is held becomes final as it is (the model's switch-in stays).
void StateMachine::FlushHeld(Thread& t) {
  if (t.gap_from >= 0) ConfirmGap(t, INT64_MAX);
  if (t.exit_accounting_pending) {  // no increment came after the exit began
    t.accounted_at_exit = t.exit_record_ts >= 0 && t.accounted_at_record >= 0
                              ? t.accounted_at_record
                              : AccountedSoFar(t);
    t.exit_accounting_pending = false;
    DropEqualExitCandidate(t);
  }
  if (t.settle_in_from >= 0) SettleIn(t, t.settle_in_from);
  if (t.settles_out_of) {
    SettleOut(*t.settles_out_of, -1);
    t.settles_out_of = nullptr;
  }
  SettleOut(t, -1);
  t.run_start = -1;
  t.run_ns = 0;
  t.run_ns_before_ipi = -1;
  if (t.held_from >= 0) ReleaseHeld(t, INT64_MAX);
}

void StateMachine::PushSchedStatRuntime(const SchedStatRuntime& e) {
  Cpu& here = Enter(e.c);
  NoteEventTask(here, e.c);
  if (e.pid == 0) return;
  // `pid` is the task whose run was accounted: this CPU's current, or another CPU's when
  // a wakeup here checked preemption there.
  AccountIncrement(IncrementThread(here, e.pid, e.comm), e);
}

// The unfiltered buffer holds every task's increments done in the contexts the trace
// leaves out (all but the followed tasks'; with -a, the recorder's). The trace already
// has those done in a followed task's context; of the others, a followed task's are the
// kernel's accounting of it (an unfollowed task's switches are not in the trace). One an
// unfollowed task did of itself tells only that it ran (OnUnfollowedRun): the model's CPU
// state does not take it (its switches are not in the trace).
void StateMachine::PushUnfilteredRuntime(const SchedStatRuntime& e) {
  EnterUnfiltered(e.c);
  if (e.c.pid == e.pid) {  // its own: it ran (an unfollowed task's; the others are traced)
    NoteUnfollowedCurrent(e.c.cpu, e.pid, e.c.ts);
    if (e.pid != 0 && !On(Hook::kUnfollowedRun).empty()) NoteUnfollowedRun(e);
    return;
  }
  Thread* t = UnfilteredSubject(e.c.pid, e.pid);
  if (t == nullptr) return;
  if (AccountIncrement(*t, e)) ++unfiltered_increments_used_;
}

// Unfollowed `pid` ran on `cpu_id` at `ts` (its own increment). Where a clock skip waits
// there, asked for while another task ran, a switch between them came first, untraced,
// and took the skip: the next switch reads a fresh clock. (A tick's wakeup in a compiler
// in a long system call, then three other tasks, then the compiler switching to the
// wakee 2.4 ms later: the wait had ended at the wakeup and the 2.4 ms counted as steal.)
// The task it was asked for updated the clock instead (its tick's, a wakeup's update
// before the increment): the skip reuses that newer clock.
void StateMachine::NoteUnfollowedCurrent(int32_t cpu_id, int32_t pid, int64_t ts) {
  if (cpu_id < 0 || static_cast<size_t>(cpu_id) >= cpus_.size()) return;
  Cpu& cpu = cpus_[cpu_id];
  if (!cpu.clock_skip || cpu.clock_skip_pid < 0 || ts <= cpu.rq_clock_ts) return;
  if (pid != cpu.clock_skip_pid)
    ResetClock(cpu);
  else
    NoteRqClock(cpu, ts);
}

// An unfollowed task's increment in its own context: it was its CPU's current task for
// the whole of it, since its switch-in or its update before (clamped to the trace).
void StateMachine::NoteUnfollowedRun(const SchedStatRuntime& e) {
  if (first_ts_ < 0 || e.c.ts < first_ts_ || e.c.cpu < 0 || e.c.cpu >= kMaxCpuId) return;
  Thread& t = Lookup(e.pid, e.comm);
  if (t.tracked) return;
  const int64_t from = e.runtime < static_cast<uint64_t>(e.c.ts - first_ts_)
                           ? e.c.ts - static_cast<int64_t>(e.runtime)
                           : first_ts_;
  for (Observer* p : On(Hook::kUnfollowedRun)) p->OnUnfollowedRun(t, e.c.cpu, from, e.c.ts);
}

// The followed thread `pid` that a record of the unfiltered buffer, written in the context
// of `context`, is about; null when it is none of the model's, or when a followed context
// wrote it (the trace has those).
Thread* StateMachine::UnfilteredSubject(int32_t context, int32_t pid) {
  if (pid == 0) return nullptr;
  if (const Thread* c = threads_.Find(context); c != nullptr && c->tracked) return nullptr;
  Thread* t = IncrementSubjectExchanging(pid);
  return t != nullptr && t->tracked ? t : nullptr;
}

// The kernel accounts only the task running on a CPU (update_curr()). One queued on an
// idle CPU is accounted when that CPU picked it up with no sched_switch recorded (the
// kernel omits some idle-to-task switches) and another CPU's wakeup updated it there
// before any event of its own: it runs from here, and this increment's start is where
// it was switched in (the settling of the run's first increment), not at its own first
// event (hackbench: 0.27 ms each). The CPU may still seem to run an unfollowed task: a
// pid filter leaves out its switch to idle (a thread frozen in favour of one, thawed on
// the idle CPU: 0.41 ms of run counted as a wait). That takes knowing where the thread
// is queued: without the moves done in unfollowed contexts, it may run elsewhere.
void StateMachine::PickedUpByIdleCpu(Thread& t, int32_t from_cpu, int64_t ts) {
  // (On its own CPU, an increment done by another context shows that CPU ran something.)
  if (!t.tracked || !IsWaitingForCpu(t.state) || t.cpu < 0 || t.cpu == from_cpu ||
      static_cast<size_t>(t.cpu) >= cpus_.size())
    return;
  Cpu& cpu = cpus_[t.cpu];
  if (cpu.current_known &&
      (cpu.current == nullptr || (caps_.unfiltered_moves && RunsUnseen(*cpu.current))) &&
      cpu.lost_gap_from < 0)
    MarkOnCpuChanged(cpu, t.cpu, &t, ts);
}

// Where the kernel's update of running `t` that an increment reports began, on the trace's
// clock: the increment's event less its runtime (`measured`), unless the run-time clock
// stood still inside it (steal). With every increment of a followed thread in the file,
// none is missing before it, and then the update began where the increments so far ended
// (the run's start, for its first), not `measured`:
//
//   trace:   incr ...| (vCPU stolen: clock stood still) ...... incr(r)
//   kernel:  incr ...|........................................ r .....|
//                    ^ the update began here          ^ measured = t(incr) - r
int64_t StateMachine::UpdateFrom(const Thread& t, const std::optional<FirstIncrement>& first,
                                 int64_t measured) const {
  if (!increments_complete_ || !t.tracked) return measured;
  if (first) return first->start;
  if (t.run_start >= 0) {
    const int64_t so_far = t.run_start + t.run_ns;
    return measured > so_far + kIncrementLagNs ? so_far : measured;
  }
  return measured;
}

// Where the kernel switched `t` in, as the run's first increment `e` (measured from
// `measured`, its event less its runtime) tells within the settle window, and how far
// the run-time clock stood still from there (steal at the start of the run).
StateMachine::FirstIncrement StateMachine::FirstIncrementStart(const Thread& t,
                                                               const SchedStatRuntime& e,
                                                               int64_t measured) const {
  // An increment that starts after the traced switch-in is not the run's first: that
  // one was done from an unfollowed task's context. Then the model's instant (where the
  // previous task's increments ended, when it had them) stands.
  int64_t start =
      measured > t.settle_in_to ? t.settle_in_from : std::max(measured, t.settle_in_before.start);
  // The increment's event comes after the clock it was computed with (kIncrementLagNs),
  // so `measured` is late by that lag; the model's instant is a clock read too. Within
  // one lag of each other they are the same clock.
  if (start > t.settle_in_from && start - t.settle_in_from <= kIncrementLagNs)
    start = t.settle_in_from;
  const int64_t stood_still_to = start;
  if (t.settles_out_of && e.c.cpu == t.cpu && e.c.pid == t.tid &&
      ClockStoodStillAtSwitch(t, *t.settles_out_of, start))
    start = t.settles_out_of->settle_out_default;
  return {start, stood_still_to};
}

// The clock increment `e` of a task running on `cpu` was computed with: its event's time,
// unless a clock skip is pending there (a wakeup that found need-resched set: PREEMPT_NONE
// keeps a task in the kernel, e.g. in execve, long after that), when __schedule()'s
// increment reuses the clock of that wakeup.
int64_t StateMachine::IncrementClock(const Cpu& cpu, const SchedStatRuntime& e) {
  return cpu.clock_skip && cpu.rq_clock_ts >= 0 ? std::min(e.c.ts, cpu.rq_clock_ts) : e.c.ts;
}

// Whether increment `e` of `t` was computed with a clock read right then: only
// __schedule()'s own update, in the task's context on its CPU, reuses one; an
// interrupt's, or another context's (a remote wakeup), reads it.
bool StateMachine::FreshIncrementClock(const Thread& t, const SchedStatRuntime& e) {
  return (e.c.flags & (kFlagHardirq | kFlagSoftirq | kFlagNmi)) != 0 || e.c.cpu != t.cpu ||
         e.c.pid != t.tid;
}

// `waker` queued `wakee` on its own CPU (sched_wakeup): the enqueue read the runqueue
// clock afresh and accounted the running waker with it (enqueue_entity()'s update_curr()),
// so the waker's increment since the wakee's sched_waking that left a gap was computed
// with a fresh clock, not one a switch reused: the gap is steal. (sh's exec: 0.1 ms of its
// run was taken for a wait.)
void StateMachine::NoteWakeupIncrement(Thread& waker, const Thread& wakee) {
  if (!wakee.waking_unqueued || wakee.on_cpu) return;
  const int64_t gapped_event = waker.gap_clock_end + waker.gap_ns + kIncrementLagNs;
  if (gapped_event >= wakee.since) waker.gap_clock_fresh = true;
}

// `t`'s run is accounted to `previous_end` before increment `e` and to run_start + run_ns
// with it; its clock, read at most kIncrementLagNs before its event, says the run reached
// further: the rest ran unaccounted. An increment done from an unfollowed task's context is
// filtered out of the trace; with every increment in it (a followed thread's: the
// increments other contexts do for other threads are left out), none was, and the clock
// stood still or `e` used an old one: a gap, which the run's end decides.
void StateMachine::NoteIncrementShortfall(Thread& t, const SchedStatRuntime& e,
                                          int64_t previous_end, int64_t clock_ts) {
  const int64_t reached = clock_ts - kIncrementLagNs - t.run_start;
  if (reached <= t.run_ns) return;
  if (increments_complete_ && t.tracked) {
    t.gap_from = previous_end;
    t.gap_ns = reached - t.run_ns;
    t.gap_clock_end = t.run_start + t.run_ns;
    t.gap_clock_fresh = FreshIncrementClock(t, e);
  }
  t.run_ns = reached;
}

// The kernel accounted `e.runtime` more of `t`'s run, up to the clock read just before
// `e`. False when it told nothing: `t` is not running, or its run has no start to add to
// and no exit record waits on it.
bool StateMachine::AccountIncrement(Thread& t, const SchedStatRuntime& e) {
  const auto runtime = static_cast<int64_t>(std::min<uint64_t>(e.runtime, INT64_MAX / 4));
  for (Observer* p : On(Hook::kRuntimeAccounted))
    p->OnRuntimeAccounted(t, e.c.ts - runtime, e.c.ts);
  if (!t.on_cpu) [[unlikely]]
    PickedUpByIdleCpu(t, e.c.cpu, e.c.ts);
  if (!t.on_cpu || t.cpu < 0 || static_cast<size_t>(t.cpu) >= cpus_.size()) return false;
  Cpu& cpu = cpus_[t.cpu];
  const int64_t measured = e.c.ts - runtime;
  // The run's first increment tells where the kernel switched it in (SettleIn below),
  // which is also where an exit record taken before it stood.
  const std::optional<FirstIncrement> first =
      t.settle_in_from >= 0 ? std::optional(FirstIncrementStart(t, e, measured)) : std::nullopt;
  // An update after a candidate record (NoteSignalExitCandidate): the thread ran on, so
  // that wakeup was no exit's (a page fault's, say).
  // But a wakeup of the listener the file names is taskstats_exit()'s, whatever follows
  // (exit_mm() of a large process can take a tick or more before sched_process_exit).
  // (Only an exit's record reads it: not worth its cost at every increment.)
  const bool exit_pending = t.signal_exit_wakeup_ts >= 0 || t.exit_accounting_pending;
  const int64_t update_from = exit_pending ? UpdateFrom(t, first, measured) : 0;
  if (t.signal_exit_wakeup_ts >= 0) [[unlikely]] {
    if (update_from > t.signal_exit_wakeup_ts && caps_.exit_listener_tid <= 0)
      t.signal_exit_wakeup_ts = -1;
    else if (t.update_after_signal_exit_wakeup < 0)
      t.update_after_signal_exit_wakeup = update_from;
  }
  // An increment between the exit's start and the exit record (a tick: taskstats_exit()
  // comes well into do_exit()) is in the record if taskstats read the runtime after it;
  // the listener's wakeup, the only sign of the read, comes after both. The accounting
  // before the first such increment is the other candidate (the check picks by value).
  bool told_exit = false;  // (it dated an exit record's accounting)
  if (t.exit_accounting_pending && t.exit_record_ts < 0 && t.accounted_before_exit_tick < 0) {
    t.accounted_before_exit_tick = update_from;
    told_exit = true;
  }
  // The first increment after the record is not in it. Taken before the run's first
  // increment, the record holds the accounting as of the switch-in this one settles.
  if (t.record_at_switch_in) t.accounted_at_record = first->start;
  if (t.exit_accounting_pending && t.exit_record_ts >= 0) {
    SettleExitRecord(t, update_from, t.run_start >= 0 ? t.run_start + t.run_ns : INT64_MIN, e.c.ts);
    told_exit = true;
  }
  if (t.settle_in_from >= 0) {
    if (t.gap_from >= 0) ConfirmGap(t, INT64_MAX);  // from a run that ended unsettled
    // The first increment of the run is measured from the kernel's switch-in.
    const auto [start, stood_still_to] = *first;
    const int64_t settle_in_to = t.settle_in_to;
    SettleIn(t, start);
    if (t.settles_out_of) {  // the task it preempted stopped at the same clock
      SettleOut(*t.settles_out_of, start);
      t.settles_out_of = nullptr;
    }
    t.run_start = start;
    t.run_ns = runtime;
    if (stood_still_to > start) {  // steal at the start of the run: kept as on-CPU
      NoteStolen(t, start, stood_still_to);
      t.run_ns += stood_still_to - start;
    }
    // With every increment in the file, a first one that counts from after the switch-in
    // (later than the traced switch: FirstIncrementStart keeps the model's instant) is
    // short of its clock as a later one can be: the clock stood still (steal), or the
    // increment used an old clock (__schedule()'s, reusing a wakeup's). A fresh clock (a
    // tick's, another context's) rules the second out: an exec'ing thread's tick, 0.36 ms
    // short with no other, was steal, not the wait the next increment (the preemption's,
    // reused) made it. Where the model's instant is earlier than the traced switch by
    // more than a lag (a clock skip, which may be the error), the clock ran at least
    // from the traced switch, the latest the kernel can have switched: only the shortfall
    // from there is sure (an exec'ing child of sh: 0.2 ms of its run, after a switch-in
    // traced 4 us after its parent's last increment, had been taken for a wait).
    if (increments_complete_ && t.tracked && FreshIncrementClock(t, e)) {
      const int64_t unsure = settle_in_to - start <= kIncrementLagNs ? 0 : settle_in_to - start;
      NoteIncrementShortfall(t, e, t.run_start + t.run_ns - runtime, e.c.ts - unsure);
    }
  } else if (t.run_start >= 0) {
    // An increment done from an unfollowed task's context (a wakeup on another CPU
    // checking preemption here) is filtered out of the trace: then the increments add up
    // to less than this one's clock, which was read at most kIncrementLagNs before it.
    // But while a clock skip is pending here (a wakeup that found need-resched set:
    // PREEMPT_NONE keeps a task in the kernel, e.g. in execve, long after that), the
    // increment of __schedule() is computed with the reused clock of that wakeup, not a
    // fresh one: its clock is the skip's, and the increments are complete up to it.
    const int64_t clock_ts = IncrementClock(cpu, e);
    // Increments cannot add up past their own clock: what this one counts from before the
    // gapped one's event was run time after all, not steal. That one was computed with an
    // old clock (a reschedule at the return from a long execve that picked the same task
    // reused the clock of the wakeup that asked for it, with no switch to show it). Not
    // while an exit record is matched: its candidates were taken with the gap as it stood.
    // A missing increment assumed at a reschedule IPI is taken back: this increment's
    // own clock tells whether one was missing (the rule below).
    if (t.run_ns_before_ipi >= 0) t.run_ns = t.run_ns_before_ipi;
    // (Past it by no more than one lag is the two events' lags differing.)
    if (t.gap_from >= 0 && t.exit_record_ts < 0 && t.accounted_at_exit < 0) {
      const int64_t overshoot_ns = t.run_start + t.run_ns + runtime - (clock_ts - kIncrementLagNs);
      if (overshoot_ns > kIncrementLagNs) {
        const int64_t gap_run_ns = std::min(overshoot_ns, t.gap_ns);
        t.gap_ns -= gap_run_ns;
        t.run_ns -= gap_run_ns;
      }
    }
    // A gap the run went on past is steal (what is left of it): the clock stood still.
    ConfirmGap(t, INT64_MAX);
    const int64_t previous_end = t.run_start + t.run_ns;
    t.run_ns += runtime;
    NoteIncrementShortfall(t, e, previous_end, clock_ts);
  } else {
    return told_exit;
  }
  t.run_ns_before_ipi = -1;
  // The kernel has accounted the run up to here: what was held before is final.
  const int64_t accounted = std::min(t.run_start + t.run_ns, e.c.ts);
  if (accounted > cpu.rq_clock_ts) cpu.rq_clock_ts = accounted;
  cpu.accounted_ts = accounted;
  cpu.accounted = &t;
  // A pending gap's stretch stays held: if the event was late, the kernel switched the
  // thread out at that increment's clock, before it.
  const int64_t final_to =
      FinalUpTo(t, t.gap_from >= 0 ? std::min(accounted, t.gap_clock_end) : accounted);
  if (t.held_from >= 0 && final_to > t.held_from) ReleaseHeld(t, final_to);
  return true;
}

// A preemption, with every increment in the file: the preempted task's last increment
// (its own at __schedule(), or the wakeup's whose clock __schedule() reused) ends its run
// at the clock the switch was made with, and the next task's run is counted from that
// same clock. When the next task's first increment nonetheless starts later, by more
// than a lag, the task clock stood still in between (steal: the host ran something else
// on this vCPU; the kernel leaves it out of both tasks' exec runtime, and counts it in
// the preempted task's run delay). Then both switched at the preempted task's clock, and
// the stretch is steal in the new run, not the preempted task's run time:
//
//   trace:   prev ---- incr(prev) ...... (vCPU stolen) ...... switch prev ==> next .. incr(next, r)
//   kernel:  prev ---|  next: clock stood still (steal) ........................ r ...|
//                    ^ the switch for both (settle_out_default)      measured = t(incr) - r
//
// Only from the new task's own first increment, on its CPU (one done remotely, by a
// wakeup on another CPU, is late by more than a lag); not when the new task's wait began
// after that clock (it cannot have been switched in before its wakeup); not with an
// increment assumed at a reschedule IPI or a gap pending (the settled end then tells them
// apart), nor where an increment may be missing (an unfollowed task's, or after lost
// events): then the new task's first increment is the better clock.
bool StateMachine::ClockStoodStillAtSwitch(const Thread& next, const Thread& prev,
                                           int64_t measured) const {
  return increments_complete_ && next.tracked && prev.tracked && !prev.settle_out_gap &&
         prev.settle_out_from == prev.settle_out_default &&
         prev.settle_out_default >= next.settle_in_from &&
         measured > prev.settle_out_default + kIncrementLagNs;
}

void StateMachine::ConfirmGap(Thread& t, int64_t end) {
  if (t.gap_from < 0) return;  // settled already (a flush before the switch's settling)
  const int64_t steal =
      std::clamp(end, t.gap_clock_end, t.gap_clock_end + t.gap_ns) - t.gap_clock_end;
  if (steal > 0) NoteStolen(t, t.gap_from, t.gap_from + steal);
  t.gap_from = -1;
}

// Between two increments of one run, `t`'s exec runtime did not grow from `from` to `to`,
// and no update is missing from the trace: the runqueue's task clock (rq_clock_task)
// stood still while the trace's clock ran on. On a kernel with paravirtual steal
// accounting that is steal, the host running something else on the virtual CPU (the
// kernel leaves it out of every task's exec runtime); with IRQ time accounting, interrupt
// time too. The microstates keep it as on-CPU time, the trace's view; the check leaves it
// out of exec runtime, the kernel's:
//
//   trace:   T on CPU -----------------------------------------------|
//   kernel:  incr ...| (clock stood still: steal) |... incr .........|
//                    from                         to
void StateMachine::NoteStolen(Thread& t, int64_t from, int64_t to) {
  t.placement.stolen_ns += to - from;
  for (Observer* p : On(Hook::kStolen)) p->OnStolen(t, from, to);
}

// The unfiltered run-time buffer lost events: an increment done in another context may be
// missing from here on, and a gap in a run's increments is no longer proof of steal. (The
// report turns the rule off before decoding when it knows of losses; this catches the
// ones only the pages show.)
void StateMachine::PushUnfilteredLost(const LostEvents& /*e*/) { increments_complete_ = false; }

// The runqueue clock of `cpu` was read again at `ts`: a skipped update would now reuse
// this value, so the running thread's segments before it are final.
void StateMachine::NoteRqClock(Cpu& cpu, int64_t ts) {
  cpu.rq_clock_ts = ts;
  Thread* t = cpu.current_known ? cpu.current : nullptr;
  if (!cpu.clock_skip || !t || t->held_from < 0 || t->run_start >= 0 || t->settle_in_from >= 0 ||
      ExitRecordUnsettled(*t))
    return;
  if (const int64_t final_to = FinalUpTo(*t, ts); final_to > t->held_from)
    ReleaseHeld(*t, final_to);
}

// A reschedule IPI that finds need-resched set: a wakeup on another CPU queued a task
// here, reading this runqueue's clock and accounting the running task first (its
// increment is in the trace only when the waker is followed). When the running task's
// increments stop well before the IPI, that one is missing: the kernel's accounting of
// it reached (about) the IPI's time.
void StateMachine::NoteRemoteReschedule(Cpu& cpu, int64_t ipi_ts, int32_t pid) {
  // The IPI waits while this CPU has interrupts off (a tick, up to ~60 us here); the
  // wakeup read the clock before need-resched first showed here, when an event did.
  const int64_t ts = cpu.resched.seen && cpu.resched.seen_ts >= ipi_ts - kMaxIpiDelayNs
                         ? std::min(ipi_ts, cpu.resched.seen_ts)
                         : ipi_ts;
  Thread* t = cpu.current_known ? cpu.current : nullptr;
  const bool accounted_run = t && t->on_cpu && t->run_start >= 0;
  // With every increment in the trace, that wakeup's update of the running task is in it
  // already, and its clock is the one the switch reuses, however late the IPI came (the
  // host not running this virtual CPU holds it back: 850 us seen).
  if (accounted_run && t->tracked && increments_complete_) {
    RequestClockSkip(cpu, pid);
    return;
  }
  // For the runqueue-clock model: that wakeup updated the clock (about now, unless the
  // trace showed it) and, finding need-resched set, asked the next switch to reuse it.
  if (cpu.rq_clock_ts < ts - kIpiLatencyNs) NoteRqClock(cpu, ts);
  RequestClockSkip(cpu, pid);
  if (accounted_run && t->run_start + t->run_ns < ts - kIpiLatencyNs)
    AssumeIncrement(*t, ts - kIncrementLagNs);
}

// A wakeup on another CPU, in the context of a task the pid filter leaves out, queued a
// task on `target` (`target_id`): enqueue_entity() accounted the task running there with
// the runqueue clock first, and its increment was filtered out. Without it, a switch-out
// that reuses that clock (need-resched set by the wakeup, no increment of its own) would
// end the run at the last increment seen, short by everything since:
//
//   CPU 1:  (unfollowed waker)  sched_waking(B) ..clock read, T accounted.. sched_wakeup(B, CPU 0)
//   CPU 0:  T running  incr ..........................................  sched_switch T ==> B
//   kernel: T on CPU -------------------------------------------------|  (reused clock)
//
// The clock was read after sched_waking and before sched_wakeup; measured right after
// the waking (a remote enqueue sends the reschedule IPI before sched_wakeup, several
// microseconds in a VM): `waking_ts`, or without one seen (-1) the wakeup's time
// `wakeup_ts` less the usual lag (`wakeup_ts` itself when the waking places the task,
// in a trace without sched_wakeup: `is_waking`).
void StateMachine::NoteFilteredRemoteUpdate(Cpu& target, int32_t target_id, int64_t waking_ts,
                                            int64_t wakeup_ts, bool is_waking) {
  Thread* t = target.current_known ? target.current : nullptr;
  if (!t || !t->tracked || !t->on_cpu || t->cpu != target_id || t->run_start < 0) return;
  const int64_t clock_ts = waking_ts >= 0 ? waking_ts
                           : is_waking    ? wakeup_ts
                                          : wakeup_ts - kIncrementLagNs;
  if (t->run_start + t->run_ns < clock_ts) AssumeIncrement(*t, clock_ts);
}

// `prev` goes to sleep on `cpu_id` at `ts` with no increment of its own: __schedule()
// reused a clock that had accounted it already, the latest read of this runqueue's
// clock. A filtered remote enqueue may have made that read and yet show (sched_wakeup)
// only after this switch, its IPI being sent first: one in flight from a waking that
// named this CPU is taken as that read. sched_waking names the CPU the wakee was on, not
// the one the wakeup then picks: a migration thread's waking of a task that pinned
// itself names its new CPU (the case this is for); a wakeup that picks another CPU than
// the waking named is missed, or taken for one here, only when this switch has no
// increment of its own and comes within kIpiLatencyNs of the waking.
void StateMachine::NoteEnqueueInFlight(Thread& prev, int32_t cpu_id, int64_t ts) {
  if (prev.run_start < 0 || prev.run_start + prev.run_ns >= ts - kIncrementLagNs) return;
  int64_t clock_ts = -1;
  for (const Cpu& other : cpus_)
    if (other.filtered_waking_target == cpu_id && other.filtered_waking_ts >= 0 &&
        other.filtered_waking_ts >= ts - kIpiLatencyNs && other.filtered_waking_ts < ts)
      clock_ts = std::max(clock_ts, other.filtered_waking_ts);
  if (clock_ts > prev.run_start + prev.run_ns) AssumeIncrement(prev, clock_ts);
}

// The kernel accounted `t`'s run up to `clock_ts` with no increment in the trace. The
// assumed increment stays a guess: what it covers stays held until the next increment
// (which takes it back if its own clock says so) or the next task's first one (at the
// switch) tells the kernel's clock.
void StateMachine::AssumeIncrement(Thread& t, int64_t clock_ts) {
  if (t.run_ns_before_ipi < 0) t.run_ns_before_ipi = t.run_ns;
  t.run_ns = clock_ts - t.run_start;
}

// A wakeup queued a task on `cpu` while need-resched was set there and `current_pid` ran
// there: the next switch on it reuses the clock of that wakeup, so hold the running
// thread's segments from then.
void StateMachine::RequestClockSkip(Cpu& cpu, int32_t current_pid) {
  cpu.clock_skip_unconfirmed = false;
  if (cpu.rq_clock_ts < 0) return;
  cpu.clock_skip = true;
  cpu.clock_skip_pid = current_pid;
  Thread* t = cpu.current_known ? cpu.current : nullptr;
  // A thread whose run the kernel's increments account is held already.
  if (!t || !t->on_cpu || t->held_from >= 0) return;
  if (t->since < cpu.rq_clock_ts) Transition(*t, t->state, t->abstract, cpu.rq_clock_ts);
  t->held_from = std::max(t->since, cpu.rq_clock_ts);
}

// Where the kernel's accounting puts a switch traced at `ts`: at the reused clock when a
// skip was requested and this switch is the reschedule it was for (the CPU was idle, the
// previous task was preempted, or an event showed need-resched set); else at `ts`, the
// fresh clock read early in __schedule() (well under a microsecond before the event).
// `prev_pid` (0: idle, -1: not known) other than the task that ran when the skip was asked
// for: an untraced switch between two unfollowed tasks came first and took the skip (a
// tick's wakeup in a compiler, then the compiler to rcu_preempt, then rcu_preempt to the
// wakee: 41 us of run delay had been placed at the wakeup).
int64_t StateMachine::KernelSwitchTs(const Cpu& cpu, const Thread* prev, bool voluntary, int64_t ts,
                                     int32_t prev_pid) const {
  if (!cpu.clock_skip || cpu.rq_clock_ts < 0 || cpu.rq_clock_ts > ts) return ts;
  if (prev && voluntary && !cpu.resched.seen) return ts;
  if (prev_pid >= 0 && cpu.clock_skip_pid >= 0 && prev_pid != cpu.clock_skip_pid) return ts;
  return cpu.rq_clock_ts;
}

// The same, when the previous task's run was accounted by the kernel's increments: the
// run ends where they add up to, since __schedule() accounts it with the clock it
// switches at (its own update, or a reused one). That is more exact than the model's
// instant, which is the sched_wakeup event: a few microseconds after the clock update it
// stands for (the enqueue and the preemption check come in between).
int64_t StateMachine::KernelSwitchTs(const Cpu& cpu, const Thread* prev, bool voluntary, int64_t ts,
                                     int32_t prev_pid, const Thread* accounted_prev) const {
  if (!accounted_prev || accounted_prev->run_start < 0)
    return KernelSwitchTs(cpu, prev, voluntary, ts, prev_pid);
  return std::min(ts, accounted_prev->run_start + accounted_prev->run_ns);
}

// The held segments of `t` ending by `before` become final; the rest stay held from there.
// In place: this runs at about every switch, and rebuilding the vector cost a tenth of a
// report's time.
void StateMachine::ReleaseHeld(Thread& t, int64_t before) {
  if (t.settle_in_from >= 0 || t.settle_out_from >= 0) return;  // not final yet
  Thread::SegmentList& held = t.held_segments;
  t.held_from = before == INT64_MAX ? -1 : before;
  // Read once: the observers EmitSegmentNow calls could, for all the compiler knows,
  // change the list, so it would reload both at every step.
  Thread::Segment* const segs = held.begin();
  const size_t n = held.size();
  size_t kept = 0;
  size_t i = 0;
  // The usual case first (the syscall state known, no observer of plain segments): the
  // leading segments released whole, none an interrupt's, only add to the thread's times,
  // what EmitSegmentNow would do for them without its checks at every segment.
  if (t.syscall != kSyscallUnknown && On(Hook::kStateSegment).empty()) [[likely]] {
    for (; i < n; ++i) {
      const Thread::Segment& seg = segs[i];
      if (seg.end > before || seg.state == Microstate::kIrq || seg.state == Microstate::kSoftirq)
        break;
      t.times[static_cast<size_t>(seg.state)] += seg.end - seg.start;
    }
  }
  for (; i < n; ++i) {
    const Thread::Segment seg = segs[i];
    if (seg.end <= before) {
      EmitSegmentNow(t, seg.state, seg.abstract, seg.cpu, seg.start, seg.end);
    } else if (seg.start < before) {
      EmitSegmentNow(t, seg.state, seg.abstract, seg.cpu, seg.start, before);
      segs[kept++] = {seg.state, seg.abstract, seg.cpu, before, seg.end};
    } else {
      segs[kept++] = seg;
    }
  }
  held.truncate(kept);
}

// At the switch-out traced at `ts` (the new state already begun there): the kernel's
// switch came at `kernel_ts`, so what was held from then on belongs to the new state.
void StateMachine::RewindHeld(Thread& t, int64_t kernel_ts, int64_t ts, Thread* settled_by) {
  if (t.settles_out_of) {  // it ran without an increment: the model's instant stays
    SettleOut(*t.settles_out_of, -1);
    t.settles_out_of = nullptr;
  }
  if (t.held_from < 0) return;
  if (t.settle_in_from >= 0) SettleIn(t, t.settle_in_from);
  const bool by_increments = t.run_start >= 0;
  const int64_t from = std::clamp(kernel_ts, t.held_from, ts);
  // An increment a reschedule IPI assumed missing may not have been (the wakeup that sent
  // it did its own, seen, remote update): the switch may be as early as the last seen one.
  int64_t earliest = by_increments && t.run_ns_before_ipi >= 0
                         ? std::clamp(t.run_start + t.run_ns_before_ipi, t.held_from, from)
                         : from;
  // A pending gap: if the last increment's event was late, the switch came at its clock.
  const bool gap = by_increments && t.gap_from >= 0;
  if (gap) earliest = std::min(earliest, std::clamp(t.gap_clock_end, t.held_from, from));
  t.run_start = -1;
  t.run_ns = 0;
  t.run_ns_before_ipi = -1;
  ReleaseHeld(t, earliest);
  t.placement.out_early_ns += ts - from;
  if (by_increments && settled_by && caps_.stat_runtime && earliest < ts) {
    // What ran in [earliest, ts] stays held until `settled_by` tells where in it the
    // kernel switched (SettleOut); the new state is in progress from ts until then.
    if (settled_by->settles_out_of) SettleOut(*settled_by->settles_out_of, -1);
    t.settle_out_gap = gap;
    t.settle_out_from = earliest;
    t.settle_out_to = ts;
    t.settle_out_default = from;
    t.settle_out_after = {t.state, t.abstract, t.cpu, ts, 0};
    settled_by->settles_out_of = &t;
    return;
  }
  if (gap) ConfirmGap(t, INT64_MAX);
  ReleaseHeld(t, from);
  t.held_segments.clear();
  t.held_from = -1;
  if (from < ts) t.since = from;
}

// The kernel switched `t` out at `end` (clamped to its settle window; -1: unknown, the
// model's instant): held running time after it belongs to the state it switched out to.
void StateMachine::SettleOut(Thread& t, int64_t end) {
  if (t.settle_out_from < 0) return;
  end = end < 0 ? t.settle_out_default : std::clamp(end, t.settle_out_from, t.settle_out_to);
  if (t.settle_out_gap) {  // the run ran on past its last increment's clock up to here
    ConfirmGap(t, end);
    t.settle_out_gap = false;
  }
  t.placement.out_early_ns -= end - t.settle_out_default;
  t.settle_out_from = -1;
  if (t.settle_in_from >= 0) {  // its switch-in is not settled yet: all stays held
    RelabelHeld(t, end, t.settle_out_to, t.settle_out_after);
    return;
  }
  ReleaseHeldRelabelled(t, end, t.settle_out_to, t.settle_out_after);
}

// RelabelHeld and then ReleaseHeld of all, in one pass: the same segments, in the same
// order, without building the relabelled list (SettleOut does this at about every
// preemption).
void StateMachine::ReleaseHeldRelabelled(Thread& t, int64_t from, int64_t to,
                                         const Thread::Segment& as) {
  Thread::SegmentList& held = t.held_segments;
  t.held_from = -1;
  const Thread::Segment* const segs = held.begin();  // (read once, as in ReleaseHeld)
  const size_t n = held.size();
  for (size_t i = 0; i < n; ++i)
    RelabelledPieces(segs[i], from, to, as, [&](const Thread::Segment& p) {
      EmitSegmentNow(t, p.state, p.abstract, p.cpu, p.start, p.end);
    });
  held.truncate(0);
}

// `t` ran on its CPU and another task now shows there with no sched_switch recorded for
// `t` (the kernel omits the switch-outs of some tasks): its run ended at the kernel's last
// update of it (its increments), or here without them. What it switched out to, a sleep
// or a preemption, shows next (EmitUntracedSwitchOut); until then its state is unknown.
void StateMachine::NoteUntracedSwitchOut(Thread& t, int64_t ts) {
  Flag(Anomaly::kMissingSwitchOut, &t);
  ++t.placement.untraced_switch_outs;
  const int64_t end = t.run_start >= 0 ? std::min(t.run_start + t.run_ns, ts) : ts;
  Transition(t, Microstate::kUnknown, AbstractState::kNone, ts);
  RewindHeld(t, end, ts);
  t.on_cpu = false;
  t.untraced_out_ts = t.since;
  t.untraced_out_cpu = t.cpu;
}

// `t` is woken again, queued since its last wakeup by the trace: only a sleeping task can be
// woken (a queued one is TASK_RUNNING and matches no wakeup), so it ran and slept again
// with none of it recorded (the kernel traces nothing of some tasks but their wakeups).
// What it did since the last wakeup is unknown; its voluntary switch comes now.
void StateMachine::NoteUntracedRun(Thread& t) {
  Flag(Anomaly::kMissingSwitchOut, &t);
  ++t.placement.untraced_switch_ins;
  ++t.placement.untraced_switch_outs;
  t.state = Microstate::kUnknown;  // the open segment since that wakeup
  t.untraced_out_ts = cur_ts_;
  t.untraced_out_cpu = t.cpu;
}

// The switch NoteUntracedSwitchOut placed: voluntary when a wakeup of the thread came
// next (it had gone to sleep), involuntary when it ran again without one.
void StateMachine::EmitUntracedSwitchOut(Thread& t, bool voluntary) {
  if (t.untraced_out_ts < 0) return;
  SwitchEvent sw;
  sw.ts = t.untraced_out_ts;
  sw.cpu = t.untraced_out_cpu;
  sw.prev = &t;
  sw.voluntary = voluntary;
  sw.cause.kind = voluntary ? CauseKind::kSleepUntraced : CauseKind::kPreemptUnknown;
  t.untraced_out_ts = -1;
  EmitSwitch(&t, sw);
}

// After a switch (or a gap in the events): no skip is pending, nothing is held.
void StateMachine::ResetClock(Cpu& cpu) {
  cpu.clock_skip = false;
  cpu.clock_skip_unconfirmed = false;
  Thread* t = cpu.current_known ? cpu.current : nullptr;
  if (t && t->on_cpu && t->held_from >= 0) FlushHeld(*t);
}

}  // namespace cstool
