// The state machine that turns scheduler, IRQ and syscall events into microstates
// and cause-labelled switches.
//
// One thread's life, as the events show it (time flows right):
//
//   fork      wakeup_new  switch-in  sys_enter(read)  switch-out S   waking   switch-in  sys_exit
//    |  wait_cpu_wakeup  |   user   |      sys       | sleep (read) |wait_cpu_|   sys    |  user
//    ...
//    |<----------------->|<-------->|<-------------->|<------------>|_wakeup__|<-------->|<-------
//                                                     cause: sleep:read (voluntary)
//
//   ... user  | irq_entry  irq_exit |  user | tick sets need-resched | switch-out R
//             |<------ irq -------->|       |                        |  wait_cpu_preempted ...
//                                                     cause: preempt:tick, preempted_at: irq_return
//
//   ... sys_enter(exit_group)  sched_process_exit  switch-out Z  ...  parent's wait4() returns
//              sys                                 |<---- zombie ---->|  its pid: reaped (lifetime
//                                                                         ends; or
//                                                                         sched_process_free)
//
// Per CPU we keep the current task, the interrupt stack (hardirq/vector/softirq/NMI)
// and what last asked for a reschedule; per thread its microstate and since when, the
// syscall it is in, and the CPU it runs or waits on. A thread that was already alive
// when the trace began is `unknown` until its first event, and while nothing has shown
// yet whether it is inside a syscall its on-CPU and sleep time waits for the answer
// (Resolve) instead of being guessed.
//
// This file dispatches the events; each rule lives with its concern:
//   thread_tracker      which thread a tid names, tgids, who is followed
//   cause_attribution   why a switch happened, which sleep a thread sleeps in
//   irq_nesting         the interrupts in progress on each CPU
//   switch_placement    where the kernel's accounting puts each switch
//   syscall_resolution  what waits for a thread's syscall to become known
//   attach_seed         threads alive before the trace, from /proc
#include "sched/state_machine.h"

#include <fmt/core.h>

#include <algorithm>
#include <utility>

#include "sched/state_machine_inl.h"

