#include "sched/cause_attribution.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>

namespace cstool {
namespace {

class CauseAttributionTest : public ::testing::Test {
 protected:
  SyscallTable syscalls;
  CauseAttribution causes{syscalls, /*fault_events=*/true};
  CauseAttribution causes_without_faults{syscalls, /*fault_events=*/false};
  Thread t;
};

TEST_F(CauseAttributionTest, VoluntaryCauseIsWhatTheThreadWasIn) {
  t.syscall = SYS_read;
  EXPECT_EQ(causes.Voluntary(kStateInterruptible, t).kind, CauseKind::kSleepSyscall);
  EXPECT_EQ(causes.Voluntary(kStateInterruptible, t).syscall, SYS_read);
  EXPECT_EQ(causes.Voluntary(kStateStopped, t).kind, CauseKind::kStop);
  EXPECT_EQ(causes.Voluntary(kStateDead, t).kind, CauseKind::kExit);
  t.syscall = kNotInSyscall;
  t.fault_pending = true;
  EXPECT_EQ(causes.Voluntary(kStateUninterruptible, t).kind, CauseKind::kSleepFault);
  t.fault_pending = false;
  EXPECT_EQ(causes.Voluntary(kStateUninterruptible, t).kind, CauseKind::kSleepKernel);
  t.exiting = true;
  EXPECT_EQ(causes.Voluntary(kStateInterruptible, t).kind, CauseKind::kExit);
}

TEST_F(CauseAttributionTest, PreemptionIsWhatAskedBeforeNeedReschedShowed) {
  NeedResched r;
  t.syscall = kNotInSyscall;
  EXPECT_EQ(causes.Involuntary(t, "b", r).kind, CauseKind::kPreemptUnknown);
  r.candidate = CauseKind::kPreemptWakeup;
  EXPECT_FALSE(r.Note(0, 10)) << "no flag set";
  EXPECT_TRUE(r.Note(kFlagNeedResched, 20));
  EXPECT_EQ(r.seen_ts, 20);
  r.candidate = CauseKind::kPreemptTick;  // later candidates do not change the origin
  EXPECT_FALSE(r.Note(kFlagNeedResched, 30));
  EXPECT_EQ(causes.Involuntary(t, "b", r).kind, CauseKind::kPreemptWakeup);
  EXPECT_EQ(causes.Involuntary(t, "migration/1", r).kind, CauseKind::kPreemptMigration);
  t.syscall = SYS_sched_yield;
  EXPECT_EQ(causes.Involuntary(t, "b", r).kind, CauseKind::kYield);
  r.Reset();
  EXPECT_FALSE(r.seen);
  EXPECT_EQ(r.Cause(), CauseKind::kPreemptUnknown);
}

TEST_F(CauseAttributionTest, WherePreemptedFollowsTheLastEvent) {
  t.syscall = kNotInSyscall;
  EXPECT_EQ(CauseAttribution::Where(true, t, LastEvent::kSysExit), PreemptedAt::kKernel);
  EXPECT_EQ(CauseAttribution::Where(false, t, LastEvent::kSysExit), PreemptedAt::kSyscallReturn);
  EXPECT_EQ(CauseAttribution::Where(false, t, LastEvent::kIrqExit), PreemptedAt::kIrqReturn);
  EXPECT_EQ(CauseAttribution::Where(false, t, LastEvent::kOther), PreemptedAt::kOther);
  t.syscall = SYS_read;  // still in a syscall: not on a return path
  EXPECT_EQ(CauseAttribution::Where(false, t, LastEvent::kIrqExit), PreemptedAt::kOther);
}

TEST_F(CauseAttributionTest, SleepStatesAndTheirResolution) {
  AbstractState abstract;
  t.syscall = SYS_futex;
  EXPECT_EQ(causes.SleepState(kStateInterruptible, t, &abstract), Microstate::kSleepFutex);
  EXPECT_EQ(abstract, AbstractState::kNone);
  t.syscall = SYS_poll;
  EXPECT_EQ(causes.SleepState(kStateInterruptible, t, &abstract), Microstate::kSleepPoll);
  t.syscall = kNotInSyscall;
  t.user_thread = true;
  t.fault_pending = true;
  EXPECT_EQ(causes.SleepState(kStateUninterruptible, t, &abstract), Microstate::kSleepPaging);
  t.fault_pending = false;  // no fault: the kernel's own D sleep
  EXPECT_EQ(causes.SleepState(kStateUninterruptible, t, &abstract),
            Microstate::kSleepUninterruptible);
  EXPECT_EQ(causes_without_faults.SleepState(kStateUninterruptible, t, &abstract),
            Microstate::kSleepPaging);
  t.fault_pending = true;
  t.user_thread = false;  // a kernel thread's D sleep is not paging
  EXPECT_EQ(causes.SleepState(kStateUninterruptible, t, &abstract),
            Microstate::kSleepUninterruptible);
  // Not known yet: labelled abstractly, resolved once the syscall is known (a fault may
  // have begun before the trace).
  t.syscall = kSyscallUnknown;
  t.fault_pending = false;
  EXPECT_EQ(causes.SleepState(kStateUninterruptible, t, &abstract), Microstate::kUnknown);
  EXPECT_EQ(abstract, AbstractState::kSleepUninterruptible);
  t.user_thread = true;
  EXPECT_EQ(causes.Resolved(t, Microstate::kUnknown, abstract, kNotInSyscall),
            Microstate::kSleepPaging);
  t.user_thread = false;
  EXPECT_EQ(causes.SleepState(kStateInterruptible, t, &abstract), Microstate::kUnknown);
  EXPECT_EQ(abstract, AbstractState::kSleepInterruptible);
  EXPECT_EQ(causes.Resolved(t, Microstate::kUnknown, abstract, SYS_futex), Microstate::kSleepFutex);
  EXPECT_EQ(causes.Resolved(t, Microstate::kUnknown, AbstractState::kRunning, SYS_read),
            Microstate::kSys);
  EXPECT_EQ(causes.Resolved(t, Microstate::kUnknown, AbstractState::kRunning, kNotInSyscall),
            Microstate::kUser);
  EXPECT_EQ(causes.Resolved(t, Microstate::kUnknown, abstract, kSyscallUnknown),
            Microstate::kUnknown);
  EXPECT_EQ(causes.SleepState(kStateStopped, t, &abstract), Microstate::kStopped);
}

}  // namespace
}  // namespace cstool
