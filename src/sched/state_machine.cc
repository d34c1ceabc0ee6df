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
//   ... sys_enter(exit_group)  sched_process_exit  switch-out X  ......  sched_process_free
//              sys                                 |<------- zombie ------->|  (lifetime ends)
//
// Per CPU we keep the current task, the interrupt stack (hardirq/vector/softirq/NMI)
// and what last asked for a reschedule; per thread its microstate and since when, the
// syscall it is in, and the CPU it runs or waits on. A thread that was already alive
// when the trace began is `unknown` until its first event, and while nothing has shown
// yet whether it is inside a syscall its on-CPU and sleep time waits for the answer
// (Resolve) instead of being guessed.
//
// The kernel switch instant. Times follow the kernel's own accounting (exec runtime, run
// delay), which stamps a switch with the runqueue clock. A wakeup that finds need-resched
// set on the CPU it queues a task on asks the next __schedule() to skip the clock update
// (rq_clock_skip_update()), so the kernel switches at the wakeup's clock, before the
// trace shows the switch (the interrupt exit, idle exit and __schedule() in between):
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
#include "sched/state_machine.h"

#include <fmt/core.h>

#include <algorithm>

namespace cstool {
namespace {

constexpr uint64_t kCloneThread = 0x00010000;  // CLONE_THREAD, uapi/linux/sched.h
constexpr size_t kMaxPendingSegments = 4096;
constexpr size_t kMaxHeldSegments = 4096;
// Between the runqueue clock read that an increment (sched_stat_runtime) is computed
// with and the event itself: the enqueue and preemption check of a wakeup, or the start
// of __schedule(); measured at 0.2-1.5 us on the reference VM. A larger gap between the
// increments' sum and an increment's time means increments are missing.
constexpr int64_t kIncrementLagNs = 2000;
// From a wakeup on another CPU to its reschedule IPI's entry here: an IPI in a VM (exit,
// injection) takes a few microseconds; a last increment older than this was not that
// wakeup's.
constexpr int64_t kIpiLatencyNs = 20000;
// The longest a reschedule IPI is taken as delayed behind need-resched showing.
constexpr int64_t kMaxIpiDelayNs = 200000;
// A wakeup's target CPU comes from the record itself; a damaged file's absurd value must
// not size the per-CPU table (the readers' own limit on CPUs is the same).
constexpr int32_t kMaxCpuId = 1 << 16;

bool IsInSyscall(int64_t s) { return s >= 0 || s == kInForkReturn; }

}  // namespace

StateMachine::StateMachine(const SyscallTable& syscalls, TraceCapabilities caps,
                           TrackingPolicy policy)
    : syscalls_(syscalls), caps_(caps), policy_(std::move(policy)) {
  for (auto [tid, tgid] : policy_.known_tgids) tgid_hint_[tid] = tgid;
}

StateMachine::~StateMachine() = default;

bool StateMachine::IsTrackedRoot(int32_t tid) const {
  if (policy_.all) return true;
  return std::find(policy_.root_pids.begin(), policy_.root_pids.end(), tid) !=
         policy_.root_pids.end();
}

Thread& StateMachine::NewThread(int32_t tid, std::string_view comm, int64_t ts, bool in_trace) {
  if (uint32_t old = by_tid_.Get(tid)) {
    // The old thread's free was not seen: end its lifetime here so the two never merge.
    Thread& o = threads_[old - 1];
    if (!o.freed) {
      Flag(Anomaly::kTidReusedWithoutFree, &o);
      EndLifetime(o, ts);
    }
  }
  Thread& t = threads_.emplace_back();
  t.id = static_cast<uint32_t>(threads_.size() - 1);
  t.tid = tid;
  t.comm = std::string(comm);
  t.created_in_trace = in_trace;
  t.first_ts = ts;
  t.since = ts;
  if (auto it = tgid_hint_.find(tid); it != tgid_hint_.end()) t.tgid = it->second;
  t.tracked = policy_.all || IsTrackedRoot(tid) || (t.tgid != 0 && IsTrackedRoot(t.tgid));
  if (!caps_.syscalls) t.syscall = kNotInSyscall;
  by_tid_.Set(tid, t.id + 1);
  thread_ptrs_.push_back(&t);
  for (Observer* p : On(Hook::kThreadNew)) p->OnThreadNew(t);
  return t;
}

Thread& StateMachine::Lookup(int32_t tid, std::string_view comm) {
  if (uint32_t id = by_tid_.Get(tid)) [[likely]]
    return *thread_ptrs_[id - 1];
  // Alive since before the trace (or before its events reached us): unknown until now.
  return NewThread(tid, comm, first_ts_, false);
}

// The first event that shows need-resched set tells what set it: the latest candidate.
[[gnu::always_inline]] inline void StateMachine::NoteFlags(Cpu& cpu, uint8_t flags) {
  if ((flags & (kFlagNeedResched | kFlagNeedReschedLazy)) && !cpu.resched_seen) {
    cpu.resched_seen = true;
    cpu.resched_seen_ts = cpu.last_ts;
    cpu.resched_origin = cpu.candidate;
    if (cpu.clock_skip_unconfirmed && (flags & kFlagNeedResched)) RequestClockSkip(cpu);
  }
}

// Per event: keep this small and inlined (it runs for every record).
[[gnu::always_inline]] inline StateMachine::Cpu& StateMachine::Enter(const EventCommon& c,
                                                                     bool note_flags) {
  if (first_ts_ < 0 || static_cast<size_t>(c.cpu) >= cpus_.size()) [[unlikely]]
    FirstOnCpu(c);
  Cpu& cpu = cpus_[c.cpu];
  cur_ts_ = c.ts;
  cur_cpu_ = c.cpu;
  if (c.ts < cpu.last_ts) [[unlikely]]
    Flag(Anomaly::kTimeBackwards, nullptr);
  cpu.last_ts = c.ts;
  if (c.ts > last_ts_) last_ts_ = c.ts;
  if (note_flags) NoteFlags(cpu, c.flags);
  return cpu;
}

void StateMachine::FirstOnCpu(const EventCommon& c) {
  if (first_ts_ < 0) first_ts_ = c.ts;
  if (static_cast<size_t>(c.cpu) >= cpus_.size()) cpus_.resize(c.cpu + 1);
}

// The thread of a task's own event (common_pid): almost always the CPU's current one.
// Exactly what Lookup would return (the tid index still names it), without the lookup's
// call and pointer chase.
[[gnu::always_inline]] inline Thread& StateMachine::EventThread(const Cpu& cpu, int32_t tid,
                                                                std::string_view comm) {
  Thread* cur = cpu.current;
  if (cur && cur->tid == tid && by_tid_.Get(tid) == cur->id + 1) [[likely]]
    return *cur;
  return Lookup(tid, comm);
}

// Whether `t` is already known to run on this CPU (then MarkOnCpu has nothing to do
// but re-derive its running state, which the syscall handlers do anyway).
[[gnu::always_inline]] inline bool StateMachine::RunsHere(const Cpu& cpu, int32_t cpu_id,
                                                          const Thread& t) const {
  return cpu.current == &t && cpu.current_known && t.on_cpu && t.cpu == cpu_id;
}

// With a pid filter, unfollowed tasks show up only partly (as the other side of a
// switch or a wakeup), so surprises about them are expected and not counted.
void StateMachine::Flag(Anomaly a, const Thread* t, uint64_t n) {
  if (t && !t->tracked && !policy_.all) return;
  anomalies_.Add(a, n);
  if (anomaly_log_) anomaly_log_(a, cur_ts_, cur_cpu_, t ? t->tid : -1);
}

// Runs for about every event: the common case (syscall state known, no observer wants
// segments, as in a plain report) stays inline; the rest is out of line.
[[gnu::always_inline]] inline void StateMachine::EmitSegment(Thread& t, Microstate s,
                                                             AbstractState a, int64_t start,
                                                             int64_t end) {
  if (end <= start) return;
  if (t.held_from >= 0) [[unlikely]] {
    if (t.held_segments.size() < kMaxHeldSegments) {
      t.held_segments.push_back({s, a, start, end});
      return;
    }
    FlushHeld(t);  // a very long run without the kernel's accounting: keep the model
  }
  EmitSegmentNow(t, s, a, start, end);
}

[[gnu::always_inline]] inline void StateMachine::EmitSegmentNow(Thread& t, Microstate s,
                                                                AbstractState a, int64_t start,
                                                                int64_t end) {
  if (t.syscall == kSyscallUnknown) [[unlikely]] {
    EmitUnresolvedSegment(t, s, a, start, end);
    return;
  }
  Deliver(t, s, start, end);
}

// A segment of a thread whose syscall state is not known yet: held back until Resolve
// (or labelled unknown when the trace has no syscall events, or too much is held).
void StateMachine::EmitUnresolvedSegment(Thread& t, Microstate s, AbstractState a, int64_t start,
                                         int64_t end) {
  if (caps_.syscalls) {
    if (t.pending_segments.size() < kMaxPendingSegments) {
      t.pending_segments.push_back({s, a, start, end});
      return;
    }
    // Give up waiting: what was pending stays unknown, and so does the rest.
    Flag(Anomaly::kPendingResolutionOverflow, &t);
    Resolve(t, kSyscallUnknown);
  }
  if (a == AbstractState::kRunning && t.syscall == kSyscallUnknown) s = Microstate::kUnknown;
  Deliver(t, s, start, end);
}

[[gnu::always_inline]] inline void StateMachine::Deliver(Thread& t, Microstate s, int64_t start,
                                                         int64_t end) {
  t.times[static_cast<size_t>(s)] += end - start;
  const std::vector<Observer*>& observers = On(Hook::kStateSegment);
  if (!observers.empty()) [[unlikely]]
    for (Observer* p : observers) p->OnStateSegment(t, s, start, end);
}

[[gnu::always_inline]] inline void StateMachine::Transition(Thread& t, Microstate next,
                                                            AbstractState abstract, int64_t ts) {
  EmitSegment(t, t.state, t.abstract, t.since, ts);
  t.waking_unqueued = false;
  t.state = next;
  t.abstract = abstract;
  t.since = ts;
}

Microstate StateMachine::RunningState(const Thread& t, const Cpu& cpu) const {
  if (cpu.hardirq_depth > 0) return Microstate::kIrq;
  if (cpu.irq_depth > 0) return Microstate::kSoftirq;
  if (t.syscall == kSyscallUnknown || t.syscall == kSyscallAbandoned) return Microstate::kUnknown;
  return IsInSyscall(t.syscall) ? Microstate::kSys : Microstate::kUser;
}

// Re-derives the running thread's microstate after its syscall or the CPU's interrupt
// nesting changed.
[[gnu::always_inline]] inline void StateMachine::RefreshRunning(Cpu& cpu, int64_t ts) {
  Thread* t = cpu.current;
  if (!t || !t->on_cpu) return;
  Microstate s = RunningState(*t, cpu);
  AbstractState a = s == Microstate::kUnknown ? AbstractState::kRunning : AbstractState::kNone;
  if (s != t->state || a != t->abstract) Transition(*t, s, a, ts);
}

void StateMachine::MarkOnCpu(Cpu& cpu, int32_t cpu_id, Thread* t, int64_t ts) {
  if (t && RunsHere(cpu, cpu_id, *t)) [[likely]] {
    RefreshRunning(cpu, ts);
    return;
  }
  // The kernel (6.18) often records no sched_switch when an idle CPU picks up a woken
  // task; its own events show it is running. The kernel switched at the wakeup's clock.
  int64_t in_ts = ts;
  if (t && !t->on_cpu && cpu.current_known && cpu.current == nullptr) {
    Flag(Anomaly::kMissingSwitchFromIdle, t);
    ++t->placement.untraced_switch_ins;
    in_ts = std::max(KernelSwitchTs(cpu, nullptr, false, ts), t->since);
    ResetClock(cpu);
  }
  SetCurrent(cpu, cpu_id, t, true, ts);  // the CPU's view: what the trace shows ran there
  if (!t) return;
  const bool starts_run = !t->on_cpu;
  if (starts_run) {
    if (t->state != Microstate::kUnknown && !IsWaitingForCpu(t->state))
      Flag(Anomaly::kEventFromSleepingThread, t);
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

// The thread now known to be (or not be) inside syscall `s` since before its pending
// period: relabel what waited for that answer and hand it to the observers.
// The microstate of a stretch labelled `a` (its state not known while the syscall was
// not), once the thread is known to be in syscall `nr` (or none, or never to be known).
Microstate StateMachine::ResolvedState(const Thread& t, Microstate s, AbstractState a,
                                       int64_t nr) const {
  const bool in_syscall = nr >= 0;
  if (a == AbstractState::kNone) return s;
  if (nr == kSyscallUnknown) return Microstate::kUnknown;
  if (a == AbstractState::kRunning) return in_syscall ? Microstate::kSys : Microstate::kUser;
  if (a == AbstractState::kSleepInterruptible) {
    SyscallClass c = in_syscall ? syscalls_.Class(nr) : SyscallClass::kOther;
    return c == SyscallClass::kFutex  ? Microstate::kSleepFutex
           : c == SyscallClass::kPoll ? Microstate::kSleepPoll
                                      : Microstate::kSleep;
  }
  return in_syscall || !t.user_thread ? Microstate::kSleepUninterruptible
                                      : Microstate::kSleepPaging;
}

void StateMachine::Resolve(Thread& t, int64_t s) {
  bool in_syscall = s >= 0;
  int64_t nr = s;
  std::vector<Thread::Segment> segments;
  segments.swap(t.pending_segments);
  t.syscall = s;
  for (auto& seg : segments)
    Deliver(t, ResolvedState(t, seg.state, seg.abstract, s), seg.start, seg.end);
  // Held segments (not final until the thread's switch) take the answer too.
  for (auto& seg : t.held_segments)
    if (seg.abstract != AbstractState::kNone) {
      seg.state = ResolvedState(t, seg.state, seg.abstract, s);
      seg.abstract = AbstractState::kNone;
    }
  for (uint32_t idx : t.pending_switches) {
    PendingSwitch& ps = pending_switches_[idx];
    if (in_syscall) {
      ps.event.cause = {CauseKind::kSleepSyscall, static_cast<int32_t>(nr)};
      for (Observer* p : On(Hook::kSyscallBlocked)) p->OnSyscallBlocked(t, nr);
    }
    ps.resolved = true;
    for (Observer* p : On(Hook::kSwitch)) p->OnSwitch(ps.event);
  }
  t.pending_switches.clear();
  // The state in progress keeps its abstract label only while it is still unknown.
  if (t.abstract != AbstractState::kNone && s != kSyscallUnknown) {
    t.state = ResolvedState(t, t.state, t.abstract, s);
    t.abstract = AbstractState::kNone;
  }
  if (s == kSyscallUnknown) t.syscall = kSyscallAbandoned;  // stop waiting; stay unknown
}

Microstate StateMachine::SleepState(uint16_t bits, const Thread& t, AbstractState* abstract) const {
  *abstract = AbstractState::kNone;
  if (bits & (kStateStopped | kStateTraced)) return Microstate::kStopped;
  if (bits & (kStateDead | kStateZombie)) return Microstate::kZombie;
  bool unknown = t.syscall == kSyscallUnknown;
  if (t.syscall == kSyscallAbandoned)
    return bits & kStateUninterruptible ? Microstate::kSleepUninterruptible : Microstate::kSleep;
  if (bits & kStateUninterruptible) {
    if (unknown) {
      *abstract = AbstractState::kSleepUninterruptible;
      return Microstate::kUnknown;
    }
    return IsInSyscall(t.syscall) || !t.user_thread ? Microstate::kSleepUninterruptible
                                                    : Microstate::kSleepPaging;
  }
  if (unknown) {
    *abstract = AbstractState::kSleepInterruptible;
    return Microstate::kUnknown;
  }
  if (t.syscall >= 0) {
    switch (syscalls_.Class(t.syscall)) {
      case SyscallClass::kFutex:
        return Microstate::kSleepFutex;
      case SyscallClass::kPoll:
        return Microstate::kSleepPoll;
      default:
        break;
    }
  }
  return Microstate::kSleep;
}

SwitchCause StateMachine::VoluntaryCause(uint16_t bits, const Thread& t) const {
  if ((bits & (kStateDead | kStateZombie)) || t.exiting) return {CauseKind::kExit, -1};
  if (bits & (kStateStopped | kStateTraced)) return {CauseKind::kStop, -1};
  if (t.syscall >= 0) return {CauseKind::kSleepSyscall, static_cast<int32_t>(t.syscall)};
  if (t.fault_pending) return {CauseKind::kSleepFault, -1};
  return {CauseKind::kSleepKernel, -1};
}

// Returns whether the switch waits for Resolve (its OnSwitch comes later).
bool StateMachine::EmitSwitch(Thread* prev, const SwitchEvent& e) {
  // A sleep whose syscall is not known yet waits for Resolve to name its cause.
  if (prev && prev->syscall == kSyscallUnknown && caps_.syscalls && e.voluntary &&
      e.cause.kind == CauseKind::kSleepKernel) {
    prev->pending_switches.push_back(static_cast<uint32_t>(pending_switches_.size()));
    pending_switches_.push_back({e, false});
    return true;
  }
  for (Observer* p : On(Hook::kSwitch)) p->OnSwitch(e);
  return false;
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
  Thread* prev = e.prev_pid != 0 ? &EventThread(cpu, e.prev_pid, e.prev_comm) : nullptr;
  Thread* next = e.next_pid != 0 ? &Lookup(e.next_pid, e.next_comm) : nullptr;
  // With a pid filter, switches between two unfollowed tasks are not recorded, so the
  // believed current may be stale; only a followed task on either side is a surprise.
  if (cpu.current_known && cpu.current == nullptr && prev && !prev->on_cpu) {
    Flag(Anomaly::kMissingSwitchFromIdle, prev);
  } else if (cpu.current_known && cpu.current != prev &&
             (policy_.all || (prev && prev->tracked) || (cpu.current && cpu.current->tracked))) {
    Flag(Anomaly::kSwitchOutNotCurrent, prev && prev->tracked ? prev : cpu.current);
  }

  SwitchEvent sw;
  sw.ts = ts;
  sw.cpu = e.c.cpu;
  sw.prev = prev;
  sw.next = next;
  sw.voluntary = e.prev_state != 0 && !e.prev_preempted;
  // An unfollowed prev's increments show only when a followed task's context did them:
  // their sum tells its switch only when it is that recent (a wakeup's preemption).
  const bool prev_accounted =
      prev && (policy_.all || prev->tracked ||
               (prev->run_start >= 0 && prev->run_start + prev->run_ns >= ts - kMaxIpiDelayNs));
  const int64_t kernel_ts =
      KernelSwitchTs(cpu, prev, sw.voluntary, ts, prev_accounted ? prev : nullptr);
  if (prev) {
    if (!prev->on_cpu) {
      // First sight, or its switch-in was lost: it ran until now.
      if (prev->state != Microstate::kUnknown) Flag(Anomaly::kEventFromSleepingThread, prev);
      prev->on_cpu = true;
      Microstate s = RunningState(*prev, cpu);
      Transition(*prev, s,
                 s == Microstate::kUnknown ? AbstractState::kRunning : AbstractState::kNone, ts);
    }
    if (sw.voluntary) {
      sw.cause = VoluntaryCause(e.prev_state, *prev);
      AbstractState abstract;
      Microstate s = SleepState(e.prev_state, *prev, &abstract);
      if (sw.cause.kind == CauseKind::kExit)
        s = Microstate::kZombie, abstract = AbstractState::kNone;
      Transition(*prev, s, abstract, ts);
      RewindHeld(*prev, kernel_ts, ts);
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
      if (syscalls_.Class(prev->syscall) == SyscallClass::kYield) {
        sw.cause = {CauseKind::kYield, -1};
      } else if (e.next_comm.starts_with("migration/")) {
        sw.cause = {CauseKind::kPreemptMigration, -1};
      } else {
        sw.cause = {cpu.resched_seen ? cpu.resched_origin : cpu.candidate, -1};
      }
      if (e.prev_preempted) {
        sw.preempted_at = PreemptedAt::kKernel;
      } else if (!IsInSyscall(prev->syscall) && cpu.last_event == LastEvent::kSysExit) {
        sw.preempted_at = PreemptedAt::kSyscallReturn;
      } else if (!IsInSyscall(prev->syscall) && cpu.last_event == LastEvent::kIrqExit) {
        sw.preempted_at = PreemptedAt::kIrqReturn;
      } else {
        sw.preempted_at = PreemptedAt::kOther;
      }
      Transition(*prev, Microstate::kWaitCpuPreempted, AbstractState::kNone, ts);
      // A preemption's last increment may be missing (done from an unfollowed task's
      // context that then asked for the reschedule); the next task's first increment
      // tells the clock both switched at.
      RewindHeld(*prev, kernel_ts, ts, next != nullptr && next != prev ? next : nullptr);
    }
    prev->on_cpu = false;
    prev->fault_pending = false;
  }
  const bool cause_pending = EmitSwitch(prev, sw);

  cpu.resched_seen = false;
  cpu.candidate = CauseKind::kPreemptUnknown;
  cpu.last_event = LastEvent::kOther;
  ResetClock(cpu);
  cpu.rq_clock_ts = kernel_ts;
  const int64_t in_ts = next ? std::max(kernel_ts, next->since) : kernel_ts;
  // The CPU's view (OnCpuCurrent) is what the trace shows ran there; the threads' times
  // are the kernel's (Thread::placement holds the difference).
  SetCurrent(cpu, e.c.cpu, next, true, ts, &sw, cause_pending);
  if (next) {
    if (next->on_cpu) {
      Flag(Anomaly::kSwitchInAlreadyOnCpu, next);
      if (next->cpu >= 0 && next->cpu != e.c.cpu && static_cast<size_t>(next->cpu) < cpus_.size() &&
          cpus_[next->cpu].current == next)
        SetCurrent(cpus_[next->cpu], next->cpu, next, false, ts);
    } else if (IsSleeping(next->state) && next->state != Microstate::kStopped) {
      // Switched in with no wakeup: schedule() found a signal pending and kept it on
      // the runqueue (or the wakeup was lost). It was waiting for a CPU all along.
      Flag(Anomaly::kSwitchInWithoutWakeup, next);
      next->state = Microstate::kWaitCpuPreempted;
    }
    if (next->comm != e.next_comm) next->comm = std::string(e.next_comm);
    next->on_cpu = true;
    next->cpu = e.c.cpu;
    Microstate s = RunningState(*next, cpu);
    StartRun(*next, s, s == Microstate::kUnknown ? AbstractState::kRunning : AbstractState::kNone,
             in_ts, ts);
  }
}

// `t` starts running in state `s`: at `in_ts` as the runqueue clock model places the
// switch, traced at `ts`. With the kernel's run-time increments in the trace, its first
// one settles where in [in_ts, ts] the kernel switched it in; until then, and from each
// increment to the next, its segments are held so that the switch-out can be placed.
void StateMachine::StartRun(Thread& t, Microstate s, AbstractState a, int64_t in_ts, int64_t ts) {
  SettleOut(t, -1);  // switched in again before the one it yielded to told its clock
  t.placement.in_early_ns += ts - in_ts;
  t.run_start = -1;
  t.run_ns = 0;
  if (caps_.stat_runtime && t.held_from < 0) {
    // The kernel may have switched it in before the model's instant too (a reused clock
    // whose update the trace does not show), but not before its wait began: hold that.
    t.held_from = t.since;
    t.settle_in_before = {t.state, t.abstract, t.since, 0};
    t.settle_in_run = {s, a, in_ts, 0};
    t.settle_in_from = in_ts;
    t.settle_in_to = ts;
  }
  Transition(t, s, a, in_ts);
}

// The held segments of `t` between `from` and `to` take the state of `as`.
void StateMachine::RelabelHeld(Thread& t, int64_t from, int64_t to, const Thread::Segment& as) {
  std::vector<Thread::Segment> held;
  held.swap(t.held_segments);
  for (const Thread::Segment& seg : held) {
    const int64_t a = std::max(seg.start, from);
    const int64_t b = std::min(seg.end, to);
    if (a >= b) {
      t.held_segments.push_back(seg);
      continue;
    }
    if (seg.start < a) t.held_segments.push_back({seg.state, seg.abstract, seg.start, a});
    t.held_segments.push_back({as.state, as.abstract, a, b});
    if (b < seg.end) t.held_segments.push_back({seg.state, seg.abstract, b, seg.end});
  }
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
    t.held_segments.push_back({fill.state, fill.abstract, t.since, to});
    t.since = to;
  }
  t.placement.in_early_ns -= start - t.settle_in_from;
  t.settle_in_from = -1;
}

// Whatever is held becomes final as it is (the model's switch-in stays).
void StateMachine::FlushHeld(Thread& t) {
  if (t.exit_accounting_pending) {  // no increment came after the exit began
    t.accounted_at_exit = t.run_start >= 0 ? t.run_start + t.run_ns : t.settle_in_from;
    t.exit_accounting_pending = false;
  }
  if (t.settle_in_from >= 0) SettleIn(t, t.settle_in_from);
  if (t.settles_out_of) {
    SettleOut(*t.settles_out_of, -1);
    t.settles_out_of = nullptr;
  }
  SettleOut(t, -1);
  t.run_start = -1;
  t.run_ns = 0;
  if (t.held_from >= 0) ReleaseHeld(t, INT64_MAX);
}

void StateMachine::PushSchedStatRuntime(const SchedStatRuntime& e) {
  Enter(e.c);
  if (e.pid == 0) return;
  // `pid` is the task whose run was accounted: this CPU's current, or another CPU's when
  // a wakeup here checked preemption there.
  Thread& t = Lookup(e.pid, e.comm);
  if (!t.on_cpu || t.cpu < 0 || static_cast<size_t>(t.cpu) >= cpus_.size()) return;
  Cpu& cpu = cpus_[t.cpu];
  const auto runtime = static_cast<int64_t>(std::min<uint64_t>(e.runtime, INT64_MAX / 4));
  // An increment between the exit's start and the exit record (a tick: taskstats_exit()
  // comes well into do_exit()) is in the record; the first one after it is not.
  if (t.exit_accounting_pending && (t.exiting || t.exit_record_taken)) {
    // The first increment after the exit began: the kernel's previous update (its start)
    // is what the exit record holds; an update whose increment the trace lacks (done
    // from an unfollowed task's context) is caught by that start too.
    const int64_t before = t.run_start >= 0 ? t.run_start + t.run_ns : INT64_MIN;
    t.accounted_at_exit = std::min(e.c.ts, std::max(before, e.c.ts - runtime));
    t.exit_accounting_pending = false;
  }
  if (t.settle_in_from >= 0) {
    // The first increment of the run is measured from the kernel's switch-in.
    // An increment that starts after the traced switch-in is not the run's first: that
    // one was done from an unfollowed task's context. Then the model's instant (where the
    // previous task's increments ended, when it had them) stands.
    const int64_t measured = e.c.ts - runtime;
    const int64_t start =
        measured > t.settle_in_to ? t.settle_in_from : std::max(measured, t.settle_in_before.start);
    SettleIn(t, start);
    if (t.settles_out_of) {  // the task it preempted stopped at the same clock
      SettleOut(*t.settles_out_of, start);
      t.settles_out_of = nullptr;
    }
    t.run_start = start;
    t.run_ns = runtime;
  } else if (t.run_start >= 0) {
    t.run_ns += runtime;
    // An increment done from an unfollowed task's context (a wakeup on another CPU
    // checking preemption here) is filtered out of the trace: then the increments add up
    // to less than this one's clock, which was read at most kIncrementLagNs before it.
    // But while a clock skip is pending here (a wakeup that found need-resched set:
    // PREEMPT_NONE keeps a task in the kernel, e.g. in execve, long after that), the
    // increment of __schedule() is computed with the reused clock of that wakeup, not a
    // fresh one: its clock is the skip's, and the increments are complete up to it.
    const int64_t clock_ts =
        cpu.clock_skip && cpu.rq_clock_ts >= 0 ? std::min(e.c.ts, cpu.rq_clock_ts) : e.c.ts;
    t.run_ns = std::max(t.run_ns, clock_ts - kIncrementLagNs - t.run_start);
  } else {
    return;
  }
  // The kernel has accounted the run up to here: what was held before is final.
  const int64_t accounted = std::min(t.run_start + t.run_ns, e.c.ts);
  if (accounted > cpu.rq_clock_ts) cpu.rq_clock_ts = accounted;
  cpu.accounted_ts = accounted;
  if (t.held_from >= 0 && accounted > t.held_from) ReleaseHeld(t, accounted);
}

// The runqueue clock of `cpu` was read again at `ts`: a skipped update would now reuse
// this value, so the running thread's segments before it are final.
void StateMachine::NoteRqClock(Cpu& cpu, int64_t ts) {
  cpu.rq_clock_ts = ts;
  Thread* t = cpu.current_known ? cpu.current : nullptr;
  if (cpu.clock_skip && t && t->held_from >= 0 && t->run_start < 0 && t->settle_in_from < 0 &&
      ts > t->held_from)
    ReleaseHeld(*t, ts);
}

// A reschedule IPI that finds need-resched set: a wakeup on another CPU queued a task
// here, reading this runqueue's clock and accounting the running task first (its
// increment is in the trace only when the waker is followed). When the running task's
// increments stop well before the IPI, that one is missing: the kernel's accounting of
// it reached (about) the IPI's time.
void StateMachine::NoteRemoteReschedule(Cpu& cpu, int64_t ipi_ts) {
  // The IPI waits while this CPU has interrupts off (a tick, up to ~60 us here); the
  // wakeup read the clock before need-resched first showed here, when an event did.
  const int64_t ts = cpu.resched_seen && cpu.resched_seen_ts >= ipi_ts - kMaxIpiDelayNs
                         ? std::min(ipi_ts, cpu.resched_seen_ts)
                         : ipi_ts;
  // For the runqueue-clock model: that wakeup updated the clock (about now, unless the
  // trace showed it) and, finding need-resched set, asked the next switch to reuse it.
  if (cpu.rq_clock_ts < ts - kIpiLatencyNs) NoteRqClock(cpu, ts);
  RequestClockSkip(cpu);
  Thread* t = cpu.current_known ? cpu.current : nullptr;
  if (t && t->on_cpu && t->run_start >= 0 && t->run_start + t->run_ns < ts - kIpiLatencyNs)
    t->run_ns = ts - kIncrementLagNs - t->run_start;
  if (t && t->on_cpu && t->run_start >= 0) {
    const int64_t accounted = t->run_start + t->run_ns;
    if (t->held_from >= 0 && accounted > t->held_from) ReleaseHeld(*t, accounted);
  }
}

// A wakeup queued a task on `cpu` while need-resched was set there: the next switch on
// it reuses the clock of that wakeup, so hold the running thread's segments from then.
void StateMachine::RequestClockSkip(Cpu& cpu) {
  cpu.clock_skip_unconfirmed = false;
  if (cpu.rq_clock_ts < 0) return;
  cpu.clock_skip = true;
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
int64_t StateMachine::KernelSwitchTs(const Cpu& cpu, const Thread* prev, bool voluntary,
                                     int64_t ts) const {
  if (!cpu.clock_skip || cpu.rq_clock_ts < 0 || cpu.rq_clock_ts > ts) return ts;
  if (prev && voluntary && !cpu.resched_seen) return ts;
  return cpu.rq_clock_ts;
}

// The same, when the previous task's run was accounted by the kernel's increments: the
// run ends where they add up to, since __schedule() accounts it with the clock it
// switches at (its own update, or a reused one). That is more exact than the model's
// instant, which is the sched_wakeup event: a few microseconds after the clock update it
// stands for (the enqueue and the preemption check come in between).
int64_t StateMachine::KernelSwitchTs(const Cpu& cpu, const Thread* prev, bool voluntary, int64_t ts,
                                     const Thread* accounted_prev) const {
  if (!accounted_prev || accounted_prev->run_start < 0)
    return KernelSwitchTs(cpu, prev, voluntary, ts);
  return std::min(ts, accounted_prev->run_start + accounted_prev->run_ns);
}

// The held segments of `t` ending by `before` become final; the rest stay held from there.
void StateMachine::ReleaseHeld(Thread& t, int64_t before) {
  if (t.settle_in_from >= 0 || t.settle_out_from >= 0) return;  // not final yet
  std::vector<Thread::Segment> held;
  held.swap(t.held_segments);
  const bool all = before == INT64_MAX;
  t.held_from = all ? -1 : before;
  for (const Thread::Segment& seg : held) {
    if (seg.end <= before) {
      EmitSegmentNow(t, seg.state, seg.abstract, seg.start, seg.end);
    } else if (seg.start < before) {
      EmitSegmentNow(t, seg.state, seg.abstract, seg.start, before);
      t.held_segments.push_back({seg.state, seg.abstract, before, seg.end});
    } else {
      t.held_segments.push_back(seg);
    }
  }
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
  t.run_start = -1;
  t.run_ns = 0;
  ReleaseHeld(t, from);
  t.placement.out_early_ns += ts - from;
  if (by_increments && settled_by && caps_.stat_runtime && from < ts) {
    // What ran in [from, ts] stays held until `settled_by` tells where in it the kernel
    // switched (SettleOut); the new state is in progress from ts until then.
    if (settled_by->settles_out_of) SettleOut(*settled_by->settles_out_of, -1);
    t.settle_out_from = from;
    t.settle_out_to = ts;
    t.settle_out_after = {t.state, t.abstract, ts, 0};
    settled_by->settles_out_of = &t;
    return;
  }
  t.held_segments.clear();
  t.held_from = -1;
  if (from < ts) t.since = from;
}

// The kernel switched `t` out at `end` (clamped to its settle window; -1: at the window's
// start): held running time after it belongs to the state it switched out to.
void StateMachine::SettleOut(Thread& t, int64_t end) {
  if (t.settle_out_from < 0) return;
  end = end < 0 ? t.settle_out_from : std::clamp(end, t.settle_out_from, t.settle_out_to);
  RelabelHeld(t, end, t.settle_out_to, t.settle_out_after);
  t.placement.out_early_ns -= end - t.settle_out_from;
  t.settle_out_from = -1;
  ReleaseHeld(t, INT64_MAX);
}

// After a switch (or a gap in the events): no skip is pending, nothing is held.
void StateMachine::ResetClock(Cpu& cpu) {
  cpu.clock_skip = false;
  cpu.clock_skip_unconfirmed = false;
  Thread* t = cpu.current_known ? cpu.current : nullptr;
  if (t && t->on_cpu && t->held_from >= 0) FlushHeld(*t);
}

void StateMachine::PushSchedWakeup(const SchedWakeup& e) {
  // sched_wakeup is emitted after the wakeup-preemption check, so its own flags may
  // already show the need-resched this very wakeup set: note them after the candidate.
  Cpu& cpu = Enter(e.c, /*note_flags=*/false);
  const bool from_irq = e.c.flags & (kFlagHardirq | kFlagSoftirq | kFlagNmi);
  if (!from_irq && e.c.pid != 0) {
    Thread& waker = EventThread(cpu, e.c.pid);
    MarkOnCpu(cpu, e.c.cpu, &waker, e.c.ts);
    // A dying thread's first wakeup: taskstats_exit() waking the listener, right after
    // it sampled the thread's accounting.
    if (waker.exit_accounting_pending) waker.exit_record_taken = true;
  }
  cpu.last_event = LastEvent::kOther;
  Thread& wakee = Lookup(e.pid, e.comm);

  // The wakee becomes runnable at sched_waking (the first sign), or at sched_wakeup
  // when the trace has no sched_waking.
  // sched_waking of a task still on its CPU (it is about to sleep) is followed by its
  // switch-out and then by sched_wakeup once it is off the CPU: then the wakeup is
  // what makes it runnable.
  if (!wakee.on_cpu && (!IsWaitingForCpu(wakee.state) || e.kind == WakeupKind::kWakeupNew)) {
    Transition(wakee, Microstate::kWaitCpuWakeup, AbstractState::kNone, e.c.ts);
    wakee.waking_unqueued = e.kind == WakeupKind::kWaking;
    Thread* waker = from_irq || !cpu.current_known ? nullptr : cpu.current;
    wakee.last_waker = waker ? waker->id : UINT32_MAX;
    WakeupEvent w{
        e.c.ts, e.c.cpu, e.target_cpu, waker, &wakee, from_irq, e.kind == WakeupKind::kWakeupNew};
    for (Observer* p : On(Hook::kWakeup)) p->OnWakeup(w);
  } else if (e.kind == WakeupKind::kWakeup && wakee.waking_unqueued && !wakee.on_cpu &&
             wakee.state == Microstate::kWaitCpuWakeup) {
    // Queued with the target runqueue's clock, read just before; the preemption check
    // that follows accounts the target's current task with that clock, so its increment,
    // when there is one, tells the instant better than this event's time.
    int64_t enqueued = e.c.ts;
    if (e.target_cpu >= 0 && static_cast<size_t>(e.target_cpu) < cpus_.size()) {
      const int64_t accounted = cpus_[e.target_cpu].accounted_ts;
      if (accounted >= wakee.since && accounted < e.c.ts) enqueued = accounted;
    }
    for (Observer* p : On(Hook::kEnqueued)) p->OnEnqueued(wakee, wakee.since, enqueued);
    wakee.waking_unqueued = false;
  }
  const bool valid_target = e.target_cpu >= 0 && e.target_cpu < kMaxCpuId;
  if (!wakee.on_cpu && valid_target) wakee.cpu = e.target_cpu;

  // sched_wakeup carries the CPU the wakee was queued on; a reschedule it causes is
  // requested there (by IPI when that is another CPU).
  bool places_task = e.kind != WakeupKind::kWaking || !caps_.wakeup;
  if (places_task && valid_target) {
    if (static_cast<size_t>(e.target_cpu) >= cpus_.size()) cpus_.resize(e.target_cpu + 1);
    Cpu& target = cpus_[e.target_cpu];
    target.candidate = from_irq ? CauseKind::kPreemptIrq : CauseKind::kPreemptWakeup;
    // Queueing the task read the target's runqueue clock just before this event. Whether
    // need-resched is set there now (wakeup_preempt() then skips the next clock update):
    // this event's own flags when the target is this CPU; an idle target always is
    // preempted; otherwise the target's next flags tell.
    NoteRqClock(target, e.c.ts);
    if (e.target_cpu == e.c.cpu
            ? (e.c.flags & kFlagNeedResched) != 0
            : (target.current_known && target.current == nullptr) || target.resched_seen) {
      RequestClockSkip(target);
    } else if (e.target_cpu != e.c.cpu) {
      target.clock_skip_unconfirmed = true;
    }
  }
  NoteFlags(cpus_[e.c.cpu], e.c.flags);
}

void StateMachine::PushSchedMigrateTask(const SchedMigrateTask& e) {
  Cpu& cpu = Enter(e.c);
  (void)cpu;
  Thread& t = Lookup(e.pid, e.comm);
  if (!t.on_cpu) t.cpu = e.dest_cpu;
  for (Observer* p : On(Hook::kMigrate)) p->OnMigrate(t, e.orig_cpu, e.dest_cpu, e.c.ts);
}

void StateMachine::PushTaskNewtask(const TaskNewtask& e) {
  Cpu& cpu = Enter(e.c);
  if (e.c.pid != 0) MarkOnCpu(cpu, e.c.cpu, &Lookup(e.c.pid, {}), e.c.ts);
  clone_flags_[e.pid] = e.clone_flags;
}

void StateMachine::PushSchedProcessFork(const SchedProcessFork& e) {
  Cpu& cpu = Enter(e.c);
  Thread& parent = Lookup(e.parent_pid, e.parent_comm);
  if (e.c.pid == e.parent_pid) MarkOnCpu(cpu, e.c.cpu, &parent, e.c.ts);
  cpu.last_event = LastEvent::kOther;
  int32_t tgid = 0;
  auto kind = ThreadGroups::Clone::kUnknown;
  if (auto it = clone_flags_.find(e.child_pid); it != clone_flags_.end()) {
    tgid = (it->second & kCloneThread) ? parent.tgid : e.child_pid;
    kind = ThreadGroups::KindOf(it->second);
    clone_flags_.erase(it);
  }
  if (tgid != 0) tgid_hint_[e.child_pid] = tgid;
  Thread& child = NewThread(e.child_pid, e.child_comm, e.c.ts, true);
  if (child.tgid == 0) child.tgid = tgid;
  groups_.Forked(parent, child, kind);
  child.tracked = child.tracked || parent.tracked;
  child.user_thread = parent.user_thread;
  // Until wake_up_new_task it is not runnable, but it is nothing else either: count
  // its creation as part of its first wait for a CPU.
  child.state = Microstate::kWaitCpuWakeup;
  if (caps_.syscalls) child.syscall = kInForkReturn;
  child.cpu = e.c.cpu;
}

void StateMachine::PushTaskRename(const TaskRename& e) {
  Enter(e.c);
  Thread& t = Lookup(e.pid, e.oldcomm);
  t.comm = std::string(e.newcomm);
}

void StateMachine::PushSchedProcessExec(const SchedProcessExec& e) {
  Cpu& cpu = Enter(e.c);
  const uint32_t leader = e.old_pid != e.pid ? by_tid_.Get(e.pid) : 0;
  // A non-leader thread that execs takes over the leader's tid.
  if (e.old_pid != e.pid && by_tid_.Get(e.old_pid) != 0) {
    uint32_t id = by_tid_.Get(e.old_pid);
    by_tid_.Set(e.old_pid, 0);
    by_tid_.Set(e.pid, id);
    threads_[id - 1].tid = e.pid;
  }
  Thread& t = Lookup(e.pid, {});
  groups_.Execed(t, e.pid, e.old_pid, leader != 0 ? thread_ptrs_[leader - 1] : nullptr);
  MarkOnCpu(cpu, e.c.cpu, &t, e.c.ts);
  t.user_thread = true;
  cpu.last_event = LastEvent::kOther;
}

void StateMachine::PushSchedProcessExit(const SchedProcessExit& e) {
  Cpu& cpu = Enter(e.c);
  Thread& t = Lookup(e.pid, e.comm);
  if (e.c.pid == e.pid) MarkOnCpu(cpu, e.c.cpu, &t, e.c.ts);
  cpu.last_event = LastEvent::kOther;
  t.exiting = true;
  for (Observer* p : On(Hook::kExit)) p->OnExit(t, e.c.ts);
}

void StateMachine::PushSchedProcessFree(const SchedProcessFree& e) {
  Enter(e.c);
  if (by_tid_.Get(e.pid) == 0) {
    Flag(Anomaly::kFreeOfUnknownThread, nullptr);
    return;
  }
  Thread& t = threads_[by_tid_.Get(e.pid) - 1];
  if (!t.freed) EndLifetime(t, e.c.ts);
  by_tid_.Set(e.pid, 0);
}

void StateMachine::EndLifetime(Thread& t, int64_t ts) {
  FlushHeld(t);
  Transition(t, t.state, t.abstract, ts);
  if (t.syscall == kSyscallUnknown && caps_.syscalls) Resolve(t, kSyscallUnknown);
  CloseOpenSyscall(t, ts);
  t.end_ts = ts;
  t.freed = true;
  t.on_cpu = false;
}

void StateMachine::PushIrqFrame(Cpu& cpu, IrqKind kind, const std::string* name, int64_t ts) {
  if (cpu.irq_depth < static_cast<int>(cpu.irq_stack.size()))
    cpu.irq_stack[cpu.irq_depth] = {kind, name, ts};
  ++cpu.irq_depth;
  if (kind == IrqKind::kHardirq || kind == IrqKind::kVector) ++cpu.hardirq_depth;
  RefreshRunning(cpu, ts);
}

void StateMachine::PopIrqFrame(Cpu& cpu, int32_t cpu_id, IrqKind kind, int64_t ts) {
  if (cpu.irq_depth == 0) {
    Flag(Anomaly::kIrqExitWithoutEntry, nullptr);
    cpu.last_event = LastEvent::kIrqExit;
    return;
  }
  --cpu.irq_depth;
  IrqFrame frame{kind, nullptr, ts};
  if (cpu.irq_depth < static_cast<int>(cpu.irq_stack.size())) frame = cpu.irq_stack[cpu.irq_depth];
  if (frame.kind == IrqKind::kHardirq || frame.kind == IrqKind::kVector) --cpu.hardirq_depth;
  if (frame.kind != kind) Flag(Anomaly::kIrqExitMismatch, nullptr);
  if (frame.name) {
    IrqInterval iv{frame.kind,  *frame.name, cpu_id,
                   frame.start, ts,          cpu.current_known ? cpu.current : nullptr};
    for (Observer* p : On(Hook::kIrq)) p->OnIrq(iv);
  }
  cpu.last_event = LastEvent::kIrqExit;
  RefreshRunning(cpu, ts);
}

const std::string* StateMachine::IrqName(int32_t irq, std::string_view name) {
  auto [it, inserted] = irq_names_.try_emplace(irq);
  if (inserted) it->second = fmt::format("irq:{} {}", irq, name);
  return &it->second;
}

const std::string* StateMachine::VectorName(std::string_view name) {
  auto it = vector_names_.find(std::string(name));
  if (it == vector_names_.end())
    it = vector_names_.emplace(std::string(name), fmt::format("vector:{}", name)).first;
  return &it->second;
}

const std::string* StateMachine::SoftirqName(uint32_t vec, std::string_view name) {
  auto [it, inserted] = softirq_names_.try_emplace(vec);
  if (inserted)
    it->second = name.empty() ? fmt::format("softirq:{}", vec) : fmt::format("softirq:{}", name);
  return &it->second;
}

void StateMachine::PushIrqHandlerEntry(const IrqHandlerEntry& e) {
  Cpu& cpu = Enter(e.c);
  if (e.c.pid != 0 && !cpu.current_known) MarkOnCpu(cpu, e.c.cpu, &Lookup(e.c.pid, {}), e.c.ts);
  PushIrqFrame(cpu, IrqKind::kHardirq, IrqName(e.irq, e.name), e.c.ts);
}

void StateMachine::PushIrqHandlerExit(const IrqHandlerExit& e) {
  Cpu& cpu = Enter(e.c);
  PopIrqFrame(cpu, e.c.cpu, IrqKind::kHardirq, e.c.ts);
}

void StateMachine::PushIrqVector(const IrqVector& e) {
  Cpu& cpu = Enter(e.c);
  if (e.entry) {
    if (e.c.pid != 0 && !cpu.current_known) MarkOnCpu(cpu, e.c.cpu, &Lookup(e.c.pid, {}), e.c.ts);
    // The tick may end the running task's slice (a wakeup inside it overrides this); it
    // also reads the runqueue clock.
    if (e.name == "local_timer") {
      cpu.candidate = CauseKind::kPreemptTick;
      NoteRqClock(cpu, e.c.ts);
    } else if (e.name == "reschedule" && (e.c.flags & kFlagNeedResched)) {
      NoteRemoteReschedule(cpu, e.c.ts);
    }
    PushIrqFrame(cpu, IrqKind::kVector, VectorName(e.name), e.c.ts);
  } else {
    PopIrqFrame(cpu, e.c.cpu, IrqKind::kVector, e.c.ts);
  }
}

void StateMachine::PushSoftirq(const Softirq& e) {
  Cpu& cpu = Enter(e.c);
  if (e.phase == SoftirqPhase::kRaise) return;
  if (e.phase == SoftirqPhase::kEntry) {
    if (e.c.pid != 0 && !cpu.current_known) MarkOnCpu(cpu, e.c.cpu, &Lookup(e.c.pid, {}), e.c.ts);
    PushIrqFrame(cpu, IrqKind::kSoftirq, SoftirqName(e.vec, e.name), e.c.ts);
  } else {
    PopIrqFrame(cpu, e.c.cpu, IrqKind::kSoftirq, e.c.ts);
  }
}

// nmi_handler is emitted when a handler finished; it occupied [ts - delta_ns, ts].
void StateMachine::PushNmiHandler(const NmiHandler& e) {
  Cpu& cpu = Enter(e.c);
  int64_t start = e.c.ts - std::max<int64_t>(0, e.delta_ns);
  Thread* t = cpu.current_known ? cpu.current : nullptr;
  if (t && t->on_cpu) {
    start = std::max(start, t->since);
    EmitSegment(*t, t->state, t->abstract, t->since, start);
    EmitSegment(*t, Microstate::kIrq, AbstractState::kNone, start, e.c.ts);
    t->since = e.c.ts;
  }
  IrqInterval iv{IrqKind::kNmi, nmi_name_, e.c.cpu, start, e.c.ts, t};
  for (Observer* p : On(Hook::kIrq)) p->OnIrq(iv);
}

void StateMachine::PushSysEnter(const SysEnter& e) {
  Cpu& cpu = Enter(e.c);
  Thread& t = EventThread(cpu, e.c.pid);
  t.user_thread = true;
  t.fault_pending = false;
  if (t.syscall == kSyscallUnknown) {
    Resolve(t, kNotInSyscall);
  } else if (t.syscall >= 0) {
    Flag(Anomaly::kSysEnterWhileInSyscall, &t);
  }
  if (!RunsHere(cpu, e.c.cpu, t)) MarkOnCpu(cpu, e.c.cpu, &t, e.c.ts);
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
  Thread& t = EventThread(cpu, e.c.pid);
  t.user_thread = true;
  if (t.syscall == kSyscallUnknown) Resolve(t, e.id);
  if (!RunsHere(cpu, e.c.cpu, t)) MarkOnCpu(cpu, e.c.cpu, &t, e.c.ts);
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
  cpu.last_event = LastEvent::kSysExit;
  RefreshRunning(cpu, e.c.ts);
}

void StateMachine::PushPageFault(const PageFault& e) {
  Cpu& cpu = Enter(e.c);
  if (e.c.pid == 0) return;
  Thread& t = Lookup(e.c.pid, {});
  MarkOnCpu(cpu, e.c.cpu, &t, e.c.ts);
  if (e.user) t.user_thread = true;
  t.fault_pending = true;
  cpu.last_event = LastEvent::kOther;
}

void StateMachine::PushOtherEvent(const EventCommon& c, int /*type_id*/) {
  Cpu& cpu = Enter(c);
  if (c.pid != 0 && !(c.flags & (kFlagHardirq | kFlagSoftirq | kFlagNmi)))
    MarkOnCpu(cpu, c.cpu, &Lookup(c.pid, {}), c.ts);
  cpu.last_event = LastEvent::kOther;
}

void StateMachine::PushLostEvents(const LostEvents& e) {
  if (static_cast<size_t>(e.cpu) >= cpus_.size()) cpus_.resize(e.cpu + 1);
  cur_ts_ = e.ts;
  cur_cpu_ = e.cpu;
  Flag(Anomaly::kLostEvents, nullptr, e.count > 0 ? e.count : 1);
  // Anything that ran or waited on that CPU may have changed state unseen.
  for (Thread& t : threads_)
    if (t.cpu == e.cpu && !t.freed) t.lost_touched = true;
  Cpu& cpu = cpus_[e.cpu];
  ResetClock(cpu);
  cpu.rq_clock_ts = -1;
  SetCurrent(cpu, e.cpu, cpu.current, false, e.ts);
  cpu.irq_depth = 0;
  cpu.hardirq_depth = 0;
  cpu.resched_seen = false;
  cpu.candidate = CauseKind::kPreemptUnknown;
  for (Observer* p : On(Hook::kLostEvents)) p->OnLostEvents(e.cpu, e.ts, e.count);
}

void StateMachine::CutSegments(int64_t ts) {
  for (Thread& t : threads_) {
    if (t.held_from >= 0) FlushHeld(t);
    if (t.freed || ts <= t.since) continue;
    Transition(t, t.state, t.abstract, ts);
  }
}

void StateMachine::SeedThread(int32_t tid, int32_t tgid, std::string_view comm, char letter,
                              int64_t syscall, int32_t cpu, int64_t ts) {
  if (first_ts_ < 0) first_ts_ = ts;
  tgid_hint_[tid] = tgid;
  Thread& t = NewThread(tid, comm, ts, false);
  t.tgid = tgid;
  t.tracked = true;
  t.cpu = cpu;
  if (syscall != kSyscallUnknown || !caps_.syscalls) {
    t.syscall = caps_.syscalls ? syscall : kNotInSyscall;
    t.user_thread = true;
  }
  uint16_t bits = 0;
  switch (letter) {
    case 'R':
      // Running or queued: which one, /proc does not say; the first event will.
      t.state = Microstate::kUnknown;
      return;
    case 'S':
      bits = kStateInterruptible;
      break;
    case 'D':
      bits = kStateUninterruptible;
      break;
    case 'T':
      bits = kStateStopped;
      break;
    case 't':
      bits = kStateTraced;
      break;
    case 'Z':
      bits = kStateZombie;
      break;
    case 'I':
      bits = kStateInterruptible;
      break;
    default:
      return;
  }
  AbstractState abstract;
  t.state = SleepState(bits, t, &abstract);
  t.abstract = abstract;
}

// A syscall still open when the thread's observed life ends (exit_group, or the end of
// the trace) is reported as not completed.
void StateMachine::CloseOpenSyscall(Thread& t, int64_t ts) {
  if (t.syscall < 0) return;
  SyscallInterval s{&t,
                    t.syscall,
                    t.syscall_enter_seen ? t.syscall_start : t.first_ts,
                    ts,
                    t.syscall_enter_seen,
                    false};
  for (Observer* p : On(Hook::kSyscall)) p->OnSyscall(s);
  t.syscall = kNotInSyscall;
}

void StateMachine::Finish(int64_t end_ts) {
  if (finished_) return;
  finished_ = true;
  end_ts = std::max(end_ts, last_ts_);
  for (Thread& t : threads_) {
    FlushHeld(t);
    if (t.freed) continue;
    Transition(t, t.state, t.abstract, end_ts);
    if (t.syscall == kSyscallUnknown && caps_.syscalls) Resolve(t, kSyscallUnknown);
    CloseOpenSyscall(t, end_ts);
    t.end_ts = end_ts;
  }
  groups_.Resolve(threads_);
  for (Observer* p : On(Hook::kTraceEnd)) p->OnTraceEnd(end_ts);
}

}  // namespace cstool
