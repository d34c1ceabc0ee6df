#include "sched/cause_attribution.h"

namespace cstool {

SwitchCause CauseAttribution::Voluntary(uint16_t bits, const Thread& t) const {
  if ((bits & (kStateDead | kStateZombie)) || t.exiting) return {CauseKind::kExit, -1};
  if (bits & (kStateStopped | kStateTraced)) return {CauseKind::kStop, -1};
  if (t.syscall >= 0) return {CauseKind::kSleepSyscall, static_cast<int32_t>(t.syscall)};
  if (t.fault_pending) return {CauseKind::kSleepFault, -1};
  return {CauseKind::kSleepKernel, -1};
}

SwitchCause CauseAttribution::Involuntary(const Thread& prev, std::string_view next_comm,
                                          const NeedResched& resched) const {
  if (syscalls_.Class(prev.syscall) == SyscallClass::kYield) return {CauseKind::kYield, -1};
  if (next_comm.starts_with("migration/")) return {CauseKind::kPreemptMigration, -1};
  return {resched.Cause(), -1};
}

PreemptedAt CauseAttribution::Where(bool preempted_in_kernel, const Thread& prev, LastEvent last) {
  if (preempted_in_kernel) return PreemptedAt::kKernel;
  if (!IsInSyscall(prev.syscall) && last == LastEvent::kSysExit) return PreemptedAt::kSyscallReturn;
  if (!IsInSyscall(prev.syscall) && last == LastEvent::kIrqExit) return PreemptedAt::kIrqReturn;
  return PreemptedAt::kOther;
}

Microstate CauseAttribution::SleepState(uint16_t bits, const Thread& t,
                                        AbstractState* abstract) const {
  *abstract = AbstractState::kNone;
  if (bits & (kStateStopped | kStateTraced)) return Microstate::kStopped;
  if (bits & (kStateDead | kStateZombie)) return Microstate::kZombie;
  bool unknown = t.syscall == kSyscallUnknown;
  if (t.syscall == kSyscallAbandoned)
    return bits & kStateUninterruptible ? Microstate::kSleepUninterruptible : Microstate::kSleep;
  if (bits & kStateUninterruptible) {
    // Paging is a D sleep in a page fault. With the faults in the trace, a D sleep outside
    // a syscall with none pending is the kernel's own (the cgroup-v1 freezer, task work on
    // the way back to user mode), as its cause (sleep:kernel) says. (Of a thread not yet
    // known in or out of a syscall, a fault may have begun before the trace.)
    if (fault_events_ && !t.fault_pending && !unknown) return Microstate::kSleepUninterruptible;
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

Microstate CauseAttribution::Resolved(const Thread& t, Microstate s, AbstractState a,
                                      int64_t nr) const {
  const bool in_syscall = nr >= 0;
  if (a == AbstractState::kNone) return s;
  if (nr == kSyscallUnknown) return Microstate::kUnknown;
  if (a == AbstractState::kRunning)
    return in_syscall || t.kernel_thread ? Microstate::kSys : Microstate::kUser;
  if (a == AbstractState::kSleepInterruptible) {
    SyscallClass c = in_syscall ? syscalls_.Class(nr) : SyscallClass::kOther;
    return c == SyscallClass::kFutex  ? Microstate::kSleepFutex
           : c == SyscallClass::kPoll ? Microstate::kSleepPoll
                                      : Microstate::kSleep;
  }
  return in_syscall || !t.user_thread ? Microstate::kSleepUninterruptible
                                      : Microstate::kSleepPaging;
}

}  // namespace cstool
