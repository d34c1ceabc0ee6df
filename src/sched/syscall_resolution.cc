// Deferred syscall resolution. A thread alive before the trace began is first seen in
// the middle of something: until an event shows whether it is inside a syscall (its
// sys_enter or sys_exit, a return to user mode), its on-CPU and sleep segments and the
// cause of its sleeps are held, labelled by what is known (running, sleeping
// interruptibly...), and relabelled here once the answer comes (or labelled unknown
// when it never does).
#include <algorithm>
#include <vector>

#include "sched/state_machine.h"
#include "sched/state_machine_inl.h"

namespace cstool {

// A segment of a thread whose syscall state is not known yet: held back until Resolve
// (or labelled unknown when the trace has no syscall events, or too much is held).
void StateMachine::EmitUnresolvedSegment(Thread& t, Microstate s, AbstractState a, int32_t cpu,
                                         int64_t start, int64_t end) {
  if (caps_.syscalls) {
    if (t.pending_segments.size() < kMaxPendingSegments) {
      t.pending_segments.push_back({s, a, cpu, start, end});
      return;
    }
    // Give up waiting: what was pending stays unknown, and so does the rest (unless the
    // thread is taken for a kernel thread: then this segment is resolved as one).
    if (ResolveUnanswered(t)) {
      Deliver(t, causes_.Resolved(t, s, a, kNotInSyscall), cpu, start, end);
      return;
    }
    Flag(Anomaly::kPendingResolutionOverflow, &t);
  }
  if (a == AbstractState::kRunning && t.syscall == kSyscallUnknown) s = Microstate::kUnknown;
  Deliver(t, s, cpu, start, end);
}

// The thread now known to be (or not be) inside syscall `s` since before its pending
// period: relabel what waited for that answer and hand it to the observers.
void StateMachine::Resolve(Thread& t, int64_t s) {
  bool in_syscall = s >= 0;
  int64_t nr = s;
  std::vector<Thread::Segment> segments;
  segments.swap(t.pending_segments);
  t.syscall = s;
  for (auto& seg : segments)
    Deliver(t, causes_.Resolved(t, seg.state, seg.abstract, s), seg.cpu, seg.start, seg.end);
  // Held segments (not final until the thread's switch) take the answer too.
  for (auto& seg : t.held_segments)
    if (seg.abstract != AbstractState::kNone) {
      seg.state = causes_.Resolved(t, seg.state, seg.abstract, s);
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
    t.state = causes_.Resolved(t, t.state, t.abstract, s);
    t.abstract = AbstractState::kNone;
  }
  if (s == kSyscallUnknown) t.syscall = kSyscallAbandoned;  // stop waiting; stay unknown
}

// Never seen in a syscall or in user mode (a syscall, a user page fault, an exec) in a
// trace that records every task's syscalls, yet switched out to sleep twice or more, each
// switch traced: a kernel thread the file does not name as one (trace-cmd's files name
// none; cstool's recordings list the kernel's threads). A user thread sleeps again inside
// one syscall only in a kernel loop (poll rechecking its files), and then sys_exit
// usually shows before its second sleep. (A task the kernel traces nothing of but its
// wakeups, untraced switch-outs, is no evidence either way; nor is a thread the recorder
// kept out of tracing, its own.)
bool StateMachine::TakenForKernelThread(const Thread& t) const {
  return caps_.syscalls && follow_all_ && !kernel_threads_named_ && !t.user_thread &&
         !t.kernel_thread && !t.recorder && t.placement.untraced_switch_outs == 0 &&
         t.pending_switches.size() >= 2;
}

bool StateMachine::ResolveUnanswered(Thread& t) {
  if (!TakenForKernelThread(t)) {
    Resolve(t, kSyscallUnknown);
    return false;
  }
  t.kernel_thread = true;
  ++inferred_kernel_threads_;
  Resolve(t, kNotInSyscall);
  return true;
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

}  // namespace cstool