namespace cstool {
namespace {

// Asleep (interruptible or not), even while which sleep is not resolved yet; not stopped.
bool Asleep(const Thread& t) {
  return (IsSleeping(t.state) && t.state != Microstate::kStopped) ||
         (t.state == Microstate::kUnknown && (t.abstract == AbstractState::kSleepInterruptible ||
                                              t.abstract == AbstractState::kSleepUninterruptible));
}

}  // namespace

StateMachine::StateMachine(const SyscallTable& syscalls, TraceCapabilities caps,
                           TrackingPolicy policy)
    : syscalls_(syscalls),
      causes_(syscalls, caps.page_faults),
      caps_(std::move(caps)),
      follow_all_(policy.all),
      kernel_threads_named_(!policy.kernel_threads.empty()),
      threads_(std::move(policy)),
      increments_complete_(caps_.all_increments) {}

StateMachine::~StateMachine() = default;

Thread& StateMachine::NewThread(int32_t tid, std::string_view comm, int64_t ts, bool in_trace) {
  if (Thread* old = threads_.Find(tid); old && !old->freed) {
    // The old thread's free was not seen: end its lifetime here so the two never merge.
    Flag(Anomaly::kTidReusedWithoutFree, old);
    EndLifetime(*old, ts);
  }
  std::string saved;
  if (comm.empty() && tid > 0 && saved_comm_) [[unlikely]] {
    saved = saved_comm_(tid);
    comm = saved;
  }
  Thread& t = threads_.Add(tid, comm, ts, in_trace);
  if (!caps_.syscalls) t.syscall = kNotInSyscall;
  // Alive unseen until now: its switches may have been among events lost before.
  if (!in_trace && events_lost_) t.lost_touched = true;
  for (Observer* p : On(Hook::kThreadNew)) p->OnThreadNew(t);
  return t;
}

Thread& StateMachine::Lookup(int32_t tid, std::string_view comm) {
  if (Thread* t = threads_.Find(tid)) [[likely]]
    return *t;
  // Alive since before the trace (or before its events reached us): unknown until now.
  return NewThread(tid, comm, first_ts_, false);
}

void StateMachine::BeginAt(int64_t ts) {
  if (first_ts_ >= 0) return;
  first_ts_ = ts;
  // Losses reported before any record (a CPU whose data could not be read at all) began
  // with the trace.
  std::vector<LostEvents> losses = std::exchange(losses_before_start_, {});
  for (LostEvents& e : losses) {
    e.ts = first_ts_;
    PushLostEvents(e);
  }
}

void StateMachine::FirstOnCpu(const EventCommon& c) {
  if (static_cast<size_t>(c.cpu) >= cpus_.size()) cpus_.resize(c.cpu + 1);
  BeginAt(c.ts);
}

// With a pid filter, unfollowed tasks show up only partly (as the other side of a
// switch or a wakeup), and so do the recorder's own untraced threads with -a: surprises
// about them are expected and not counted.
void StateMachine::Flag(Anomaly a, Thread* t, uint64_t n) {
  if (t && !t->tracked) return;
  anomalies_.Add(a, n);
  if (t) t->anomalies.Add(a, n);
  if (anomaly_log_) anomaly_log_(a, cur_ts_, cur_cpu_, t ? t->tid : -1, n);
}

Microstate StateMachine::RunningState(const Thread& t, const Cpu& cpu) const {
  if (cpu.irqs.InHardirq()) return Microstate::kIrq;
  if (cpu.irqs.InAny()) return Microstate::kSoftirq;
  if (t.syscall == kSyscallUnknown || t.syscall == kSyscallAbandoned) return Microstate::kUnknown;
  // (From sched_process_exit on a thread is in do_exit(), and never back in user mode.)
  return IsInSyscall(t.syscall) || t.kernel_thread || t.exiting ? Microstate::kSys
                                                                : Microstate::kUser;
}

void StateMachine::MarkOnCpuChanged(Cpu& cpu, int32_t cpu_id, Thread* t, int64_t ts) {
  // The kernel (6.18) often records no sched_switch when an idle CPU picks up a woken
  // task; its own events show it is running. The kernel switched at the wakeup's clock.
  int64_t in_ts = ts;
  if (t && !t->on_cpu && cpu.current_known && cpu.current == nullptr) {
    Flag(Anomaly::kMissingSwitchFromIdle, t);
    ++t->placement.untraced_switch_ins;
    in_ts = std::max(KernelSwitchTs(cpu, nullptr, false, ts, -1), t->since);
    // Woken from another CPU with no sched_wakeup after its sched_waking: the idle CPU
    // queued it in the same untraced stretch (the wakelist, processed in idle), at the
    // clock it then switched with, so no run delay before the switch.
    if (t->waking_unqueued && IsWaitingForCpu(t->state)) NoteEnqueued(*t, in_ts);
    ResetClock(cpu);
  } else if (t && cpu.current_known && cpu.current && cpu.current != t) {
    ReplaceUntracedCurrent(cpu, cpu_id, ts);
  }
  SetCurrent(cpu, cpu_id, t, true, ts);  // the CPU's view: what the trace shows ran there
  if (!t) return;
  const bool starts_run = !t->on_cpu;
  if (open_lost_gaps_ > 0 && starts_run && t->cpu != cpu_id) [[unlikely]]
    ForgetWaitInLostGap(*t);
  if (starts_run) {
    if (t->state != Microstate::kUnknown && !IsWaitingForCpu(t->state))
      Flag(Anomaly::kEventFromSleepingThread, t);
    if (events_lost_ && Asleep(*t)) [[unlikely]]
      ForgetSleepAcrossLostGap(*t, in_ts);
    t->on_cpu = true;
  }
  t->cpu = cpu_id;
  Microstate s = RunningState(*t, cpu);
  AbstractState a = s == Microstate::kUnknown ? AbstractState::kRunning : AbstractState::kNone;
  if (starts_run) {
    StartRun(*t, s, a, in_ts, ts);
  } else if (s != t->state || a != t->abstract) {
    Transition(*t, s, a, ts);
  }
}

// `wakee`, runnable since sched_waking, was queued at `enqueued`: its run delay starts
// there (what came before is the wakeup's own path, which the kernel counts as sleep).
void StateMachine::NoteEnqueued(Thread& wakee, int64_t enqueued, const EnqueueDating& dating) {
  // A move while asleep queued it already: the kernel's run delay runs from there.
  if (wakee.moved_asleep_at >= 0)
    wakee.placement.asleep_queued_ns += enqueued - wakee.moved_asleep_at;
  wakee.placement.asleep_maybe_queued_ns += wakee.maybe_moved_asleep_ns;
  for (Observer* p : On(Hook::kEnqueued)) p->OnEnqueued(wakee, wakee.since, enqueued, dating);
  wakee.waking_unqueued = false;
  wakee.moved_asleep_at = -1;
  wakee.maybe_moved_asleep_ns = 0;
}

// A CPU began queueing the tasks other CPUs woke for it: in the trace (-a) among the other
// cross-CPU calls, or in the unfiltered buffer (pid-filtered), where it is not this CPU's
// current task's event. Either way it only dates the enqueues whose sched_wakeup follows.
void StateMachine::PushCsdFunctionEntry(const CsdFunctionEntry& e, int type_id) {
  PushOtherEvent(e.c, type_id);
  if (caps_.wakelist_function != 0 && e.func == caps_.wakelist_function) NoteWakelistFlush(e);
}

// The buffer's are the function's calls alone (`record` filters them by its address).
void StateMachine::PushUnfilteredWakelistFlush(const CsdFunctionEntry& e) {
  EnterUnfiltered(e.c);
  if (caps_.wakelist_function == 0 || e.func == caps_.wakelist_function) NoteWakelistFlush(e);
}

void StateMachine::NoteWakelistFlush(const CsdFunctionEntry& e) {
  ++wakelist_flushes_;
  if (e.c.cpu >= 0 && static_cast<size_t>(e.c.cpu) < cpus_.size())
    cpus_[static_cast<size_t>(e.c.cpu)].wakelist_flush_ts = e.c.ts;
}

// A wakeup traced at `ts` queued `wakee` on `target_cpu` with that runqueue's clock, read
// just before; the preemption check that follows accounts the target's current task (not
// the wakee, which may have run there until it slept) with that clock, so its increment,
// when there is one since the wakee's sleep, tells the instant better than the event's time.
int64_t StateMachine::EnqueueClock(int32_t target_cpu, const Thread& wakee, int64_t ts) const {
  if (target_cpu < 0 || static_cast<size_t>(target_cpu) >= cpus_.size()) return ts;
  const Cpu& target = cpus_[target_cpu];
  const bool of_another = target.accounted != &wakee;
  return of_another && target.accounted_ts >= wakee.since && target.accounted_ts < ts
             ? target.accounted_ts
             : ts;
}

// Another task shows on `cpu` while its current one, a followed thread, still runs there
// by the trace: the kernel switched that one out without a sched_switch. A followed
// task's switch-out is recorded whatever the pid filter (it is the switch's prev), so
// this is the kernel's omission, not the filter's.
bool StateMachine::ReplaceUntracedCurrent(Cpu& cpu, int32_t cpu_id, int64_t ts) {
  Thread* old = cpu.current;
  if (!old || !old->tracked || !old->on_cpu || old->cpu != cpu_id) return false;
  NoteUntracedSwitchOut(*old, ts);
  return true;
}

// An interrupt of the idle task: where the trace records every task's events (no pid
// filter), the CPU runs idle, and a followed task the model still has running there went
// to sleep with no switch recorded (this kernel records none for some tasks). Else its
// run would go on, and take the idle CPU's interrupts as its own irq time. (Not an NMI: one
// may come inside a switch, before the current task changes.)
void StateMachine::NoteIdleEvent(Cpu& cpu, const EventCommon& c) {
  if (!follow_all_ || (c.flags & kFlagNmi) || !cpu.current_known) return;
  if (ReplaceUntracedCurrent(cpu, c.cpu, c.ts)) SetCurrent(cpu, c.cpu, nullptr, true, c.ts);
}

// Every change of a CPU's current task goes through here, so that the observers see
// them all, in time order (OnCpuCurrent).
void StateMachine::SetCurrent(Cpu& cpu, int32_t cpu_id, Thread* t, bool known, int64_t ts,
                              const SwitchEvent* sw, bool cause_pending) {
  const bool changed = cpu.current_known != known || (known && cpu.current != t);
  cpu.current_known = known;
  cpu.current = t;
  if (!changed) return;
  CpuCurrentEvent e{ts, cpu_id, known ? t : nullptr, known, sw, cause_pending};
  for (Observer* p : On(Hook::kCpuCurrent)) p->OnCpuCurrent(e);
}

void StateMachine::PushSchedSwitch(const SchedSwitch& e) {
  Cpu& cpu = Enter(e.c);
  const int64_t ts = e.c.ts;
  Thread* prev = e.prev_pid != 0 ? &OwnThread(cpu, e.prev_pid, e.prev_comm) : nullptr;
  Thread* next = e.next_pid != 0 ? &Lookup(e.next_pid, e.next_comm) : nullptr;
  // Without task_rename, an exec's new name shows first at the task's next switch.
  if (!caps_.renames && prev && prev->comm != e.prev_comm) [[unlikely]]
    prev->comm = std::string(e.prev_comm);
  // With a pid filter, switches between two unfollowed tasks are not recorded, so the
  // believed current may be stale; only a followed task on either side is a surprise.
  if (cpu.current_known && cpu.current == nullptr && prev && !prev->on_cpu) {
    Flag(Anomaly::kMissingSwitchFromIdle, prev);
  } else if (cpu.current_known && cpu.current != prev &&
             !ReplaceUntracedCurrent(cpu, e.c.cpu, ts) &&
             (follow_all_ || (prev && prev->tracked) || (cpu.current && cpu.current->tracked))) {
    Flag(Anomaly::kSwitchOutNotCurrent, prev && prev->tracked ? prev : cpu.current);
  }

  SwitchEvent sw;
  sw.ts = ts;
  sw.cpu = e.c.cpu;
  sw.prev = prev;
  sw.next = next;
  sw.voluntary = e.prev_state != 0 && !e.prev_preempted;
  const bool sleeps =
      sw.voluntary && (e.prev_state & (kStateInterruptible | kStateUninterruptible));
  cpu.sleep_switch_prev = sleeps ? prev : nullptr;
  cpu.sleep_switch_ts = ts;
  // An unfollowed (or untraced) prev's increments show only when a followed task's
  // context did them: their sum tells its switch only when it is that recent and the
  // switch a preemption (the waker's update, then the reused clock); its own update at a
  // voluntary switch is not in the trace.
  const bool prev_accounted =
      prev && (prev->tracked || (!sw.voluntary && prev->run_start >= 0 &&
                                 prev->run_start + prev->run_ns >= ts - kMaxIpiDelayNs));
  if (prev && prev->tracked && sw.voluntary && caps_.stat_runtime && !follow_all_)
    NoteEnqueueInFlight(*prev, e.c.cpu, ts);
  const int64_t kernel_ts =
      KernelSwitchTs(cpu, prev, sw.voluntary, ts, e.prev_pid, prev_accounted ? prev : nullptr);
  int64_t switch_ts = kernel_ts;  // where the kernel switched, as placed below
  if (prev) {
    if (!prev->on_cpu) {
      // First sight, or its switch-in was lost: it ran until now. A switch-out inferred
      // before that was a preemption (it ran again with no wakeup).
      EmitUntracedSwitchOut(*prev, false);
      if (prev->state != Microstate::kUnknown) Flag(Anomaly::kEventFromSleepingThread, prev);
      prev->on_cpu = true;
      Microstate s = RunningState(*prev, cpu);
      Transition(*prev, s,
                 s == Microstate::kUnknown ? AbstractState::kRunning : AbstractState::kNone, ts);
    }
    if (sw.voluntary) {
      // A waking before its last change of state did not end this sleep.
      if (prev->early_waker != nullptr && prev->early_waking_ts < prev->since)
        prev->early_waker = nullptr;
      sw.cause = causes_.Voluntary(e.prev_state, *prev);
      AbstractState abstract;
      Microstate s = causes_.SleepState(e.prev_state, *prev, &abstract);
      if (sw.cause.kind == CauseKind::kExit) {
        s = Microstate::kZombie, abstract = AbstractState::kNone;
        prev->exit_switch_ts = ts;
      }
      Transition(*prev, s, abstract, ts);
      // It runs no more: its exit_group (or exit) ends here, not when its parent reaps it,
      // which would count the zombie's wait as time inside the syscall.
      if (sw.cause.kind == CauseKind::kExit && prev->syscall >= 0) CloseOpenSyscall(*prev, ts);
      // After a gap in its increments, the next task's first increment tells whether the
      // last one's event was late (the switch came at its clock) or the clock stood still.
      RewindHeld(*prev, kernel_ts, ts,
                 prev->gap_from >= 0 && next != nullptr && next != prev ? next : nullptr);
      if (sw.cause.kind == CauseKind::kSleepSyscall)
        for (Observer* p : On(Hook::kSyscallBlocked)) p->OnSyscallBlocked(*prev, prev->syscall);
      // X: released already (an auto-reaped thread); its life ends with this switch.
      // Z waits for its parent, until sched_process_free.
      if (e.prev_state & kStateDead) EndLifetime(*prev, ts);
    } else {
      // R without "+" happens only on the way back to user mode: that settles a
      // pending user/sys question.
      if (!e.prev_preempted && prev->syscall == kSyscallUnknown && caps_.syscalls)
        Resolve(*prev, kNotInSyscall);
      sw.cause = causes_.Involuntary(*prev, e.next_comm, cpu.resched);
      sw.preempted_at = CauseAttribution::Where(e.prev_preempted, *prev, cpu.last_event);
      Transition(*prev, Microstate::kWaitCpuPreempted, AbstractState::kNone, ts);
      // A gap closed by the switch's own increment (__schedule()'s, just before it) is
      // steal, or that increment was computed with a reused clock: a wakeup the trace did
      // not see asked for the reschedule long before, and the task ran on to its next
      // preemption point (PREEMPT_NONE: the rest of an execve, say). With an unfollowed
      // next task nothing in the file tells (its increments are not in it): the kernel
      // switched at that clock, as its run delay showed for the exec'ing thread of each
      // workload (0.05-0.3 ms each). With a followed one the gap stays steal, and so it
      // does when a tick's increment closed it (its clock fresh; the switch it caused
      // then reused that clock, with no increment of its own).
      Thread* settled_by = next != nullptr && next != prev ? next : nullptr;
      const int64_t gapped_event = prev->gap_clock_end + prev->gap_ns + kIncrementLagNs;
      if (prev->gap_from >= 0 && !prev->gap_clock_fresh && next != nullptr && !next->tracked &&
          ts - gapped_event <= kMaxIpiDelayNs) {
        switch_ts = std::min(kernel_ts, prev->gap_clock_end);
        prev->gap_from = -1;
        settled_by = nullptr;  // the switch is placed
      } else if (prev->gap_from >= 0) {
        ConfirmGap(*prev, INT64_MAX);
      }
      // A preemption's last increment may be missing (done from an unfollowed task's
      // context that then asked for the reschedule); the next task's first increment
      // tells the clock both switched at.
      RewindHeld(*prev, switch_ts, ts, settled_by);
    }
    prev->on_cpu = false;
    // A preemption in the kernel ("R+") may be in the fault handler, whose sleep is still
    // to come, and a fault may sleep in D more than once (the page's read, then its lock);
    // another sleep or a preemption on the way back to user mode ends it.
    const bool in_fault_still =
        sw.voluntary ? (e.prev_state & kStateUninterruptible) != 0 : e.prev_preempted;
    if (!in_fault_still) prev->fault_pending = false;
  }
  const bool cause_pending = EmitSwitch(prev, sw);

  cpu.resched.Reset();
  cpu.last_event = LastEvent::kOther;
  ResetClock(cpu);
  cpu.rq_clock_ts = switch_ts;
  const int64_t in_ts = next ? std::max(switch_ts, next->since) : switch_ts;
  // The CPU's view (OnCpuCurrent) is what the trace shows ran there; the threads' times
  // are the kernel's (Thread::placement holds the difference).
  SetCurrent(cpu, e.c.cpu, next, true, ts, &sw, cause_pending);
  if (next == nullptr && open_lost_gaps_ > 0) [[unlikely]]
    LeaveIdleCpu(e.c.cpu, ts);
  if (next) {
    // The CPU it last showed on (its switch-out lost there, or never recorded, as this
    // kernel leaves out some) no longer runs it: what does is unknown.
    if (next->cpu >= 0 && next->cpu != e.c.cpu && static_cast<size_t>(next->cpu) < cpus_.size() &&
        cpus_[next->cpu].current == next && cpus_[next->cpu].current_known)
      SetCurrent(cpus_[next->cpu], next->cpu, next, false, ts);
    if (next->on_cpu) {
      // (Its switch-out may have been among events lost there.)
      if (next->lost_gap_at < 0) Flag(Anomaly::kSwitchInAlreadyOnCpu, next);
    } else if (events_lost_ && Asleep(*next) && (caps_.waking || caps_.wakeup) &&
               ForgetSleepAcrossLostGap(*next, in_ts)) [[unlikely]] {
      // Its wakeup may have been among events lost meanwhile: unknown since (the rule).
    } else if (IsSleeping(next->state) && next->state != Microstate::kStopped &&
               (caps_.waking || caps_.wakeup)) {
      // Switched in with no wakeup (and none lost): schedule() found a signal pending
      // and kept it on the runqueue. It was waiting for a CPU all along. (A trace
      // without wakeup events cannot tell when a sleep ended: it lasts to here.)
      Flag(Anomaly::kSwitchInWithoutWakeup, next);
      next->state = Microstate::kWaitCpuPreempted;
    }
    if (next->comm != e.next_comm) next->comm = std::string(e.next_comm);
    if (open_lost_gaps_ > 0 && next->cpu != e.c.cpu) [[unlikely]]
      ForgetWaitInLostGap(*next);
    next->on_cpu = true;
    next->cpu = e.c.cpu;
    Microstate s = RunningState(*next, cpu);
    StartRun(*next, s, s == Microstate::kUnknown ? AbstractState::kRunning : AbstractState::kNone,
             in_ts, ts);
  }
}

void StateMachine::PushSchedWakeup(const SchedWakeup& e) {
  // sched_wakeup is emitted after the wakeup-preemption check, so its own flags may
  // already show the need-resched this very wakeup set: note them after the candidate.
  Cpu& cpu = Enter(e.c, /*note_flags=*/false);
  if (e.kind == WakeupKind::kWakeupNew) wakeup_new_seen_ = true;
  const bool from_irq = e.c.flags & (kFlagHardirq | kFlagSoftirq | kFlagNmi);
  if (!from_irq && e.c.pid != 0) {
    Thread& waker = OwnThread(cpu, e.c.pid);
    MarkOnCpu(cpu, e.c.cpu, &waker, e.c.ts);
    if (waker.gap_from >= 0 && e.kind != WakeupKind::kWaking && e.target_cpu == e.c.cpu)
      NoteWakeupIncrement(waker, Lookup(e.pid, e.comm));
    // A dying thread's wakeup of the listener: taskstats_exit() right after it sampled
    // the thread's accounting.
    if (waker.exit_accounting_pending && waker.exit_record_ts < 0) {
      if (WakesExitListener(waker, e.pid)) NoteExitRecord(waker, e.c.ts);
    } else if (waker.syscall == kNotInSyscall && waker.signal_exit_wakeup_ts < 0 &&
               caps_.stat_runtime && caps_.syscalls && !waker.kernel_thread &&
               WakesExitListener(waker, e.pid)) [[unlikely]] {
      NoteSignalExitCandidate(waker, e.c.ts);
    }
  } else if (from_irq && !(e.c.flags & kFlagNmi)) {
    // An interrupt's event names the task it interrupted: with a pid filter, often the
    // only sign that another task took the CPU from the one last switched in; pid 0, that
    // the CPU had gone idle (an unfollowed task's switch to idle is filtered out, a
    // followed one's is not). (An NMI may hit inside a switch, before current changes.)
    if (e.c.pid != 0) {
      NoteEventTask(cpu, e.c);
    } else if (cpu.current_known && cpu.current != nullptr && !cpu.current->tracked) {
      SetCurrent(cpu, e.c.cpu, nullptr, true, e.c.ts);
    }
  }
  cpu.last_event = LastEvent::kOther;
  Thread& wakee = Lookup(e.pid, e.comm);
  const int64_t waking_ts = wakee.waking_unqueued && !wakee.on_cpu ? wakee.since : -1;
  // Every waking, even of a task the model still has waiting (its sched_wakeup was not
  // seen): the enqueue that follows belongs to the latest.
  if (e.kind == WakeupKind::kWaking && !wakee.on_cpu) {
    wakee.waking_at = e.c.ts;
    wakee.waking_cpu = e.c.cpu;
  }
  if (wakee.on_cpu) {
    // (A sched_wakeup while it runs: ttwu found it runnable, no waking is pending.)
    wakee.early_waker =
        e.kind != WakeupKind::kWaking || from_irq || !cpu.current_known ? nullptr : cpu.current;
    wakee.early_waking_ts = e.c.ts;
  }

  // The wakee becomes runnable at sched_waking (the first sign), or at sched_wakeup
  // when the trace has no sched_waking.
  // sched_waking of a task still on its CPU (it is about to sleep) is followed by its
  // switch-out and then by sched_wakeup once it is off the CPU: then the wakeup is
  // what makes it runnable.
  // Woken again while queued by the trace: it ran unseen. Whether it also slept again or
  // is still running towards sleep (a wakeup before its schedule(), no switch) the trace
  // cannot tell for a task it shows running otherwise (this kernel leaves out switches
  // from idle, and the task's own events may all be in the kernel); for a task it never
  // saw run, or whose switch-outs it misses, it did sleep. So did a task outside a
  // pid-filtered recording, whose switches the trace has only to and from a followed task,
  // whether it was queued by a wakeup or by a preemption; and so did one woken onto a CPU
  // the recording left out (record -C).
  const bool runs_unseen = RunsUnseen(wakee) || wakee.woken_onto_untraced_cpu;
  const bool queued = wakee.state == Microstate::kWaitCpuWakeup ||
                      (runs_unseen && wakee.state == Microstate::kWaitCpuPreempted) ||
                      (wakee.state == Microstate::kUnknown && wakee.woken_onto_untraced_cpu);
  if (!wakee.on_cpu && queued && !wakee.waking_unqueued && e.kind != WakeupKind::kWakeupNew &&
      (e.kind == WakeupKind::kWaking || !caps_.waking) &&
      (runs_unseen ||
       (wakee.tracked && (!wakee.seen_running || wakee.placement.untraced_switch_outs > 0))))
    NoteUntracedRun(wakee);
  // Woken while the trace shows it preempted and queued: the preemption came after it set
  // a sleep state (a runnable task passes no wakeup), and it stays queued, now runnable.
  if (!wakee.on_cpu && !runs_unseen && wakee.state == Microstate::kWaitCpuPreempted &&
      (e.kind == WakeupKind::kWaking || (!caps_.waking && e.kind == WakeupKind::kWakeup))) {
    for (Observer* p : On(Hook::kWokenWhilePreempted))
      p->OnWokenWhilePreempted(wakee, wakee.since, e.c.ts);
  }
  // sched_waking names the CPU the task is on before the wakeup picks one: another CPU
  // than it slept on, with no move in the trace, means an untraced move while asleep.
  if (e.kind == WakeupKind::kWaking && !wakee.on_cpu && Asleep(wakee) &&
      wakee.moved_asleep_at < 0 && wakee.cpu >= 0 && e.target_cpu >= 0 &&
      e.target_cpu != wakee.cpu && wakee.seen_running)
    wakee.maybe_moved_asleep_ns = e.c.ts - wakee.since;
  if (!wakee.on_cpu && (!IsWaitingForCpu(wakee.state) || e.kind == WakeupKind::kWakeupNew)) {
    EmitUntracedSwitchOut(wakee, true);  // woken: it had gone to sleep
    const Microstate blocked_state = wakee.state;
    const int64_t blocked_since = wakee.since;
    // A sched_wakeup that makes it runnable (its sched_waking came while it still ran, or
    // the trace has none) is its enqueue, dated like any other.
    const int64_t runnable_at =
        e.kind == WakeupKind::kWakeup ? EnqueueClock(e.target_cpu, wakee, e.c.ts) : e.c.ts;
    // Born now (PushSchedProcessFork), unless something already began its states.
    if (e.kind == WakeupKind::kWakeupNew && LifeNotBegun(wakee) && runnable_at > wakee.since)
      BeginLifeAt(wakee, runnable_at);
    wakee.awaits_first_wakeup = false;
    Transition(wakee, Microstate::kWaitCpuWakeup, AbstractState::kNone, runnable_at);
    wakee.waking_unqueued = e.kind == WakeupKind::kWaking;
    const Thread* waker = from_irq || !cpu.current_known ? nullptr : cpu.current;
    if (waker != nullptr && waker->exiting && waker->tid == waker->tgid &&
        wakee.tgid == waker->tid && syscalls_.Class(wakee.syscall) == SyscallClass::kExec)
        [[unlikely]]
      woken_exec_waiters_.push_back({waker->tid, &wakee});
    bool by_irq = from_irq;
    bool waker_known = cpu.current_known;
    int64_t waker_ts = e.c.ts;
    // This completes a wakeup a task began while the wakee still ran: that task's.
    if (e.kind == WakeupKind::kWakeup && wakee.early_waker != nullptr) {
      waker = wakee.early_waker;
      by_irq = false;
      waker_known = true;
      waker_ts = wakee.early_waking_ts;
    }
    wakee.early_waker = nullptr;
    wakee.last_waker = waker ? waker->id : UINT32_MAX;
    WakeupEvent w{
        e.c.ts, e.c.cpu, e.target_cpu, waker, &wakee, by_irq, e.kind == WakeupKind::kWakeupNew};
    if (by_irq) {
      const std::string* name = cpu.irqs.InnermostName();
      w.irq_source = name                              ? std::string_view(*name)
                     : (e.c.flags & kFlagNmi)          ? "nmi"
                     : (e.c.flags & kFlagHardirq) != 0 ? "irq"
                                                       : "softirq";
    }
    w.waker_known = waker_known;
    w.waker_ts = waker_ts;
    w.blocked_state = blocked_state;
    w.blocked_since = blocked_since;
    for (Observer* p : On(Hook::kWakeup)) p->OnWakeup(w);
  } else if (e.kind == WakeupKind::kWakeup && wakee.waking_unqueued && !wakee.on_cpu &&
             wakee.state == Microstate::kWaitCpuWakeup) {
    const int64_t enqueued = EnqueueClock(e.target_cpu, wakee, e.c.ts);
    // Every flush is in the file only while nothing was lost (either buffer).
    EnqueueDating dating{.at_event = enqueued == e.c.ts,
                         .flushes_traced = caps_.wakelist_function != 0 && increments_complete_};
    // Dated by its own event alone: a wakelist flush here since the waking is where the
    // enqueue began, and its clock was read no earlier.
    const int64_t flush = cpu.wakelist_flush_ts;
    if (dating.at_event && flush > wakee.since && flush <= e.c.ts) {
      dating.flush_ts = flush;
      ++enqueues_after_flush_;
    } else if (dating.at_event && wakee.waking_cpu == e.c.cpu) {
      // Its sched_waking here began the same call, which read the clock in between.
      dating.waking_ts = wakee.waking_at;
    }
    NoteEnqueued(wakee, enqueued, dating);
  }
  const bool valid_target = e.target_cpu >= 0 && e.target_cpu < kMaxCpuId;
  if (!wakee.on_cpu && valid_target) wakee.cpu = e.target_cpu;

  // sched_wakeup carries the CPU the wakee was queued on; a reschedule it causes is
  // requested there (by IPI when that is another CPU).
  bool places_task = e.kind != WakeupKind::kWaking || !caps_.wakeup;
  // Whether the pid filter let this context's own events through (before the resize
  // below, which may move `cpu`).
  const bool context_followed =
      follow_all_ || (cpu.current_known && cpu.current && cpu.current->tracked);
  if (places_task && !wakee.on_cpu && IsWaitingForCpu(wakee.state) &&
      caps_.CpuUntraced(e.target_cpu)) [[unlikely]]
    QueuedOnUntracedCpu(wakee, e.c.ts, /*woken=*/true);
  if (e.kind == WakeupKind::kWaking && caps_.stat_runtime && !context_followed) {
    cpu.filtered_waking_ts = e.c.ts;
    cpu.filtered_waking_target = e.target_cpu;
  } else if (places_task) {
    cpu.filtered_waking_ts = -1;
  }
  if (places_task && valid_target) {
    if (static_cast<size_t>(e.target_cpu) >= cpus_.size()) cpus_.resize(e.target_cpu + 1);
    Cpu& target = cpus_[e.target_cpu];
    target.resched.candidate = from_irq ? CauseKind::kPreemptIrq : CauseKind::kPreemptWakeup;
    // Queueing the task read the target's runqueue clock just before this event. Whether
    // need-resched is set there now (wakeup_preempt() then skips the next clock update):
    // this event's own flags when the target is this CPU; an idle target always is
    // preempted; otherwise the target's next flags tell.
    if (e.target_cpu != e.c.cpu && caps_.stat_runtime && !context_followed)
      NoteFilteredRemoteUpdate(target, e.target_cpu, waking_ts, e.c.ts,
                               e.kind == WakeupKind::kWaking);
    NoteRqClock(target, e.c.ts);
    if (e.target_cpu == e.c.cpu
            ? (e.c.flags & kFlagNeedResched) != 0
            : (target.current_known && target.current == nullptr) || target.resched.seen) {
      // (What runs on another CPU the trace may not show: a pid filter leaves out the
      // switches between unfollowed tasks.)
      RequestClockSkip(target, e.target_cpu == e.c.cpu ? e.c.pid : -1);
    } else if (e.target_cpu != e.c.cpu) {
      target.clock_skip_unconfirmed = true;
    }
  }
  NoteFlags(cpus_[e.c.cpu], e.c.flags, e.c.pid);
}

// Queued on a CPU the recording left out (record -C): whether it waits, runs or sleeps
// there the trace cannot tell, until its next event on a recorded CPU. (It had shown as
// waiting for a CPU all the while: 95-100 % of a ping-pong's life on the unrecorded CPU.)
void StateMachine::QueuedOnUntracedCpu(Thread& t, int64_t ts, bool woken) {
  if (t.held_from >= 0) FlushHeld(t);
  Transition(t, Microstate::kUnknown, AbstractState::kNone, std::max(ts, t.since));
  t.woken_onto_untraced_cpu = woken;
}

void StateMachine::PushSchedMigrateTask(const SchedMigrateTask& e) {
  const int64_t prev_ts = LastRecordTs(e.c.cpu);
  Cpu& cpu = Enter(e.c);
  Thread& t = Lookup(e.pid, e.comm);
  NoteMoveOfQueued(cpu, e, prev_ts, /*unfiltered=*/false, t.Queued() ? &t : nullptr);
  Migrate(t, e);
}

// A move done in a context the trace leaves out (the unfiltered buffer's): a followed
// thread's, as in the trace; the context itself is not the model's to follow (as with
// PushUnfilteredRuntime), nor is a thread the trace has not named yet.
void StateMachine::PushUnfilteredMigrateTask(const SchedMigrateTask& e) {
  const int64_t prev_ts = LastRecordTs(e.c.cpu);
  Cpu* cpu = EnterUnfiltered(e.c);
  Thread* t = UnfilteredSubject(e.c.pid, e.pid);
  // An unfollowed task's move is part of a batch all the same.
  if (cpu) NoteMoveOfQueued(*cpu, e, prev_ts, /*unfiltered=*/true, t && t->Queued() ? t : nullptr);
  if (t == nullptr) return;
  ++unfiltered_migrations_used_;
  Migrate(*t, e);
}

StateMachine::Cpu* StateMachine::EnterUnfiltered(const EventCommon& c) {
  if (c.cpu < 0 || static_cast<size_t>(c.cpu) >= cpus_.size()) return nullptr;
  Cpu& cpu = cpus_[static_cast<size_t>(c.cpu)];
  cpu.unfiltered_last_ts = c.ts;
  return &cpu;
}

// (last_ts is INT64_MAX in a gap of lost events: no batch goes on across it.)
int64_t StateMachine::LastRecordTs(int32_t cpu_id) const {
  if (cpu_id < 0 || static_cast<size_t>(cpu_id) >= cpus_.size()) return INT64_MIN;
  const Cpu& cpu = cpus_[static_cast<size_t>(cpu_id)];
  return std::max(cpu.last_ts, cpu.unfiltered_last_ts);
}

// The load balancer moves queued tasks in batches (detach_tasks, then attach_tasks): each
// is dequeued with the source runqueue's clock, read before the batch, and queued again
// with the destination's, read after every task of it was detached. The kernel's run
// delay grows on neither side of that gap; the trace shows the moves inside it.
//
//   CPU 1, pulling from CPU 0:
//     clock of rq 0 read  move A   move B   move C  clock of rq 1 read: A, B, C queued
//     |<------------- the run delay of none of A, B, C grows ---------------->|
//                         |<-- at least this much, for each -->|
//
// A batch is the consecutive sched_migrate_task records of one CPU, in either buffer, with
// one source and one destination (a woken task's placement comes after its sched_waking,
// so it is none), each within kBatchMoveGapNs of the one before; each task in it waiting
// for a CPU was off every runqueue from its first move to its last.
void StateMachine::NoteMoveOfQueued(Cpu& cpu, const SchedMigrateTask& e, int64_t prev_ts,
                                    bool unfiltered, Thread* queued) {
  // The moves of one batch come 0-3 us apart, up to 23 us when the virtual CPU stalled
  // (interrupts are off throughout): 1 050 moves in 57 recordings of make fidelity's
  // workloads. The unfiltered buffer records so little of an idle CPU that two balancing
  // passes can show nothing between them: 44 us to 1 ms apart there.
  constexpr int64_t kBatchMoveGapNs = 25'000;
  Cpu::MoveBatch& b = cpu.move_batch;
  if (b.last_ts != prev_ts || e.c.ts - b.last_ts > kBatchMoveGapNs || b.unfiltered != unfiltered ||
      b.orig_cpu != e.orig_cpu || b.dest_cpu != e.dest_cpu) {
    b.orig_cpu = e.orig_cpu;
    b.dest_cpu = e.dest_cpu;
    b.first_ts = e.c.ts;
    b.unfiltered = unfiltered;
    b.queued.clear();
  }
  b.last_ts = e.c.ts;
  if (queued) b.queued.push_back(queued);
  if (b.first_ts == e.c.ts) return;
  for (Observer* p : On(Hook::kBetweenRunqueues))
    for (const Thread* t : b.queued) p->OnBetweenRunqueues(*t, b.first_ts, e.c.ts);
}

void StateMachine::Migrate(Thread& t, const SchedMigrateTask& e) {
  // Only a task still on its runqueue is moved (a sleeping one is placed at its wakeup,
  // after sched_waking): asleep and moved, it is queued there from now on.
  if (!t.on_cpu && Asleep(t) && caps_.waking && t.moved_asleep_at < 0 && t.seen_running)
    t.moved_asleep_at = e.c.ts;
  if (!t.on_cpu) t.cpu = e.dest_cpu;
  for (Observer* p : On(Hook::kMigrate)) p->OnMigrate(t, e.orig_cpu, e.dest_cpu, e.c.ts);
  if (!t.on_cpu && IsWaitingForCpu(t.state) && caps_.CpuUntraced(e.dest_cpu)) [[unlikely]]
    QueuedOnUntracedCpu(t, e.c.ts, /*woken=*/false);
}

void StateMachine::PushTaskNewtask(const TaskNewtask& e) {
  Cpu& cpu = Enter(e.c);
  if (e.c.pid != 0) MarkOnCpu(cpu, e.c.cpu, &OwnThread(cpu, e.c.pid), e.c.ts);
  threads_.NoteCloneFlags(e.pid, e.clone_flags);
}

void StateMachine::PushSchedProcessFork(const SchedProcessFork& e) {
  Cpu& cpu = Enter(e.c);
  Thread& parent = Lookup(e.parent_pid, e.parent_comm);
  if (e.c.pid == e.parent_pid) MarkOnCpu(cpu, e.c.cpu, &parent, e.c.ts);
  cpu.last_event = LastEvent::kOther;
  if (e.child_pid <= 0) [[unlikely]] {
    // Otherwise every such record would end the last one's "thread 0" and start another.
    Flag(Anomaly::kForkOfPidZero, nullptr);
    return;
  }
  ThreadGroups::Clone kind;
  const int32_t tgid = threads_.ChildTgid(parent, e.child_pid, &kind);
  Thread& child = NewThread(e.child_pid, e.child_comm, e.c.ts, true);
  if (child.tgid == 0) child.tgid = tgid;
  threads_.Forked(parent, child, kind);
  child.forked_by = &parent;
  child.tracked = child.tracked || parent.tracked;
  child.user_thread = parent.user_thread;
  // Not runnable until wake_up_new_task (TASK_NEW): the kernel's run delay begins there,
  // and so does its observed lifetime (PushSchedWakeup). Until then it is its parent's
  // fork, in the parent's own time (a parent preempted in between left a child 100 ms
  // unqueued, which a wait from the fork on counted as the child's). Without that
  // wakeup in the trace, it waits for a CPU from here.
  child.state = Microstate::kWaitCpuWakeup;
  child.awaits_first_wakeup = true;
  if (parent.tid == kKthreaddTid)
    ThreadTracker::MarkKernelThread(child);
  else if (caps_.syscalls)
    child.syscall = kInForkReturn;
  child.cpu = e.c.cpu;
}

void StateMachine::PushTaskRename(const TaskRename& e) {
  const Cpu& cpu = Enter(e.c);
  // (A task renames itself; another's name is written through /proc/PID/comm.)
  Thread& t = e.pid == e.c.pid ? OwnThread(cpu, e.pid, e.oldcomm) : Lookup(e.pid, e.oldcomm);
  t.comm = std::string(e.newcomm);
}

// A non-leader thread's exec takes its leader's tid as the leader exits (de_thread()
// exchanges the two tids once the leader's exit state is set), well before
// sched_process_exec says so: the thread's events between (its new name, page faults, a
// switch) carry the leader's tid, and the leader's last ones (its final switch) the
// thread's old tid. The first such event does the exchange here too. (`--check` had
// counted a switch too many, and the leader had the new program's name and no exit
// record.)
//
//   CPU 0  T: execve ... [de_thread waits] ........ T as P: rename, faults ... exec(P, T)
//   CPU 1  L (tid P): ... exit ... wakes T ... L as T: increment, final switch
//                                          ^ exchange_tids()
//
// Both sides below are events a task wrote about itself (common_pid, a switch's prev, a
// rename of itself): a tid an event names about another task (a wakee, an increment's
// subject, a switch's next) is what it was when written, and the exec'ing thread names
// its leader's old tid when it kills it, before the exchange.
//
// The CPU's current thread, in an exec syscall, wrote an event as `tid`: its process's
// leader's tid, the leader exiting or gone (`leader`: what `tid` names now).
// Or a thread in an exec syscall the leader woke as it exited, queued on this CPU and
// not seen running since: the kernel often leaves the switch to it from idle out, and the
// CPU may still show what the trace last saw there (an unfollowed task, with a pid
// filter). Not while the event may still be the leader's own: it runs on this CPU or may
// run anywhere (preempted, not yet switched out dead).
Thread* StateMachine::TakingLeaderTid(const Cpu& cpu, int32_t tid, Thread* leader) {
  if (leader != nullptr && !leader->exiting) return nullptr;
  const auto execing_as_leader = [&](const Thread* t) {
    return t != nullptr && t->tid != tid && t->tgid == tid &&
           syscalls_.Class(t->syscall) == SyscallClass::kExec;
  };
  Thread* t = cpu.current_known ? cpu.current : nullptr;
  if (t == nullptr || !t->on_cpu || !execing_as_leader(t)) {
    const bool leader_elsewhere = leader == nullptr || leader->state == Microstate::kZombie ||
                                  (leader->on_cpu && leader->cpu != cur_cpu_);
    t = leader_elsewhere ? ExecWaiterWokenBy(tid, cur_cpu_) : nullptr;
  }
  if (!execing_as_leader(t)) return nullptr;
  ExchangeTids(*t, tid, leader);
  return t;
}

Thread* StateMachine::ExecWaiterWokenBy(int32_t leader_tid, int32_t cpu_id) const {
  for (const WokenExecWaiter& w : woken_exec_waiters_)
    if (w.leader_tid == leader_tid && !w.execing->on_cpu && IsWaitingForCpu(w.execing->state) &&
        w.execing->cpu == cpu_id)
      return w.execing;
  return nullptr;
}

// The thread an increment (written by another context than its subject's, or not yet
// known to be about the CPU's current) names as `pid`, or null when the model knows no
// such thread; exchanges the tids of an exec that shows here first. An increment's
// subject is running; a leader switched out dead (a zombie) is not: its tid names the
// thread in an exec syscall it woke as it died, whose tid the kernel exchanged with its
// own before any of that thread's events showed it (taken for the leader's, its run time
// went missing from the thread's, and read as steal). A leader preempted in its exit is
// still alive, and its own.
Thread* StateMachine::IncrementSubjectExchanging(int32_t pid) {
  Thread* t = threads_.Find(pid);
  if (t != nullptr && t->exiting && t->state == Microstate::kZombie) [[unlikely]]
    for (const WokenExecWaiter& w : woken_exec_waiters_)
      if (w.leader_tid == pid && w.execing->tid != pid &&
          syscalls_.Class(w.execing->syscall) == SyscallClass::kExec) {
        Thread* execing = w.execing;
        ExchangeTids(*execing, pid, t);
        return execing;
      }
  return t;
}

// The CPU's current thread, its process's exiting leader, wrote an event as `tid`: the
// tid of its thread in an exec syscall, whose own it has taken.
Thread* StateMachine::LeaderUnderExecingTid(const Cpu& cpu, int32_t tid) {
  Thread* leader = cpu.current_known ? cpu.current : nullptr;
  if (leader == nullptr || !leader->exiting || !leader->on_cpu || leader->tid == tid ||
      leader->tid != leader->tgid)
    return nullptr;
  Thread* t = threads_.Find(tid);
  if (t == nullptr || t == leader || t->tgid != leader->tid ||
      syscalls_.Class(t->syscall) != SyscallClass::kExec)
    return nullptr;
  ExchangeTids(*t, leader->tid, leader);
  return leader;
}

void StateMachine::ExchangeTids(Thread& execing, int32_t leader_tid, Thread* leader) {
  leader_tids_taken_.push_back({leader_tid, execing.tid, leader});
  threads_.ExchangeTids(execing, leader_tid, leader, cur_ts_);
}

// The task that wrote an event on this CPU (common_pid, a switch's prev), when it is not
// the current one by tid.
Thread& StateMachine::EventTask(const Cpu& cpu, int32_t tid, std::string_view comm) {
  Thread* t = threads_.Find(tid);
  if (t == nullptr || t->exiting) [[unlikely]]
    if (Thread* execing = TakingLeaderTid(cpu, tid, t)) return *execing;
  if (Thread* leader = LeaderUnderExecingTid(cpu, tid)) [[unlikely]]
    return *leader;
  return t != nullptr ? *t : Lookup(tid, comm);
}

void StateMachine::PushSchedProcessExec(const SchedProcessExec& e) {
  Cpu& cpu = Enter(e.c);
  // A non-leader's exec: the tids were exchanged already when an event showed it.
  Thread* old_leader = nullptr;
  const auto taken = std::find_if(
      leader_tids_taken_.begin(), leader_tids_taken_.end(),
      [&](const TidTaken& x) { return x.leader_tid == e.pid && x.old_tid == e.old_pid; });
  if (taken != leader_tids_taken_.end()) {
    old_leader = taken->leader;
    leader_tids_taken_.erase(taken);
  } else if (e.pid != e.old_pid) {
    old_leader = threads_.Find(e.pid);
    if (Thread* execing = threads_.Find(e.old_pid); execing != nullptr && execing != old_leader)
      threads_.ExchangeTids(*execing, e.pid, old_leader, e.c.ts);
  }
  std::erase_if(woken_exec_waiters_,
                [&](const WokenExecWaiter& w) { return w.leader_tid == e.pid; });
  Thread& t = Lookup(e.pid, {});
  threads_.Execed(t, e.pid, e.old_pid, old_leader);
  // de_thread() released the old leader (release_task()) before this event: its zombie
  // ends here, not at the parent's wait4(), which reaps the process, by that tid, later.
  if (old_leader != nullptr && old_leader != &t && !old_leader->freed &&
      old_leader->state == Microstate::kZombie)
    EndLifetime(*old_leader, e.c.ts);
  MarkOnCpu(cpu, e.c.cpu, &t, e.c.ts);
  t.user_thread = true;
  t.kernel_thread = false;
  cpu.last_event = LastEvent::kOther;
}

void StateMachine::PushSchedProcessExit(const SchedProcessExit& e) {
  Cpu& cpu = Enter(e.c);
  Thread& t = Lookup(e.pid, e.comm);
  if (e.c.pid == e.pid) MarkOnCpu(cpu, e.c.cpu, &t, e.c.ts);
  cpu.last_event = LastEvent::kOther;
  t.exiting = true;
  t.fault_pending = false;  // the exit's D sleeps (exit_mm, a core dump) are no fault's
  // A thread killed by a signal (another thread's exit_group(), say) exits on its way
  // back to user mode: the rest of its run is the kernel's (it showed as user time).
  if (e.c.pid == e.pid) RefreshRunning(cpu, e.c.ts);
  if (t.comm != e.comm) t.comm = std::string(e.comm);  // its name at the end
  if (e.c.pid == e.pid && caps_.stat_runtime) BeginSignalExit(t, e.c.ts);
  if (t.exit_record_ts < 0) NoteExitRecord(t, e.c.ts);
  for (Observer* p : On(Hook::kExit)) p->OnExit(t, e.c.ts);
}

void StateMachine::PushSchedProcessFree(const SchedProcessFree& e) {
  Enter(e.c);
  Thread* t = threads_.Find(e.pid);
  if (!t) {
    Flag(Anomaly::kFreeOfUnknownThread, nullptr);
    return;
  }
  if (!t->freed) EndLifetime(*t, e.c.ts);
  threads_.Forget(e.pid);
}

void StateMachine::EndLifetime(Thread& t, int64_t ts) {
  EmitUntracedSwitchOut(t, true);
  FlushHeld(t);
  Transition(t, t.state, t.abstract, ts);
  if (t.syscall == kSyscallUnknown && caps_.syscalls) Resolve(t, kSyscallUnknown);
  CloseOpenSyscall(t, ts);
  t.end_ts = ts;
  t.freed = true;
  t.on_cpu = false;
}

void StateMachine::PushIrqFrame(Cpu& cpu, IrqKind kind, const std::string* name, int64_t ts) {
  cpu.irqs.Push(kind, name, ts);
  RefreshRunning(cpu, ts);
}

void StateMachine::PopIrqFrame(Cpu& cpu, int32_t cpu_id, IrqKind kind, int64_t ts) {
  cpu.last_event = LastEvent::kIrqExit;
  const std::optional<IrqNesting::Closed> closed = cpu.irqs.Pop(kind, ts);
  if (!closed) {
    Flag(Anomaly::kIrqExitWithoutEntry, nullptr);
    return;
  }
  if (closed->mismatch) Flag(Anomaly::kIrqExitMismatch, nullptr);
  const IrqNesting::Frame& frame = closed->frame;
  if (!cpu.irqs.InAny())
    cpu.closed_interrupts.Push(
        {frame.start, ts,
         frame.kind == IrqKind::kSoftirq ? Microstate::kSoftirq : Microstate::kIrq});
  if (frame.name) {
    IrqInterval iv{frame.kind,  *frame.name, cpu_id,
                   frame.start, ts,          cpu.current_known ? cpu.current : nullptr};
    for (Observer* p : On(Hook::kIrq)) p->OnIrq(iv);
  }
  RefreshRunning(cpu, ts);
}

void StateMachine::PushIrqHandlerEntry(const IrqHandlerEntry& e) {
  Cpu& cpu = Enter(e.c);
  NoteEventTask(cpu, e.c);
  PushIrqFrame(cpu, IrqKind::kHardirq, irq_names_.Irq(e.irq, e.name), e.c.ts);
}

void StateMachine::PushIrqHandlerExit(const IrqHandlerExit& e) {
  Cpu& cpu = Enter(e.c);
  PopIrqFrame(cpu, e.c.cpu, IrqKind::kHardirq, e.c.ts);
}

void StateMachine::PushIrqVector(const IrqVector& e) {
  Cpu& cpu = Enter(e.c);
  if (e.entry) {
    NoteEventTask(cpu, e.c);
    // The tick may end the running task's slice (a wakeup inside it overrides this); it
    // also reads the runqueue clock.
    if (e.name == "local_timer") {
      cpu.resched.candidate = CauseKind::kPreemptTick;
      NoteRqClock(cpu, e.c.ts);
    } else if (e.name == "reschedule" && (e.c.flags & kFlagNeedResched)) {
      NoteRemoteReschedule(cpu, e.c.ts, e.c.pid);
    }
    PushIrqFrame(cpu, IrqKind::kVector, irq_names_.Vector(e.name), e.c.ts);
  } else {
    PopIrqFrame(cpu, e.c.cpu, IrqKind::kVector, e.c.ts);
  }
}

void StateMachine::PushSoftirq(const Softirq& e) {
  Cpu& cpu = Enter(e.c);
  if (e.phase == SoftirqPhase::kRaise) return;
  if (e.phase == SoftirqPhase::kEntry) {
    NoteEventTask(cpu, e.c);
    PushIrqFrame(cpu, IrqKind::kSoftirq, irq_names_.Softirq(e.vec, e.name), e.c.ts);
  } else {
    PopIrqFrame(cpu, e.c.cpu, IrqKind::kSoftirq, e.c.ts);
  }
}

// nmi_handler is emitted when a handler finished; it occupied [ts - delta_ns, ts].
void StateMachine::PushNmiHandler(const NmiHandler& e) {
  Cpu& cpu = Enter(e.c);
  int64_t start = e.c.ts - std::max<int64_t>(0, e.delta_ns);
  if (!cpu.irqs.InAny()) cpu.closed_interrupts.Push({start, e.c.ts, Microstate::kIrq});
  Thread* t = cpu.current_known ? cpu.current : nullptr;
  if (t && t->on_cpu) {
    start = std::max(start, t->since);
    EmitSegment(*t, t->state, t->abstract, t->since, start);
    EmitSegment(*t, Microstate::kIrq, AbstractState::kNone, start, e.c.ts);
    t->since = e.c.ts;
  }
  IrqInterval iv{IrqKind::kNmi, irq_names_.Nmi(), e.c.cpu, start, e.c.ts, t};
  for (Observer* p : On(Hook::kIrq)) p->OnIrq(iv);
}

void StateMachine::PushSysEnter(const SysEnter& e) {
  Cpu& cpu = Enter(e.c);
  Thread& t = OwnThread(cpu, e.c.pid);
  t.user_thread = true;
  t.kernel_thread = false;
  t.fault_pending = false;
  if (t.syscall == kSyscallUnknown) {
    Resolve(t, kNotInSyscall);
  } else if (t.syscall >= 0) {
    Flag(Anomaly::kSysEnterWhileInSyscall, &t);
  }
  if (!RunsHere(cpu, e.c.cpu, t)) MarkOnCpuChanged(cpu, e.c.cpu, &t, e.c.ts);
  // The exit record samples the accounting early in do_exit(): where the next increment
  // starts from (PushSchedStatRuntime) tells where it stood.
  if (caps_.stat_runtime && syscalls_.Class(e.id) == SyscallClass::kExit) [[unlikely]]
    t.exit_accounting_pending = true;
  t.syscall = e.id;
  t.syscall_start = e.c.ts;
  t.syscall_enter_seen = true;
  cpu.last_event = LastEvent::kOther;
  RefreshRunning(cpu, e.c.ts);
}

void StateMachine::PushSysExit(const SysExit& e) {
  Cpu& cpu = Enter(e.c);
  Thread& t = OwnThread(cpu, e.c.pid);
  t.user_thread = true;
  t.kernel_thread = false;
  if (t.syscall == kSyscallUnknown) Resolve(t, e.id);
  if (!RunsHere(cpu, e.c.cpu, t)) MarkOnCpuChanged(cpu, e.c.cpu, &t, e.c.ts);
  if (t.syscall >= 0) {
    SyscallInterval s{&t,
                      t.syscall,
                      t.syscall_enter_seen ? t.syscall_start : t.first_ts,
                      e.c.ts,
                      t.syscall_enter_seen,
                      true};
    for (Observer* p : On(Hook::kSyscall)) p->OnSyscall(s);
  } else if (t.syscall != kInForkReturn) {
    Flag(Anomaly::kSysExitWithoutEnter, &t);
  }
  t.syscall = kNotInSyscall;
  t.syscall_enter_seen = false;
  t.fault_pending = false;  // a fault in the syscall (page_fault_kernel) ended with it
  t.signal_exit_wakeup_ts = -1;
  cpu.last_event = LastEvent::kSysExit;
  RefreshRunning(cpu, e.c.ts);
  if (syscalls_.Class(e.id) == SyscallClass::kReapChild && e.ret > 0) ReapZombie(e.ret, e.c.ts);
}

// A parent's wait4() returned a zombie's pid: it was reaped in that call. Its
// sched_process_free comes later from an RCU callback, in whatever task runs then,
// which a pid-filtered trace mostly drops; without this a reaped child would stay a
// zombie to the end of the trace.
void StateMachine::ReapZombie(int64_t pid, int64_t ts) {
  Thread* z = threads_.Find(static_cast<int32_t>(pid));
  // (Or exiting when events were lost: its final switch may have been among them. Else
  // an exiting thread may still be on its way to that switch, on another CPU.)
  const bool zombie = z != nullptr && (z->state == Microstate::kZombie ||
                                       (z->exiting && z->lost_touched && !z->on_cpu));
  if (z == nullptr || z->freed || !zombie) return;
  EndLifetime(*z, ts);
}

void StateMachine::PushPageFault(const PageFault& e) {
  Cpu& cpu = Enter(e.c);
  if (e.c.pid == 0) return;
  Thread& t = OwnThread(cpu, e.c.pid);
  MarkOnCpu(cpu, e.c.cpu, &t, e.c.ts);
  if (e.user) t.user_thread = true;
  t.fault_pending = true;
  cpu.last_event = LastEvent::kOther;
}

void StateMachine::PushOtherEvent(const EventCommon& c, int /*type_id*/) {
  Cpu& cpu = Enter(c);
  if (c.pid != 0 && !(c.flags & (kFlagHardirq | kFlagSoftirq | kFlagNmi)))
    MarkOnCpu(cpu, c.cpu, &OwnThread(cpu, c.pid), c.ts);
  cpu.last_event = LastEvent::kOther;
}

// Not the task's own event: it is recorded in the context of the task just switched
// out, which must not count as running again.
void StateMachine::PushKernelStack(const KernelStack& e) {
  if (static_cast<size_t>(e.c.cpu) >= cpus_.size()) return;  // no switch on that CPU yet
  Cpu& cpu = cpus_[e.c.cpu];
  Thread* t = cpu.sleep_switch_prev;
  cpu.sleep_switch_prev = nullptr;
  if (t == nullptr || t->tid != e.c.pid) return;  // a stack of another trigger or event
  if (e.c.ts > last_ts_) last_ts_ = e.c.ts;
  const KernelStackEvent ev{t, cpu.sleep_switch_ts, e.c.cpu, &e};
  for (Observer* p : On(Hook::kKernelStack)) p->OnKernelStack(ev);
}

void StateMachine::PushLostEvents(const LostEvents& e) {
  if (first_ts_ < 0) {  // dated when the trace's first record says where it starts
    losses_before_start_.push_back(e);
    return;
  }
  if (static_cast<size_t>(e.cpu) >= cpus_.size()) cpus_.resize(e.cpu + 1);
  cur_ts_ = e.ts;
  cur_cpu_ = e.cpu;
  Flag(Anomaly::kLostEvents, nullptr, e.count > 0 ? e.count : 1);
  events_lost_ = true;
  // A remote increment of a thread on another CPU may be among the lost events.
  increments_complete_ = false;
  // The events were lost after this CPU's last record (e.ts; a CPU without one lost them
  // from the start) and before its next one. Whatever ran, waited or slept on it may have
  // changed unseen meanwhile: that time is unknown until the thread's own next event, or,
  // for a thread nothing shows, until the CPU's next record (CloseLostGap), where it
  // resumes its last known state.
  Cpu& cpu = cpus_[e.cpu];
  const int64_t gap_from = cpu.last_ts != INT64_MIN ? e.ts : std::min(e.ts, first_ts_);
  if (cpu.lost_gap_from < 0) {
    ++open_lost_gaps_;
    cpu.lost_gap_from = gap_from;
    cpu.last_ts_before_gap = cpu.last_ts;
    cpu.last_ts = INT64_MAX;  // the next record closes the gap (EarlierThanLast)
  }
  // Before the unknown time below: observers tell a gap's unknown time by where it starts.
  for (Observer* p : On(Hook::kLostEvents)) p->OnLostEvents(e.cpu, gap_from, e.count);
  for (Thread& t : threads_.threads()) {
    if (t.cpu != e.cpu || t.freed) continue;
    t.lost_touched = true;
    // (A zombie has only its reap left; a thread its parent is still creating, no state:
    // were its wakeup lost, its switch-in begins it.)
    if (t.state != Microstate::kZombie && !t.awaits_first_wakeup) OpenLostGap(t, e.cpu, gap_from);
  }
  ResetClock(cpu);
  cpu.rq_clock_ts = -1;
  cpu.sleep_switch_prev = nullptr;  // a call chain after the gap is not that switch's
  SetCurrent(cpu, e.cpu, cpu.current, false, e.ts);
  cpu.irqs.Clear();
  cpu.resched.Reset();
}

bool StateMachine::InLostGapUntouched(const Thread& t) {
  return t.lost_gap_at >= 0 && t.state == Microstate::kUnknown &&
         t.abstract == AbstractState::kNone && t.since == t.lost_gap_at;
}

void StateMachine::OpenLostGap(Thread& t, int32_t cpu_id, int64_t ts) {
  if (InLostGapUntouched(t)) {  // still in an earlier gap: it resumes when this one ends
    t.lost_gap_cpu = cpu_id;
    return;
  }
  if (t.held_from >= 0) FlushHeld(t);  // the switch placement cannot reach across a gap
  const int64_t from = std::max(ts, t.since);
  t.state_before_gap = t.state;
  t.abstract_before_gap = t.abstract;
  t.waking_unqueued_before_gap = t.waking_unqueued;
  Transition(t, Microstate::kUnknown, AbstractState::kNone, from);
  t.lost_gap_at = from;
  t.lost_gap_cpu = cpu_id;
}

// A CPU does not go idle with a task queued on it: one the model still has queued here
// was moved elsewhere unseen, while another CPU was losing its events (where it may have
// run). It is unknown from here to its next event.
void StateMachine::LeaveIdleCpu(int32_t cpu_id, int64_t ts) {
  for (Thread& t : threads_.threads()) {
    if (t.cpu != cpu_id || t.on_cpu || t.freed || !IsWaitingForCpu(t.state) ||
        t.awaits_first_wakeup)
      continue;
    t.lost_touched = true;
    if (t.held_from >= 0) FlushHeld(t);
    Transition(t, Microstate::kUnknown, AbstractState::kNone, std::max(ts, t.since));
  }
}

// The state `t` has been in since `since` becomes unknown: the stretch the caller's next
// transition ends (held segments before it stay as they were).
void StateMachine::MakeOpenStretchUnknown(Thread& t) {
  t.lost_touched = true;
  if (t.held_from >= 0) FlushHeld(t);
  t.state = Microstate::kUnknown;
  t.abstract = AbstractState::kNone;
}

// Queued (or moved) onto its CPU while that CPU was losing events, and not seen since.
bool StateMachine::QueuedInLostGap(const Thread& t) const {
  if (t.on_cpu || t.cpu < 0 || static_cast<size_t>(t.cpu) >= cpus_.size()) return false;
  const int64_t gap_from = cpus_[t.cpu].lost_gap_from;
  return gap_from >= 0 && t.since >= gap_from && IsWaitingForCpu(t.state) && !t.awaits_first_wakeup;
}

// `t`, queued on a CPU while it was losing events, shows up on another: it may have run
// there meanwhile, so its wait since is unknown.
void StateMachine::ForgetWaitInLostGap(Thread& t) {
  if (QueuedInLostGap(t)) MakeOpenStretchUnknown(t);
}

// `t`, believed asleep since it last changed state, runs with no wakeup seen. If some CPU
// was losing events meanwhile, the wakeup may have been among them (a sched_waking is
// recorded on the waker's CPU): from the first such loss to `ts` its time is unknown.
// A sleep resumed where its CPU's gap ended (CloseLostGap) may have ended in that gap.
// Returns whether there was one.
bool StateMachine::ForgetSleepAcrossLostGap(Thread& t, int64_t ts) {
  const int64_t began = StretchBegan(t);
  const bool resumed = t.resumed_after_gap_at == began;
  int64_t from = FirstLossSince(resumed ? began - 1 : began);
  if (from < 0) return false;
  from = std::max(from, t.since);  // (what came before a cut was reported already)
  if (from >= ts) return false;
  t.lost_touched = true;
  if (t.held_from >= 0) FlushHeld(t);
  Transition(t, Microstate::kUnknown, AbstractState::kNone, from);
  return true;
}

// Where `t`'s current stretch of one state began: its `since`, unless an interval cut
// (CutSegments) moved that on without a change of state.
int64_t StateMachine::StretchBegan(const Thread& t) {
  return t.cut_at >= 0 && t.cut_at == t.since ? t.stretch_began : t.since;
}

// The first time at or after `from` that some CPU was losing events (-1: none since). A
// gap ends where its CPU's next record is: that record and what follows are seen.
int64_t StateMachine::FirstLossSince(int64_t from) const {
  int64_t first = INT64_MAX;
  for (const Cpu& cpu : cpus_) {
    if (cpu.lost_gap_from >= 0) first = std::min(first, std::max(cpu.lost_gap_from, from));
    // Each CPU's gaps are in time order and apart: the first one still open at `from`.
    const auto gap = std::partition_point(cpu.lost_gaps.begin(), cpu.lost_gaps.end(),
                                          [from](const auto& g) { return g.second <= from; });
    if (gap != cpu.lost_gaps.end()) first = std::min(first, std::max(gap->first, from));
  }
  return first == INT64_MAX ? -1 : first;
}

void StateMachine::EarlierThanLast(Cpu& cpu, const EventCommon& c) {
  if (cpu.lost_gap_from >= 0) {
    const int64_t before = cpu.last_ts_before_gap;
    CloseLostGap(cpu, c.cpu, c.ts);
    if (c.ts >= before) return;
  }
  Flag(Anomaly::kTimeBackwards, nullptr);
}

// The CPU's first record after lost events. A thread the gap left unknown and nothing
// has shown since resumes its state here, but the one that was running there is off it
// now (if it still runs, its own next event says so), its state unknown until then. A
// thread queued (or moved) here during the gap may have run unseen: its time since is
// unknown too.
void StateMachine::CloseLostGap(Cpu& cpu, int32_t cpu_id, int64_t ts) {
  for (Thread& t : threads_.threads()) {
    if (t.freed) continue;
    if (t.lost_gap_at >= 0 && t.lost_gap_cpu == cpu_id) {
      const bool untouched = InLostGapUntouched(t);
      t.lost_gap_at = -1;
      if (untouched) {
        if (t.on_cpu) {
          if (cpu.current == &t && t.cpu == cpu_id) t.on_cpu = false;
        } else {
          Transition(t, t.state_before_gap, t.abstract_before_gap, std::max(ts, t.since));
          t.waking_unqueued = t.waking_unqueued_before_gap;
          t.resumed_after_gap_at = t.since;
        }
        continue;
      }
    }
    if (t.cpu != cpu_id || t.since >= ts || !QueuedInLostGap(t)) continue;
    const Microstate state = t.state;
    const AbstractState abstract = t.abstract;
    const bool waking_unqueued = t.waking_unqueued;
    MakeOpenStretchUnknown(t);  // the stretch since it came, then its state again
    Transition(t, state, abstract, ts);
    t.waking_unqueued = waking_unqueued;
  }
  cpu.lost_gaps.emplace_back(cpu.lost_gap_from, std::max(ts, cpu.lost_gap_from));
  cpu.lost_gap_from = -1;
  --open_lost_gaps_;
}

void StateMachine::CutSegments(int64_t ts) {
  for (Thread& t : threads_.threads()) {
    if (t.held_from >= 0) FlushHeld(t);
    // (One its parent is still creating has no state yet: its life begins at its wakeup.)
    if (t.freed || ts <= t.since || t.awaits_first_wakeup) continue;
    const bool in_gap = InLostGapUntouched(t);
    const int64_t began = StretchBegan(t);
    Transition(t, t.state, t.abstract, ts);
    t.cut_at = ts;
    t.stretch_began = began;
    if (in_gap) t.lost_gap_at = ts;  // still untouched by anything but the cut
  }
}

bool StateMachine::FollowedThreadAlive() const {
  for (const Thread& t : threads_.threads())
    if (t.tracked && !t.exiting && !t.freed && t.state != Microstate::kZombie) return true;
  return false;
}

void StateMachine::Finish(int64_t end_ts) {
  if (finished_) return;
  finished_ = true;
  end_ts = std::max(end_ts, last_ts_);
  for (Thread& t : threads_.threads()) {
    // Not run again by the end: most likely asleep (a preempted task soon runs again).
    EmitUntracedSwitchOut(t, true);
    // Running at the end, with every increment in the trace: the kernel's accounting of
    // it stands where its last one left it, and so did /proc's end sample, read while
    // tracing was on (schedstat does not update a running task's). Told before its held
    // segments arrive, as an increment would be.
    if (t.on_cpu && t.tracked && increments_complete_ && caps_.stat_runtime) [[unlikely]]
      if (const int64_t accounted = AccountedSoFar(t); accounted >= 0)
        for (Observer* p : On(Hook::kRuntimeAccounted))
          p->OnRuntimeAccounted(t, accounted, INT64_MAX);
    FlushHeld(t);
    if (t.freed) continue;
    // Outside a pid-filtered recording, a thread's switch-in is recorded only from a
    // followed task: still waiting for a CPU at the end, it as likely ran unseen soon
    // after. Since that wakeup or preemption, its state is unknown. (A system-wide
    // recording leaves out only switches between two of its own threads.)
    if (RunsUnseen(t) && !t.on_cpu && IsWaitingForCpu(t.state)) {
      t.state = Microstate::kUnknown;
      t.abstract = AbstractState::kNone;
    }
    // Queued on a CPU whose events were lost to the end (its data unreadable, say): it
    // may have run there unseen since.
    if (!t.on_cpu && t.cpu >= 0 && static_cast<size_t>(t.cpu) < cpus_.size() &&
        cpus_[t.cpu].lost_gap_from >= 0 && t.since >= cpus_[t.cpu].lost_gap_from &&
        t.state != Microstate::kZombie)
      MakeOpenStretchUnknown(t);
    // Exited and not reaped in the trace: its parent's wait comes after the last event
    // (the recorder's for the command, after tracing stops, which is when the targets
    // have exited), so the stretch from there to the stop is the recorder's reaction,
    // not the program's: its life ends with the trace's events.
    const int64_t until =
        t.state == Microstate::kZombie ? std::min(end_ts, std::max(last_ts_, t.since)) : end_ts;
    // Created and not yet woken by the end, where the trace records wake_up_new_task: not
    // runnable yet, so its observed life, which begins at that wakeup, has not begun (a
    // wait from its fork would be one the kernel never counted: its parent preempted in
    // between). Without such wakeups in the trace it waits from its fork, as on a switch-in.
    if (wakeup_new_seen_ && LifeNotBegun(t) && !t.on_cpu) BeginLifeAt(t, until);
    Transition(t, t.state, t.abstract, until);
    if (t.syscall == kSyscallUnknown && caps_.syscalls) ResolveUnanswered(t);
    CloseOpenSyscall(t, until);
    t.end_ts = until;
  }
  threads_.ResolveGroups();
  for (Observer* p : On(Hook::kTraceEnd)) p->OnTraceEnd(end_ts);
}

}  // namespace cstool
