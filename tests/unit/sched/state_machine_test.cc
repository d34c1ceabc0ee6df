// Synthetic event sequences for every state-machine rule: each test scripts what the
// kernel would emit and checks microstates (exact ns), causes and anomalies.
#include "sched/state_machine.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/support/sim.h"

namespace cstool::testing {
namespace {

using M = Microstate;

#define EXPECT_TILED(sim)                           \
  do {                                              \
    std::string why;                                \
    EXPECT_TRUE((sim).SumsToLifetime(&why)) << why; \
  } while (0)

// A thread born in the trace: fork -> wakeup_new -> runs -> read blocks -> woken -> exits.
TEST(StateMachine, ForkedThreadFullLifecycle) {
  TrackingPolicy policy;
  policy.known_tgids = {{100, 100}};
  Sim s({}, policy);
  s.Switch(0, 0, 0, kR, 100);  // parent 100 starts running
  s.SysEnter(10, 0, 100, 56);  // clone
  s.Fork(20, 0, 100, 101, /*thread=*/false);
  s.Wake(25, 0, 100, 101, 1, 0, WakeupKind::kWakeupNew);
  s.Switch(40, 1, 0, kR, 101);          // child switched in on CPU1: waited 15 ns
  s.SysExit(45, 1, 101, 56);            // return from fork: sys 5 ns
  s.SysEnter(60, 1, 101, kRead);        // user 15 ns
  s.Switch(70, 1, 101, kS, 0);          // blocks in read: sys 10 ns
  s.WakeBoth(100, 0, 100, 101, 1);      // sleep 30 ns; CPU1 idle: preempted at once
  s.Switch(130, 1, 0, kR, 101);         // the kernel switched at the wakeup's clock: sys 30
  s.SysExit(135, 1, 101, kRead);        // sys 5
  s.SysEnter(140, 1, 101, kExitGroup);  // user 5
  s.Exit(150, 1, 101);
  s.Switch(160, 1, 101, kStateZombie, 0);  // sys 20 (140..160)
  s.Free(200, 0, 100, 101);                // zombie 40, until reaped
  s.Finish(300);

  const ThreadReport& r = s.Report(101);
  EXPECT_EQ(r.thread->first_ts, 25);  // runnable from wakeup_new on: its life begins there
  EXPECT_EQ(r.thread->end_ts, 200);
  EXPECT_EQ(r.thread->tgid, 101);  // forked without CLONE_THREAD: its own process
  EXPECT_EQ(s.Micro(101, M::kWaitCpuWakeup), 15);
  EXPECT_EQ(s.Micro(101, M::kSys), 5 + 10 + 30 + 5 + 20);
  EXPECT_EQ(r.placement.in_early_ns, 30);
  EXPECT_EQ(s.Micro(101, M::kUser), 15 + 5);
  EXPECT_EQ(s.Micro(101, M::kSleep), 30);
  EXPECT_EQ(s.Micro(101, M::kZombie), 40);
  EXPECT_EQ(s.Micro(101, M::kUnknown), 0);
  EXPECT_EQ(r.voluntary, 2u);
  EXPECT_EQ(r.involuntary, 0u);
  EXPECT_EQ(s.Cause(101, "sleep:read"), 1u);
  EXPECT_EQ(s.Cause(101, "exit"), 1u);
  auto read = r.syscalls.at(kRead);
  EXPECT_EQ(read.calls, 1u);
  EXPECT_EQ(read.blocked, 1u);
  EXPECT_EQ(read.time_ns, 75);
  // exit_group ends at the final switch: the zombie's wait for its parent (160..200) is
  // not time inside it. Not completed: it never returns.
  auto exit_group = r.syscalls.at(kExitGroup);
  EXPECT_EQ(exit_group.calls, 1u);
  EXPECT_EQ(exit_group.time_ns, 160 - 140);
  EXPECT_EQ(exit_group.blocked, 0u);
  EXPECT_EQ(r.wakeups, 2u);  // wakeup_new and the read wakeup
  EXPECT_TILED(s);
}

// What happens on the parent's CPU while it is preempted between creating its child and
// waking it (wake_up_new_task): nothing, an interval cut (msa), or lost events.
enum class WhileForking { kNothing, kCut, kLoss };

// Parent 100 forks child 101 inside clone at 20, is preempted by 200 at 30 and back at
// 1000; the child's wakeup_new comes at 1010 and it runs on CPU 1 at 1040.
void ForkWhilePreempted(Sim& s, WhileForking meanwhile) {
  s.Switch(0, 0, 0, kR, 100);
  s.SysEnter(10, 0, 100, 56);  // clone
  s.Fork(20, 0, 100, 101, /*thread=*/false);
  s.Switch(30, 0, 100, kR, 200);  // the parent preempted inside clone
  if (meanwhile == WhileForking::kCut) s.Cut(500);
  if (meanwhile == WhileForking::kLoss) s.Lost(500, 0, 3);
  s.Switch(1000, 0, 200, kS, 100);
  s.Wake(1010, 0, 100, 101, 1, 0, WakeupKind::kWakeupNew);
  s.Switch(1040, 1, 0, kR, 101);
  s.Finish(1100);
}

// The parent preempted between the child's creation and wake_up_new_task: the child is
// not runnable until that wakeup (the kernel's run delay begins there), so the wait is
// its parent's, in the parent's own states, and the child's life and wait begin at the
// wakeup. (A wait from the fork on had the child 100 ms over its kernel run delay.)
TEST(StateMachine, ChildWaitsFromWakeupNewNotFromFork) {
  TrackingPolicy policy;
  policy.known_tgids = {{100, 100}, {200, 200}};
  Sim s({}, policy);
  ForkWhilePreempted(s, WhileForking::kNothing);

  const ThreadReport& child = s.Report(101);
  EXPECT_EQ(child.thread->first_ts, 1010);
  EXPECT_EQ(s.Micro(101, M::kWaitCpuWakeup), 30);
  EXPECT_EQ(s.Micro(101, M::kWaitCpuPreempted), 0);
  EXPECT_EQ(s.Micro(100, M::kWaitCpuPreempted), 1000 - 30);  // its own wait, in clone
  EXPECT_TILED(s);
}

// An interval cut (msa) or lost events on the parent's CPU while the parent is still
// creating the child give the child no state before its wakeup_new: its life still begins
// there.
TEST(StateMachine, ACutOrALossBeforeWakeupNewStartsNoWait) {
  for (const WhileForking meanwhile : {WhileForking::kCut, WhileForking::kLoss}) {
    const bool lose = meanwhile == WhileForking::kLoss;
    TrackingPolicy policy;
    policy.known_tgids = {{100, 100}, {200, 200}};
    Sim s({}, policy);
    ForkWhilePreempted(s, meanwhile);

    const ThreadReport& child = s.Report(101);
    EXPECT_EQ(child.thread->first_ts, 1010) << lose;
    EXPECT_EQ(s.Micro(101, M::kWaitCpuWakeup), 30) << lose;
    EXPECT_EQ(s.Micro(101, M::kUnknown), 0) << lose;
    EXPECT_TILED(s);
  }
}

// Without wakeup_new in the trace, nothing tells when the child became runnable: it waits
// from its creation to its switch-in.
TEST(StateMachine, ChildWithoutWakeupNewWaitsFromFork) {
  TrackingPolicy policy;
  policy.known_tgids = {{100, 100}};
  Sim s({}, policy);
  s.Switch(0, 0, 0, kR, 100);
  s.SysEnter(10, 0, 100, 56);
  s.Fork(20, 0, 100, 101, /*thread=*/false);
  s.Switch(40, 1, 0, kR, 101);
  s.Finish(100);

  EXPECT_EQ(s.Report(101).thread->first_ts, 20);
  EXPECT_EQ(s.Micro(101, M::kWaitCpuWakeup), 20);
  EXPECT_TILED(s);
}

// A child its parent had not woken yet (wake_up_new_task) when the trace ended: in a trace
// that records those wakeups (another child's came), it was never runnable in the trace,
// so its observed life has not begun and it waits for nothing; in one that records none,
// it waits from its fork, as it would up to a switch-in.
TEST(StateMachine, AChildNotYetWokenAtTheEndWaitsOnlyWhereTheTraceHasNoWakeupNew) {
  for (const bool records_wakeup_new : {true, false}) {
    SCOPED_TRACE(records_wakeup_new);
    TrackingPolicy policy;
    policy.known_tgids = {{100, 100}, {200, 200}};
    Sim s({}, policy);
    s.Switch(0, 0, 0, kR, 100);
    s.SysEnter(10, 0, 100, 56);  // clone
    s.Fork(20, 0, 100, 101, /*thread=*/false);
    if (records_wakeup_new) s.Wake(25, 0, 100, 101, 1, 0, WakeupKind::kWakeupNew);
    s.Switch(40, 1, 0, kR, 101);
    s.SysExit(50, 0, 100, 56, 0, 101);
    s.SysEnter(60, 0, 100, 56);  // clone again
    s.Fork(70, 0, 100, 102, /*thread=*/false);
    s.Switch(80, 0, 100, kR, 200);  // preempted before waking it
    s.Finish(1000);

    const ThreadReport& child = s.Report(102);
    EXPECT_EQ(child.thread->first_ts, records_wakeup_new ? 1000 : 70);
    EXPECT_EQ(s.Micro(102, M::kWaitCpuWakeup), records_wakeup_new ? 0 : 1000 - 70);
    EXPECT_EQ(s.Micro(100, M::kWaitCpuPreempted), 1000 - 80);  // the parent's own wait
    EXPECT_TILED(s);
  }
}

// A thread never seen in a syscall or in user mode, in a trace that records every task's
// syscalls, that slept twice (each switch traced): a kernel thread the file does not name
// (trace-cmd's files name none), its runs SYS and its sleeps SLP. One sleep, a syscall
// event, a pid-filtered view (the others' syscalls are not traced), or a recording that
// lists the kernel's threads (cstool's: this one is not among them) leave it unknown.
TEST(StateMachine, AThreadNeverInASyscallThatSleptTwiceIsTakenForAKernelThread) {
  enum class Shown { kTwoSleeps, kOneSleep, kASyscall, kPidFiltered, kKernelThreadsListed };
  for (const Shown shown : {Shown::kTwoSleeps, Shown::kOneSleep, Shown::kASyscall,
                            Shown::kPidFiltered, Shown::kKernelThreadsListed}) {
    SCOPED_TRACE(static_cast<int>(shown));
    TrackingPolicy policy = shown == Shown::kPidFiltered ? Following({99}) : TrackingPolicy{};
    if (shown == Shown::kKernelThreadsListed) policy.kernel_threads = {16};
    Sim s({}, policy);
    s.Switch(0, 0, 0, kR, 15);
    s.Switch(100, 0, 15, kS, 0);
    s.WakeBoth(1'000, 0, 0, 15, 0, kFlagHardirq);
    s.Switch(1'010, 0, 0, kR, 15);
    if (shown == Shown::kASyscall) s.SysExit(1'020, 0, 15, kRead);
    if (shown != Shown::kOneSleep) s.Switch(1'100, 0, 15, kS, 0);
    s.Finish(2'000);

    const bool taken = shown == Shown::kTwoSleeps;
    EXPECT_EQ(s.sm().inferred_kernel_threads(), taken ? 1u : 0u);
    EXPECT_EQ(s.Report(15).thread->kernel_thread, taken);
    if (taken) {
      EXPECT_EQ(s.Micro(15, M::kSleep), 900 + 900);
      EXPECT_EQ(s.Micro(15, M::kSys), 100 + 90);
      EXPECT_EQ(s.Micro(15, M::kUnknown), 0);
    } else if (shown == Shown::kASyscall) {
      EXPECT_EQ(s.Micro(15, M::kSleep), 900 + 900);  // in read, then asleep in the kernel
      EXPECT_EQ(s.Micro(15, M::kUser), 1'100 - 1'020);
    } else {
      EXPECT_EQ(s.Micro(15, M::kSleep), 0);
      EXPECT_GT(s.Micro(15, M::kUnknown), 0);
    }
    EXPECT_TILED(s);
  }
}

// A zombie is reaped when its parent's wait4() returns its pid (sched_process_free,
// run later from an RCU callback, is mostly filtered out of a pid-filtered trace); a
// wait4 that reports a stopped child (WUNTRACED) reaps nothing.
TEST(StateMachine, ParentsWait4ReapsTheZombie) {
  constexpr int64_t kWait4 = 61;  // x86_64
  TrackingPolicy policy;
  policy.known_tgids = {{100, 100}};
  Sim s({}, policy);
  s.Switch(0, 0, 0, kR, 100);
  s.SysEnter(1, 0, 100, 56);
  s.Fork(10, 0, 100, 101, /*thread=*/false);
  s.Wake(11, 0, 100, 101, 1, 0, WakeupKind::kWakeupNew);
  s.Fork(12, 0, 100, 102, /*thread=*/false);
  s.Wake(13, 0, 100, 102, 1, 0, WakeupKind::kWakeupNew);
  s.SysExit(14, 0, 100, 56);
  s.SysEnter(15, 0, 100, kWait4);
  s.Switch(20, 1, 0, kR, 101);
  s.SysExit(21, 1, 101, 56);
  s.SysEnter(30, 1, 101, kExitGroup);
  s.Exit(31, 1, 101);
  s.Switch(35, 1, 101, kStateZombie, 102);
  s.SysExit(50, 0, 100, kWait4, 0, /*ret=*/101);  // reaped: zombie 35..50
  s.SysEnter(60, 0, 100, kWait4);
  s.SysExit(70, 0, 100, kWait4, 0, /*ret=*/102);  // 102 runs: not a reap
  s.Finish(100);
  EXPECT_EQ(s.Report(101).thread->end_ts, 50);
  EXPECT_EQ(s.Micro(101, M::kZombie), 15);
  EXPECT_FALSE(s.Report(102).thread->freed);  // alive to the end
  EXPECT_TILED(s);
}

// An auto-reaped thread is switched out with X and is gone at once: no zombie time.
TEST(StateMachine, ExitedThreadEndsAtItsFinalSwitch) {
  TrackingPolicy policy;
  policy.known_tgids = {{100, 100}};
  Sim s({}, policy);
  s.Switch(0, 0, 0, kR, 100);
  s.SysEnter(1, 0, 100, 56);
  s.Fork(10, 0, 100, 101, /*thread=*/true);
  s.Switch(20, 1, 0, kR, 101);
  s.SysExit(21, 1, 101, 56);
  s.SysEnter(30, 1, 101, 60);  // exit
  s.Exit(31, 1, 101);
  s.Switch(35, 1, 101, kStateDead, 0);
  s.Free(90, 0, 100, 101);  // RCU frees it much later
  s.Finish(100);
  const ThreadReport& r = s.Report(101);
  EXPECT_EQ(r.thread->tgid, 100);
  EXPECT_EQ(r.thread->end_ts, 35);
  EXPECT_EQ(s.Micro(101, M::kZombie), 0);
  EXPECT_EQ(s.Cause(101, "exit"), 1u);
  EXPECT_EQ(r.syscalls.at(60).blocked, 0u);  // the final switch is not a block
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kFreeOfUnknownThread), 0u);
  EXPECT_TILED(s);
}

TEST(StateMachine, SleepKindFollowsSyscall) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysExit(1, 0, 10, kRead);  // resolves: it was inside read since the start
  s.SysEnter(10, 0, 10, kFutex);
  s.Switch(20, 0, 10, kS, 0);
  s.WakeBoth(50, 1, 0, 10, 0, kFlagHardirq);
  s.Switch(60, 0, 0, kR, 10);
  s.SysExit(61, 0, 10, kFutex);
  s.SysEnter(70, 0, 10, kPoll);
  s.Switch(80, 0, 10, kS, 0);
  s.WakeBoth(120, 1, 0, 10, 0);
  s.Switch(130, 0, 0, kR, 10);
  s.SysExit(131, 0, 10, kPoll);
  s.SysEnter(140, 0, 10, kRead);
  s.Switch(150, 0, 10, kD, 0);
  s.WakeBoth(190, 1, 0, 10, 0);
  s.Switch(200, 0, 0, kR, 10);
  s.Finish(210);

  EXPECT_EQ(s.Micro(10, M::kSleepFutex), 30);
  EXPECT_EQ(s.Micro(10, M::kSleepPoll), 40);
  EXPECT_EQ(s.Micro(10, M::kSleepUninterruptible), 40);
  // Each wakeup finds CPU0 idle: the kernel switches at its clock, no run delay.
  EXPECT_EQ(s.Micro(10, M::kWaitCpuWakeup), 0);
  EXPECT_EQ(s.Report(10).placement.in_early_ns, 10 + 10 + 10);
  EXPECT_EQ(s.Cause(10, "sleep:futex"), 1u);
  EXPECT_EQ(s.Cause(10, "sleep:poll"), 1u);
  EXPECT_EQ(s.Cause(10, "sleep:read"), 1u);
  // Running from the first event (0) to the sys_exit at 1 was inside read.
  EXPECT_EQ(s.Micro(10, M::kUnknown), 0);
  EXPECT_EQ(s.Report(10).syscalls.at(kRead).calls, 1u);  // the one entered in the trace
  EXPECT_TILED(s);
}

// Thread 10 leaves a write(2), maybe faults at 8 and is preempted at 12 (in the kernel,
// "R+", or on its way back to user mode), and sleeps in D from 20 to 70 outside any
// syscall: paging or the kernel's own D sleep, as the rules below say.
enum class BeforeTheSleep { kNothing, kFault, kFaultThenKernelPreemption, kFaultThenPreemption };
void DSleepOutsideASyscall(Sim& s, BeforeTheSleep before) {
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(5, 0, 10, kWrite);
  s.SysExit(6, 0, 10, kWrite);
  if (before != BeforeTheSleep::kNothing) s.Fault(8, 0, 10);
  if (before == BeforeTheSleep::kFaultThenKernelPreemption ||
      before == BeforeTheSleep::kFaultThenPreemption) {
    s.Switch(12, 0, 10, kR, 0, before == BeforeTheSleep::kFaultThenKernelPreemption);
    s.Switch(14, 0, 0, kR, 10);
  }
  s.Switch(20, 0, 10, kD, 0);
  s.WakeBoth(70, 1, 0, 10, 0);
  s.Switch(80, 0, 0, kR, 10);
  s.Finish(100);
}

TEST(StateMachine, PageFaultSleepOutsideSyscallIsPaging) {
  Sim s;
  DSleepOutsideASyscall(s, BeforeTheSleep::kFault);
  EXPECT_EQ(s.Micro(10, M::kSleepPaging), 50);
  EXPECT_EQ(s.Cause(10, "sleep:fault"), 1u);
  EXPECT_EQ(s.Report(10).voluntary, 1u);
  EXPECT_TILED(s);
}

TEST(StateMachine, SleepOutsideSyscallWithoutFaultIsKernel) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(5, 0, 10, kWrite);
  s.SysExit(6, 0, 10, kWrite);
  s.Switch(20, 0, 10, kS, 0);
  s.Finish(100);
  EXPECT_EQ(s.Micro(10, M::kSleep), 80);
  EXPECT_EQ(s.Cause(10, "sleep:kernel"), 1u);
}

// A D sleep outside a syscall with no page fault pending is the kernel's (the cgroup-v1
// freezer, task work on the way back to user mode): IO, as its cause, sleep:kernel, says;
// not paging. A preemption on the way back to user mode ("R") ends a fault.
TEST(StateMachine, ADSleepOutsideASyscallWithNoFaultIsTheKernels) {
  for (BeforeTheSleep before : {BeforeTheSleep::kNothing, BeforeTheSleep::kFaultThenPreemption}) {
    SCOPED_TRACE(static_cast<int>(before));
    Sim s;
    DSleepOutsideASyscall(s, before);
    EXPECT_EQ(s.Micro(10, M::kSleepUninterruptible), 50);
    EXPECT_EQ(s.Micro(10, M::kSleepPaging), 0);
    EXPECT_EQ(s.Cause(10, "sleep:kernel"), 1u);
    EXPECT_TILED(s);
  }
}

// A preemption in the kernel ("R+") can come in the fault handler before its sleep: the
// fault stays pending across it.
TEST(StateMachine, AFaultPreemptedInTheKernelStillPagesItsSleep) {
  Sim s;
  DSleepOutsideASyscall(s, BeforeTheSleep::kFaultThenKernelPreemption);
  EXPECT_EQ(s.Micro(10, M::kSleepPaging), 50);
  EXPECT_EQ(s.Cause(10, "sleep:fault"), 1u);
  EXPECT_TILED(s);
}

// A fault may sleep in D more than once (the page's read, then its lock): each sleep is
// paging, until a syscall or another sleep shows it over.
TEST(StateMachine, AFaultThatSleepsTwicePagesBothSleeps) {
  Sim twice;
  twice.Switch(0, 0, 0, kR, 10);
  twice.Fault(8, 0, 10);
  twice.Switch(20, 0, 10, kD, 0);
  twice.WakeBoth(70, 1, 0, 10, 0);
  twice.Switch(80, 0, 0, kR, 10);
  twice.Switch(90, 0, 10, kD, 0);  // the same fault's second sleep
  twice.WakeBoth(120, 1, 0, 10, 0);
  twice.Switch(130, 0, 0, kR, 10);
  twice.SysEnter(140, 0, 10, kWrite);  // back in user mode: the fault is over
  twice.SysExit(141, 0, 10, kWrite);
  twice.Switch(150, 0, 10, kD, 0);  // a D sleep of the kernel's own
  twice.Finish(200);
  EXPECT_EQ(twice.Micro(10, M::kSleepPaging), 50 + 30);
  EXPECT_EQ(twice.Cause(10, "sleep:fault"), 2u);
  EXPECT_EQ(twice.Micro(10, M::kSleepUninterruptible), 50);
  EXPECT_EQ(twice.Cause(10, "sleep:kernel"), 1u);
  EXPECT_TILED(twice);
}

// A trace without page-fault events cannot tell a fault's sleep from the kernel's: a D
// sleep of a user thread outside any syscall is paging, as most are.
TEST(StateMachine, WithoutFaultEventsADSleepOutsideASyscallIsPaging) {
  TraceCapabilities caps;
  caps.page_faults = false;
  Sim s(caps);
  DSleepOutsideASyscall(s, BeforeTheSleep::kNothing);
  EXPECT_EQ(s.Micro(10, M::kSleepPaging), 50);
  EXPECT_EQ(s.Cause(10, "sleep:kernel"), 1u);
  EXPECT_TILED(s);
}

TEST(StateMachine, StoppedThread) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(5, 0, 10, kWrite);
  s.SysExit(6, 0, 10, kWrite);
  s.Switch(20, 0, 10, kStateStopped, 0);
  s.Finish(100);
  EXPECT_EQ(s.Micro(10, M::kStopped), 80);
  EXPECT_EQ(s.Cause(10, "stop"), 1u);
  EXPECT_EQ(s.Report(10).voluntary, 1u);
}

TEST(StateMachine, YieldIsInvoluntaryWithYieldCause) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(10, 0, 10, kSchedYield);
  s.Switch(20, 0, 10, kR, 11);
  s.SysEnter(25, 0, 11, kSchedYield);
  s.Switch(30, 0, 11, kR, 10);
  s.SysExit(31, 0, 10, kSchedYield);
  s.Finish(40);
  EXPECT_EQ(s.Report(10).involuntary, 1u);
  EXPECT_EQ(s.Report(10).voluntary, 0u);
  EXPECT_EQ(s.Cause(10, "yield"), 1u);
  EXPECT_EQ(s.PreemptedAt(10, PreemptedAt::kOther), 1u);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuPreempted), 10);
  EXPECT_EQ(s.Cause(11, "yield"), 1u);
  EXPECT_TILED(s);
}

TEST(StateMachine, YieldWithNothingElseRunnableIsNoSwitch) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(10, 0, 10, kSchedYield);
  s.SysExit(12, 0, 10, kSchedYield);
  s.Finish(20);
  EXPECT_EQ(s.Report(10).voluntary + s.Report(10).involuntary, 0u);
  auto y = s.Report(10).syscalls.at(kSchedYield);
  EXPECT_EQ(y.calls, 1u);
  EXPECT_EQ(y.blocked, 0u);
  EXPECT_EQ(y.time_ns, 2);
}

TEST(StateMachine, WakeupPreemptionOnSameCpu) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(5, 0, 10, kWrite);
  s.WakeBoth(10, 0, 10, 11, 0);         // 10 wakes 11 on its own CPU
  s.Tick(11, 0, 10, kFlagNeedResched);  // the next event shows need-resched
  s.SysExit(12, 0, 10, kWrite, kFlagNeedResched);
  s.Switch(13, 0, 10, kR, 11);  // preempted on the way back to user
  s.Finish(20);
  EXPECT_EQ(s.Cause(10, "preempt:wakeup"), 1u);
  EXPECT_EQ(s.PreemptedAt(10, PreemptedAt::kSyscallReturn), 1u);
  EXPECT_EQ(s.Micro(11, M::kWaitCpuWakeup), 3);
  EXPECT_EQ(s.Report(10).involuntary, 1u);
}

TEST(StateMachine, WakeupFromIrqPreemptsWithIrqCause) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kWrite);
  s.SysExit(2, 0, 10, kWrite);
  s.IrqEntry(10, 0, 10);
  s.WakeBoth(11, 0, 10, 11, 0, kFlagHardirq);
  s.IrqExit(12, 0, 10, 24, kFlagHardirq | kFlagNeedResched);
  s.Switch(13, 0, 10, kR, 11);
  s.Finish(20);
  EXPECT_EQ(s.Cause(10, "preempt:irq"), 1u);
  EXPECT_EQ(s.PreemptedAt(10, PreemptedAt::kIrqReturn), 1u);
  EXPECT_EQ(s.Micro(10, M::kIrq), 2);
  auto& irqs = s.Report(10).irqs;
  ASSERT_EQ(irqs.size(), 1u);
  EXPECT_EQ(*irqs.begin()->first, "irq:24 virtio0");
  EXPECT_EQ(irqs.begin()->second.count, 1u);
  EXPECT_EQ(irqs.begin()->second.time_ns, 2);
  EXPECT_TILED(s);
}

TEST(StateMachine, TickPreemption) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kWrite);
  s.SysExit(2, 0, 10, kWrite);
  s.Vector(100, 0, 10, true);
  s.Vector(104, 0, 10, false, "local_timer", kFlagHardirq | kFlagNeedReschedLazy);
  s.Switch(105, 0, 10, kR, 11);
  s.Finish(110);
  EXPECT_EQ(s.Cause(10, "preempt:tick"), 1u);
  EXPECT_EQ(s.PreemptedAt(10, PreemptedAt::kIrqReturn), 1u);
  EXPECT_EQ(s.Micro(10, M::kIrq), 4);
  EXPECT_EQ(s.Micro(10, M::kUser), 1 + 98 + 1);
  EXPECT_EQ(s.Report(10).irqs.begin()->second.count, 1u);
}

TEST(StateMachine, HrtimerWakeupInsideTickIsIrqNotTick) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kWrite);
  s.SysExit(2, 0, 10, kWrite);
  s.Vector(100, 0, 10, true);
  s.WakeBoth(101, 0, 10, 11, 0, kFlagHardirq);
  s.Vector(104, 0, 10, false, "local_timer", kFlagHardirq | kFlagNeedResched);
  s.Switch(105, 0, 10, kR, 11);
  s.Finish(110);
  EXPECT_EQ(s.Cause(10, "preempt:irq"), 1u);
}

// The tick's wakeup found need-resched set: the kernel switched at its clock (101), inside
// the interrupt, so the rest of the interrupt ran in the wakee's run (its exec runtime).
// Every nanosecond of the interrupt is some task's irq time: 1 the preempted task's, 3
// the wakee's, 4 in all as the interrupt's own record says.
TEST(StateMachine, TheRestOfAnInterruptAfterTheSwitchsInstantIsTheNextTasksIrq) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kWrite);
  s.SysExit(2, 0, 10, kWrite);
  s.Switch(0, 1, 0, kR, 20);
  s.SysEnter(3, 1, 20, kRead);
  s.Switch(5, 1, 20, kS, 0);  // 20 is asleep in read
  s.SysEnter(4, 0, 10, kWrite);
  s.SysExit(6, 0, 10, kWrite);
  s.Vector(100, 0, 10, true);
  s.WakeBoth(101, 0, 10, 20, 0, kFlagHardirq | kFlagNeedResched);
  s.Vector(104, 0, 10, false, "local_timer", kFlagHardirq | kFlagNeedResched);
  s.Soft(104, 0, 10, true);
  s.Soft(106, 0, 10, false);
  s.Switch(107, 0, 10, kR, 20);
  s.SysExit(108, 0, 20, kRead);
  s.Finish(110);
  EXPECT_EQ(s.Micro(10, M::kIrq), 101 - 100);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuPreempted), 110 - 101);
  EXPECT_EQ(s.Micro(20, M::kIrq), 104 - 101);
  EXPECT_EQ(s.Micro(20, M::kSoftirq), 106 - 104);
  EXPECT_EQ(s.Micro(20, M::kSys), (108 - 106) + (5 - 3));
  EXPECT_EQ(s.Micro(10, M::kIrq) + s.Micro(20, M::kIrq), 104 - 100);
  EXPECT_TILED(s);
  // The report's interrupts of each thread say the same: the tick's rest and the softirq
  // after it are the wakee's (both had counted whole for the task the trace shows
  // interrupted, and none for the wakee).
  auto source = [&](int32_t tid, std::string_view name) {
    for (const auto& [key, st] : s.Report(tid).irqs)
      if (*key == name) return st;
    return IrqStats{};
  };
  EXPECT_EQ(source(10, "vector:local_timer").count, 1u);
  EXPECT_EQ(source(10, "vector:local_timer").time_ns, 101 - 100);
  EXPECT_EQ(source(20, "vector:local_timer").count, 1u);
  EXPECT_EQ(source(20, "vector:local_timer").time_ns, 104 - 101);
  EXPECT_EQ(source(10, "softirq:TIMER").count, 0u);
  EXPECT_EQ(source(20, "softirq:TIMER").count, 1u);
  EXPECT_EQ(source(20, "softirq:TIMER").time_ns, 106 - 104);
}

// A hardirq that interrupts a softirq is irq time, the softirq's time resumes after it.
TEST(StateMachine, AHardirqInsideASoftirqIsIrqTime) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.Soft(10, 0, 10, true);
  s.Vector(12, 0, 10, true, "local_timer", kFlagHardirq | kFlagSoftirq);
  s.Vector(15, 0, 10, false, "local_timer", kFlagHardirq | kFlagSoftirq);
  s.Soft(20, 0, 10, false);
  s.Finish(30);
  EXPECT_EQ(s.Micro(10, M::kIrq), 15 - 12);
  EXPECT_EQ(s.Micro(10, M::kSoftirq), (12 - 10) + (20 - 15));
  EXPECT_TILED(s);
}

TEST(StateMachine, RemoteWakeupPreemptsTargetCpu) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);  // victim on CPU0
  s.SysEnter(1, 0, 10, kWrite);
  s.SysExit(2, 0, 10, kWrite);
  s.Switch(0, 1, 0, kR, 20);  // waker on CPU1
  s.SysEnter(3, 1, 20, kWrite);
  s.WakeBoth(10, 1, 20, 11, 0);  // wakes 11 onto CPU0: reschedule IPI there
  s.Vector(12, 0, 10, true, "reschedule", kFlagHardirq | kFlagNeedResched);
  s.Vector(13, 0, 10, false, "reschedule", kFlagHardirq | kFlagNeedResched);
  s.Switch(14, 0, 10, kR, 11);
  s.Finish(20);
  EXPECT_EQ(s.Cause(10, "preempt:wakeup"), 1u);
  EXPECT_EQ(s.PreemptedAt(10, PreemptedAt::kIrqReturn), 1u);
  // CPU0 showed need-resched after the wakeup: the skipped clock update puts the switch
  // at the wakeup (10), for the victim and the wakee alike; the IPI after it was in the
  // wakee's run.
  EXPECT_EQ(s.Micro(11, M::kWaitCpuWakeup), 0);
  EXPECT_EQ(s.Micro(11, M::kIrq), 13 - 12);
  EXPECT_EQ(s.Micro(11, M::kUnknown), 10 + 10 - 1);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuPreempted), 20 - 10);
  EXPECT_EQ(s.Report(10).placement.out_early_ns, 4);
  EXPECT_EQ(s.Report(11).placement.in_early_ns, 4);
}

TEST(StateMachine, KernelPreemptionIsRPlus) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kWrite);
  s.WakeBoth(5, 0, 10, 11, 0);
  s.Switch(6, 0, 10, kR, 11, /*preempt=*/true);
  s.Switch(20, 0, 11, kS, 10);
  s.Finish(30);
  EXPECT_EQ(s.Cause(10, "preempt:wakeup"), 1u);
  EXPECT_EQ(s.PreemptedAt(10, PreemptedAt::kKernel), 1u);
  // Still in write while waiting and after: sys time continues.
  EXPECT_EQ(s.Micro(10, M::kSys), 5 + 10);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuPreempted), 14);
}

TEST(StateMachine, MigrationThreadPreemption) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kWrite);
  s.SysExit(2, 0, 10, kWrite);
  s.Switch(10, 0, 10, kR, 15, false, "migration/0");
  s.Finish(20);
  EXPECT_EQ(s.Cause(10, "preempt:migration"), 1u);
}

TEST(StateMachine, PreemptionWithNoEvidenceIsUnknown) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kWrite);
  s.SysExit(2, 0, 10, kWrite);
  s.Tick(5, 0, 10, 0);
  s.Switch(10, 0, 10, kR, 11);
  s.Finish(20);
  EXPECT_EQ(s.Cause(10, "preempt:unknown"), 1u);
  EXPECT_EQ(s.PreemptedAt(10, PreemptedAt::kOther), 1u);
}

TEST(StateMachine, RunningAtStartResolvedAsUserBySysEnter) {
  Sim s;
  s.Tick(0, 0, 10, 0);  // first event: 10 is running, user/sys not known
  s.IrqEntry(5, 0, 10);
  s.IrqExit(7, 0, 10);
  s.SysEnter(20, 0, 10, kWrite);
  s.Finish(30);
  EXPECT_EQ(s.Micro(10, M::kUser), 5 + 13);
  EXPECT_EQ(s.Micro(10, M::kIrq), 2);
  EXPECT_EQ(s.Micro(10, M::kSys), 10);
  EXPECT_EQ(s.Micro(10, M::kUnknown), 0);
  EXPECT_TILED(s);
}

TEST(StateMachine, RunningAtStartResolvedAsSysBySysExit) {
  Sim s;
  s.Tick(0, 0, 10, 0);
  s.SysExit(20, 0, 10, kRead);
  s.Finish(30);
  EXPECT_EQ(s.Micro(10, M::kSys), 20);
  EXPECT_EQ(s.Micro(10, M::kUser), 10);
  auto read = s.Report(10).syscalls.at(kRead);
  EXPECT_EQ(read.calls, 0u);  // entered before the trace
  EXPECT_EQ(read.time_ns, 20);
}

TEST(StateMachine, RunningAtStartResolvedAsUserByPlainRPreemption) {
  Sim s;
  s.Tick(0, 0, 10, 0);
  s.Vector(10, 0, 10, true);
  s.Vector(12, 0, 10, false, "local_timer", kFlagHardirq | kFlagNeedResched);
  s.Switch(13, 0, 10, kR, 11);
  s.Finish(20);
  EXPECT_EQ(s.Micro(10, M::kUser), 11);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuPreempted), 7);
  EXPECT_EQ(s.Micro(10, M::kUnknown), 0);
}

TEST(StateMachine, SleepingAtStartIsUnknownUntilWoken) {
  Sim s;
  s.Tick(0, 0, 20, 0);
  s.SysEnter(1, 0, 20, kWrite);
  s.WakeBoth(30, 0, 20, 10, 1);  // 10 first appears being woken
  s.Switch(35, 1, 0, kR, 10);
  s.SysExit(36, 1, 10, kFutex);
  s.Finish(40);
  EXPECT_EQ(s.Report(10).thread->first_ts, 0);
  EXPECT_EQ(s.Micro(10, M::kUnknown), 30);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuWakeup), 5);
  EXPECT_EQ(s.Micro(10, M::kSys), 1);
  EXPECT_EQ(s.Micro(10, M::kUser), 4);
  EXPECT_TILED(s);
}

TEST(StateMachine, PendingSleepCauseResolvedBySysExit) {
  Sim s;
  s.Tick(0, 0, 10, 0);         // running, user/sys unknown
  s.Switch(10, 0, 10, kS, 0);  // blocks: in which syscall?
  s.WakeBoth(50, 1, 0, 10, 0, kFlagHardirq);
  s.Switch(60, 0, 0, kR, 10);
  s.SysExit(62, 0, 10, kFutex);  // ... futex, since before the trace began
  s.Finish(70);
  EXPECT_EQ(s.Micro(10, M::kSys), 10 + 10 + 2);  // CPU0 idle: switched in at the wakeup (50)
  EXPECT_EQ(s.Micro(10, M::kSleepFutex), 40);
  EXPECT_EQ(s.Micro(10, M::kUser), 8);
  EXPECT_EQ(s.Cause(10, "sleep:futex"), 1u);
  EXPECT_EQ(s.Report(10).syscalls.at(kFutex).blocked, 1u);
  EXPECT_TILED(s);
}

TEST(StateMachine, NeverResolvedRunningTimeIsUnknown) {
  Sim s;
  s.Tick(0, 0, 10, 0);
  s.Switch(10, 0, 10, kS, 0);
  s.Finish(30);
  EXPECT_EQ(s.Micro(10, M::kUnknown), 30);
  EXPECT_EQ(s.Cause(10, "sleep:kernel"), 1u);  // released at the end, unresolved
  EXPECT_TILED(s);
}

// A kernel thread never enters a syscall: its on-CPU time is sys from its first event,
// where a user thread's stays unknown until a syscall event tells. The recorder lists
// kernel threads (their parent is kthreadd); kthreadd itself is pid 2.
TEST(StateMachine, AKernelThreadRunsInSysWithoutASyscall) {
  TrackingPolicy policy;
  policy.kernel_threads = {10};
  Sim s({}, policy);
  s.Tick(0, 0, 10, 0);
  s.Switch(10, 0, 10, kS, 2);
  s.Switch(15, 0, 2, kD, 0);
  s.Finish(30);
  EXPECT_EQ(s.Micro(10, M::kSys), 10);
  EXPECT_EQ(s.Micro(10, M::kSleep), 20);
  EXPECT_EQ(s.Micro(10, M::kUnknown), 0);
  EXPECT_EQ(s.Cause(10, "sleep:kernel"), 1u);
  EXPECT_EQ(s.Micro(2, M::kSys), 5);
  EXPECT_EQ(s.Micro(2, M::kSleepUninterruptible), 15);
  EXPECT_TILED(s);
}

// kthreadd's children are kernel threads from their fork on.
TEST(StateMachine, AThreadKthreaddForksIsAKernelThread) {
  Sim s;
  s.Switch(0, 0, 0, kR, 2);
  s.Fork(10, 0, 2, 50, /*thread=*/false);
  s.Wake(12, 0, 2, 50, 1, 0, WakeupKind::kWakeupNew);
  s.Switch(20, 0, 2, kS, 0);
  s.Switch(30, 1, 0, kR, 50);
  s.Switch(45, 1, 50, kS, 0);
  s.Finish(60);
  EXPECT_EQ(s.Micro(50, M::kWaitCpuWakeup), 18);  // from its wakeup_new
  EXPECT_EQ(s.Micro(50, M::kSys), 15);
  EXPECT_EQ(s.Micro(50, M::kSleep), 15);
  EXPECT_EQ(s.Micro(50, M::kUnknown), 0);
  EXPECT_TRUE(s.Report(50).thread->kernel_thread);
  EXPECT_FALSE(s.Report(2).thread->user_thread);
  EXPECT_TILED(s);
}

// msa / record -p attached to a kernel thread asleep: its sleep is a kernel sleep, its
// run sys (the seed says kernel thread: /proc's syscall line names no syscall for it).
TEST(StateMachine, ASeededKernelThreadSleepsInTheKernel) {
  Sim s;
  s.machine().SeedThread({.tid = 15,
                          .tgid = 15,
                          .comm = "rcu_preempt",
                          .state = "I",
                          .syscall = kNotInSyscall,
                          .cpu = 0,
                          .kernel_thread = true},
                         0);
  s.WakeBoth(10, 1, 0, 15, 0, kFlagHardirq);
  s.Switch(12, 0, 0, kR, 15);
  s.Switch(20, 0, 15, kS, 0);
  s.Finish(30);
  EXPECT_EQ(s.Micro(15, M::kSleep), 10 + 10);
  EXPECT_EQ(s.Micro(15, M::kWaitCpuWakeup), 2);
  EXPECT_EQ(s.Micro(15, M::kSys), 8);
  EXPECT_EQ(s.Micro(15, M::kUnknown), 0);
  EXPECT_EQ(s.Cause(15, "sleep:kernel"), 1u);
  EXPECT_TILED(s);
}

TEST(StateMachine, NoSyscallEventsMeansOnCpuIsUser) {
  TraceCapabilities caps;
  caps.syscalls = false;
  Sim s(caps);
  s.Tick(0, 0, 10, 0);
  s.Switch(10, 0, 10, kS, 0);
  s.Finish(30);
  EXPECT_EQ(s.Micro(10, M::kUser), 10);
  EXPECT_EQ(s.Micro(10, M::kSleep), 20);
}

TEST(StateMachine, TidReuseMakesANewThread) {
  Sim s;
  s.Switch(0, 0, 0, kR, 100);
  s.SysEnter(1, 0, 100, 56);
  s.Fork(10, 0, 100, 101, false);
  s.Exit(20, 1, 101);
  s.Switch(21, 1, 101, kStateDead, 0);
  s.Free(30, 0, 100, 101);
  s.Fork(40, 0, 100, 101, false);  // the same tid again
  s.Finish(50);
  int n = 0;
  for (const ThreadReport& r : s.model().threads)
    if (r.thread && r.thread->tid == 101) ++n;
  EXPECT_EQ(n, 2);
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kTidReusedWithoutFree), 0u);
  EXPECT_EQ(s.Report(101).thread->first_ts, 40);
  EXPECT_EQ(s.Report(101).Lifetime(), 10);
  EXPECT_EQ(s.Report(101).thread->tgid, 101);  // a new process, not a thread
  EXPECT_TILED(s);
}

// A thread's syscall table is kept per syscall number, also for numbers that share the
// report's lookup slot (nr modulo 16: write, pread64 and 33 alternate), and per thread.
TEST(StateMachine, SyscallsThatShareALookupSlotKeepTheirOwnCounts) {
  Sim s;
  s.Switch(0, 0, 0, kR, 100);
  s.Switch(0, 1, 0, kR, 200);
  int64_t ts = 10;
  for (int round = 0; round < 3; ++round) {
    for (const int64_t nr : {1, 17, 33}) {
      s.SysEnter(ts, 0, 100, nr);
      s.SysExit(ts + nr, 0, 100, nr);  // nr ns inside
      ts += 100;
    }
  }
  s.SysEnter(ts, 1, 200, 17);
  s.SysExit(ts + 5, 1, 200, 17);
  s.Finish(ts + 100);
  const ThreadReport& r = s.Report(100);
  for (const int64_t nr : {1, 17, 33}) {
    EXPECT_EQ(r.syscalls.at(nr).calls, 3u) << nr;
    EXPECT_EQ(r.syscalls.at(nr).time_ns, 3 * nr) << nr;
  }
  EXPECT_EQ(r.syscalls.size(), 3u);
  const ThreadReport& other = s.Report(200);
  EXPECT_EQ(other.syscalls.size(), 1u);
  EXPECT_EQ(other.syscalls.at(17).calls, 1u);
  EXPECT_EQ(other.syscalls.at(17).time_ns, 5);
}

// Pid 0 is the idle task, which is never forked: such a record is damaged, counted, and
// makes no thread (each one would otherwise end the last "thread 0" and begin another).
TEST(StateMachine, AForkOfPidZeroMakesNoThread) {
  Sim s;
  s.Switch(0, 0, 0, kR, 100);
  s.ForkWithoutFlags(10, 0, 100, 0);
  s.ForkWithoutFlags(20, 0, 100, -5);
  s.ForkWithoutFlags(30, 0, 100, 101);
  s.Finish(50);
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kForkOfPidZero), 2u);
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kTidReusedWithoutFree), 0u);
  std::vector<int32_t> tids;
  for (const ThreadReport& r : s.model().threads)
    if (r.thread) tids.push_back(r.thread->tid);
  EXPECT_EQ(tids, (std::vector<int32_t>{100, 101}));
  EXPECT_EQ(s.Report(101).thread->first_ts, 30);
  EXPECT_EQ(s.Report(101).thread->forked_by, s.Report(100).thread);
  EXPECT_TILED(s);
}

// A task's own events are matched to the CPU's current thread without a tid lookup;
// once that thread is freed, its reused tid is a different thread.
TEST(StateMachine, AReusedTidIsNotTheCpusFreedCurrentThread) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kRead);
  s.Free(5, 1, 0, 10);          // freed while CPU 0 still believes it runs it
  s.Fork(6, 1, 20, 10, false);  // tid 10 again: a new process
  s.SysExit(8, 0, 10, 56);      // its first event (clone returning), on CPU 0
  s.Finish(20);
  const Thread* old_thread = nullptr;
  const Thread* new_thread = nullptr;
  for (const ThreadReport& r : s.model().threads)
    if (r.thread && r.thread->tid == 10)
      (r.thread->first_ts == 6 ? new_thread : old_thread) = r.thread;
  ASSERT_NE(old_thread, nullptr);
  ASSERT_NE(new_thread, nullptr);
  EXPECT_EQ(old_thread->end_ts, 5);
  EXPECT_EQ(s.Report(10).thread, new_thread);
  EXPECT_EQ(new_thread->times[static_cast<size_t>(M::kUser)], 12);  // 8..20 on CPU 0
  EXPECT_TILED(s);
}

TEST(StateMachine, LostEventsFlagThreadsOfThatCpu) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.Switch(0, 1, 0, kR, 20);
  s.Lost(50, 1, 7);
  s.Tick(51, 1, 20, 0);
  s.Finish(60);
  EXPECT_FALSE(s.Report(10).thread->lost_touched);
  EXPECT_TRUE(s.Report(20).thread->lost_touched);
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kLostEvents), 7u);
  EXPECT_TILED(s);
}

// A thread first seen after a loss was alive before it, unseen: its switches then may
// be among the lost events. One forked after the loss began after it.
TEST(StateMachine, LostEventsFlagThreadsFirstSeenAfterThem) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.Lost(50, 1, 7);
  s.Switch(60, 1, 0, kR, 30);
  s.Fork(70, 0, 10, 40, /*thread=*/false);
  s.Switch(80, 0, 10, kR, 40);
  s.Finish(100);
  EXPECT_FALSE(s.Report(10).thread->lost_touched);
  EXPECT_TRUE(s.Report(30).thread->lost_touched);
  EXPECT_FALSE(s.Report(40).thread->lost_touched);
  EXPECT_TILED(s);
}

// Events lost on CPU 1 went missing after its last record (300, where the loss is
// dated) and before its next one (550). What ran, waited or slept there may have
// changed unseen then: each such thread is unknown from 300 until its own next event,
// or, if nothing shows it, until CPU 1's next record, where it resumes its state. The
// thread that was running there is unknown until its own next event. CPU 0's thread
// is untouched.
//
//          0    100      250  300      550  560  600       900
//   CPU 0: 10 runs ..............................................
//   CPU 1: 30 runs | 20 runs   (sys) |  lost  | usr | sys | 40 runs
//          30 sleeps in read from 100 ..................................
//          40 woken by 20 at 250, waits . . . . . . . . . . | runs
TEST(StateMachine, LostEventsMakeTheGapUnknown) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kWrite);
  s.SysExit(2, 0, 10, kWrite);
  s.Switch(0, 1, 0, kR, 30);
  s.SysEnter(50, 1, 30, kRead);
  s.Switch(100, 1, 30, kS, 20);
  s.WakeBoth(250, 1, 20, 40, 1);
  s.SysEnter(300, 1, 20, kWrite);
  s.Lost(300, 1, 9);
  s.SysExit(550, 1, 20, kWrite);  // 20's own next event, and CPU 1's first record after
  s.SysEnter(560, 1, 20, kRead);
  s.Switch(600, 1, 20, kS, 40);
  s.SysEnter(650, 1, 40, kWrite);
  s.Finish(900);
  // 20: unknown before it was first seen (0..100) and from the gap to its next event.
  EXPECT_EQ(s.Micro(20, M::kUnknown), 100 + 250);
  EXPECT_EQ(s.Micro(20, M::kUser), 200 + 10);  // 100..300, 550..560
  EXPECT_EQ(s.Micro(20, M::kSys), 40);         // 560..600
  EXPECT_EQ(s.Micro(20, M::kSleep), 300);
  // 30: asleep in read from 100, unknown in the gap, asleep again after it.
  EXPECT_EQ(s.Micro(30, M::kUnknown), 250);
  EXPECT_EQ(s.Micro(30, M::kSleep), 200 + 350);
  // 40: waiting for the CPU from 250; the gap cuts 300..550 out of that wait, and so
  // out of what it waited behind.
  EXPECT_EQ(s.Micro(40, M::kUnknown), 250 + 250);
  EXPECT_EQ(s.Micro(40, M::kWaitCpuWakeup), 50 + 50);
  EXPECT_EQ(s.Micro(40, M::kUser), 50);
  EXPECT_EQ(s.Micro(40, M::kSys), 250);
  int64_t behind = 0;
  for (const WaitedBehind& w : s.Report(40).waited_behind) behind += w.time_ns;
  EXPECT_EQ(behind, 100);
  EXPECT_EQ(s.Micro(10, M::kUnknown), 0);
  EXPECT_FALSE(s.Report(10).thread->lost_touched);
  for (int tid : {20, 30, 40}) EXPECT_TRUE(s.Report(tid).thread->lost_touched) << tid;
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kEventFromSleepingThread), 0u);
  EXPECT_TILED(s);
}

// 10 runs on CPU 0 (user mode, as its syscalls show) and 20 on CPU 1, in a write from
// 300, CPU 1's last record before it loses events.
void LoseCpuOneEventsAt300(Sim& s) {
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kWrite);
  s.SysExit(2, 0, 10, kWrite);
  s.Switch(0, 1, 0, kR, 20);
  s.SysEnter(300, 1, 20, kWrite);
  s.Lost(300, 1, 9);
}

// CPU 1 loses events and 20, running there, shows up on CPU 0 at 400: its switch-out
// was among them. It is unknown only until then, and no anomaly says it ran twice.
TEST(StateMachine, LostEventsEndAtTheThreadsNextEventOnAnotherCpu) {
  Sim s;
  LoseCpuOneEventsAt300(s);
  s.Switch(400, 0, 10, kS, 20);
  s.SysExit(450, 0, 20, kWrite);
  s.Finish(900);
  EXPECT_EQ(s.Micro(20, M::kUser), 300 + 450);  // 0..300, 450..900
  EXPECT_EQ(s.Micro(20, M::kUnknown), 100);
  EXPECT_EQ(s.Micro(20, M::kSys), 50);
  EXPECT_TRUE(s.Report(20).thread->lost_touched);
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kSwitchInAlreadyOnCpu), 0u);
  EXPECT_TILED(s);
}

// Lost events after a CPU's last record, with none after them (the trace ends, or the
// rest of the CPU's data was damaged): its thread is unknown to the end.
TEST(StateMachine, LostEventsWithNoRecordAfterLastToTheEnd) {
  Sim s;
  LoseCpuOneEventsAt300(s);
  s.SysEnter(600, 0, 10, kRead);
  s.Finish(900);
  EXPECT_EQ(s.Micro(20, M::kUnknown), 600);
  EXPECT_EQ(s.Micro(20, M::kUser), 300);
  EXPECT_EQ(s.Micro(10, M::kUnknown), 0);
  EXPECT_TILED(s);
}

// After the gap another thread runs on CPU 1: the one that ran there before was
// switched out unseen, and stays unknown until its own next event (a wakeup at 700).
TEST(StateMachine, LostEventsTakeTheRunningThreadOffItsCpu) {
  Sim s;
  s.Switch(0, 1, 0, kR, 20);
  s.SysEnter(300, 1, 20, kWrite);
  s.Lost(300, 1, 9);
  s.SysEnter(550, 1, 30, kRead);
  s.WakeBoth(700, 1, 30, 20, 1);
  s.Finish(900);
  EXPECT_EQ(s.Micro(20, M::kUser), 300);
  EXPECT_EQ(s.Micro(20, M::kUnknown), 400);  // 300..700
  EXPECT_EQ(s.Micro(20, M::kWaitCpuWakeup), 200);
  EXPECT_EQ(s.Micro(20, M::kSys), 0);
  EXPECT_TILED(s);
}

// 40 is woken onto CPU 1 (from CPU 0) while CPU 1's events are being lost: it may have
// run there unseen, so its wait is unknown until CPU 1's next record, and waits after.
TEST(StateMachine, LostEventsCoverAThreadQueuedInTheGap) {
  Sim s;
  LoseCpuOneEventsAt300(s);
  s.WakeBoth(350, 0, 10, 40, 1);
  s.SysExit(550, 1, 20, kWrite);
  s.Switch(600, 1, 20, kS, 40);
  s.SysEnter(650, 1, 40, kRead);
  s.Finish(900);
  EXPECT_EQ(s.Micro(40, M::kUnknown), 350 + 200);  // before it was seen; 350..550
  EXPECT_EQ(s.Micro(40, M::kWaitCpuWakeup), 50);
  EXPECT_EQ(s.Micro(40, M::kUser), 50);
  EXPECT_EQ(s.Micro(40, M::kSys), 250);
  EXPECT_TRUE(s.Report(40).thread->lost_touched);
  EXPECT_TILED(s);
}

// 40 sleeps in a read on CPU 0 from 100 while CPU 1 loses events in [300, 500). Its
// wakeup may have been among them (a sched_waking is recorded on the waker's CPU), so
// when it next runs with no wakeup seen it was asleep only until the loss began.
void SleepWhileCpuOneLosesEvents(Sim& s) {
  s.Switch(0, 0, 0, kR, 40);
  s.SysEnter(50, 0, 40, kRead);
  s.Switch(100, 0, 40, kS, 10);
  s.Switch(110, 1, 0, kR, 20);
  s.SysEnter(300, 1, 20, kWrite);
  s.Lost(300, 1, 9);
  s.SysExit(500, 1, 20, kWrite);  // CPU 1's next record
}

TEST(StateMachine, ASleeperSwitchedInWithoutAWakeupAfterALossWasUnknownFromIt) {
  Sim s;
  SleepWhileCpuOneLosesEvents(s);
  s.Switch(700, 0, 10, kR, 40);
  s.SysExit(750, 0, 40, kRead);
  s.Finish(900);
  EXPECT_EQ(s.Micro(40, M::kSleep), 200);    // 100..300
  EXPECT_EQ(s.Micro(40, M::kUnknown), 400);  // 300..700, not a wait for a CPU
  EXPECT_EQ(s.Micro(40, M::kWaitCpuPreempted), 0);
  EXPECT_EQ(s.Micro(40, M::kSys), 50 + 50);
  EXPECT_TRUE(s.Report(40).thread->lost_touched);
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kSwitchInWithoutWakeup), 0u);
  EXPECT_TILED(s);
}

// msa cuts every open stretch at its interval boundaries: a cut inside the sleep does not
// hide where the sleep began (the loss at 300 was during it). What came before the cut
// was reported already; from the cut on the time is unknown.
TEST(StateMachine, AnIntervalCutInsideTheSleepKeepsTheLossRule) {
  Sim s;
  SleepWhileCpuOneLosesEvents(s);
  s.Cut(600);
  s.Switch(700, 0, 10, kR, 40);
  s.Finish(900);
  EXPECT_EQ(s.Micro(40, M::kUnknown), 100);  // 600..700
  EXPECT_EQ(s.Micro(40, M::kWaitCpuPreempted), 0);
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kSwitchInWithoutWakeup), 0u);
  EXPECT_TILED(s);
}

// A sleep whose syscall is not known yet (a thread asleep since before the trace) is a
// sleep too: its lost wakeup makes it unknown from the loss.
TEST(StateMachine, AnUnresolvedSleepAfterALossIsUnknownFromIt) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.Switch(100, 0, 10, kS, 40);  // first seen here: asleep since before the trace
  s.Switch(100, 0, 40, kS, 10);  // 40 sleeps, in what is not known
  s.Switch(110, 1, 0, kR, 20);
  s.SysEnter(300, 1, 20, kWrite);
  s.Lost(300, 1, 9);
  s.SysExit(500, 1, 20, kWrite);
  s.Switch(700, 0, 10, kR, 40);
  s.SysExit(750, 0, 40, kRead);  // it was in read(2): the sleep resolves
  s.Finish(900);
  EXPECT_EQ(s.Micro(40, M::kSleep), 200);          // 100..300
  EXPECT_EQ(s.Micro(40, M::kUnknown), 100 + 400);  // before it was seen; 300..700
  EXPECT_EQ(s.Micro(40, M::kWaitCpuPreempted), 0);
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kSwitchInWithoutWakeup), 0u);
  EXPECT_TILED(s);
}

// The same sleeper first shows by its own event, its switch-in unrecorded.
TEST(StateMachine, ASleepersFirstEventAfterALossEndsItsSleepWhereTheLossBegan) {
  Sim s;
  SleepWhileCpuOneLosesEvents(s);
  s.SysExit(700, 0, 40, kRead);
  s.Finish(900);
  EXPECT_EQ(s.Micro(40, M::kSleep), 200);
  EXPECT_EQ(s.Micro(40, M::kUnknown), 400);
  EXPECT_TRUE(s.Report(40).thread->lost_touched);
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kEventFromSleepingThread), 1u);
  EXPECT_TILED(s);
}

// A loss that ended before the sleep began says nothing of its wakeup: switched in with
// none, it waited for a CPU (a pending signal), as without any loss.
TEST(StateMachine, ALossBeforeASleepLeavesItsSwitchInWithoutWakeupAWait) {
  Sim s;
  LoseCpuOneEventsAt300(s);
  s.SysExit(500, 1, 20, kWrite);
  s.SysEnter(550, 0, 10, kRead);
  s.Switch(600, 0, 10, kS, 0);
  s.Switch(800, 0, 0, kR, 10);
  s.Finish(900);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuPreempted), 200);
  EXPECT_EQ(s.Micro(10, M::kUnknown), 0);
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kSwitchInWithoutWakeup), 1u);
  EXPECT_TILED(s);
}

// 40 sleeps on CPU 1 when CPU 1 loses events: unknown through the gap, then its sleep
// resumes at CPU 1's next record. Switched in with no wakeup, it may have been woken in
// the gap: unknown from it.
TEST(StateMachine, ASleepResumedAfterItsCpusLossMayHaveEndedInIt) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.Switch(0, 1, 0, kR, 40);
  s.SysEnter(50, 1, 40, kRead);
  s.Switch(100, 1, 40, kS, 20);
  s.SysEnter(300, 1, 20, kWrite);
  s.Lost(300, 1, 9);
  s.SysExit(500, 1, 20, kWrite);
  s.Switch(700, 0, 10, kR, 40);
  s.Finish(900);
  EXPECT_EQ(s.Micro(40, M::kSleep), 200);
  EXPECT_EQ(s.Micro(40, M::kUnknown), 400);  // the gap 300..500, then 500..700
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kSwitchInWithoutWakeup), 0u);
  EXPECT_TILED(s);
}

// The record that ends CPU 1's gap is 20's own switch to sleep: the gap is before that
// sleep, so its switch-in with no wakeup is a pending signal's wait for a CPU.
TEST(StateMachine, ASleepBegunAtTheRecordEndingALossIsNotInIt) {
  Sim s;
  LoseCpuOneEventsAt300(s);
  s.Switch(500, 1, 20, kS, 0);
  s.Switch(800, 0, 10, kR, 20);
  s.Finish(900);
  EXPECT_EQ(s.Micro(20, M::kUnknown), 200);  // 300..500
  EXPECT_EQ(s.Micro(20, M::kWaitCpuPreempted), 300);
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kSwitchInWithoutWakeup), 1u);
  EXPECT_TILED(s);
}

// CPU 1's first record says events were lost before it: they were lost from the start,
// so a thread queued there earlier (40, woken at 200 from CPU 0) may have run there.
TEST(StateMachine, LostEventsBeforeACpusFirstRecordGoBackToTheStart) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kWrite);
  s.SysExit(2, 0, 10, kWrite);
  s.WakeBoth(200, 0, 10, 40, 1);
  s.Lost(500, 1, 9);  // dated at CPU 1's first record
  s.Switch(500, 1, 0, kR, 40);
  s.SysEnter(600, 1, 40, kRead);
  s.Finish(900);
  EXPECT_EQ(s.Micro(40, M::kUnknown), 500);  // before it was seen, then 200..500
  EXPECT_EQ(s.Micro(40, M::kWaitCpuWakeup), 0);
  EXPECT_EQ(s.Micro(40, M::kUser), 100);
  EXPECT_TRUE(s.Report(40).thread->lost_touched);
  EXPECT_EQ(s.Micro(10, M::kUnknown), 0);
  EXPECT_TILED(s);
}

// 20, queued on CPU 1 before its events were lost, is switched in on CPU 0 inside the
// gap, before any syscall said whether it runs in user or kernel mode: it runs there, and
// CPU 1's next record must not take it off CPU 0.
TEST(StateMachine, LostEventsLeaveAThreadRunningElsewhereOnItsCpu) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kWrite);
  s.SysExit(2, 0, 10, kWrite);
  s.Switch(0, 1, 0, kR, 20);
  s.Switch(100, 1, 20, kR, 30, true);
  s.SysEnter(300, 1, 30, kWrite);
  s.Lost(300, 1, 9);
  s.Switch(300, 0, 10, kR, 20, true);
  s.SysExit(550, 1, 30, kWrite);  // closes CPU 1's gap
  for (const Thread& t : s.sm().threads())
    if (t.tid == 20) {
      EXPECT_TRUE(t.on_cpu && t.cpu == 0);
    }
  s.SysEnter(600, 0, 20, kRead);  // 20 on CPU 0, as the model has it
  s.Finish(900);
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kEventFromSleepingThread), 0u);
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kSwitchOutNotCurrent), 0u);
  EXPECT_EQ(s.Micro(20, M::kUser), 100 + 300);  // 0..100 and 300..600 (the read settles it)
  EXPECT_EQ(s.Micro(20, M::kSys), 300);
  EXPECT_TILED(s);
}

// CPU 1's data could not be read at all (a loss reported before any record, never
// closed). CPU 0 goes idle at 200 with 10 still queued there: it must have moved to CPU 1
// unseen, and is unknown from there. 40, woken onto CPU 1 at 300, is unknown from then.
TEST(StateMachine, AnUnreadableCpuMakesWhatWentThereUnknown) {
  Sim s;
  s.Lost(0, 1, -1);
  s.Switch(10, 0, 0, kR, 10);
  s.SysEnter(11, 0, 10, kWrite);
  s.SysExit(12, 0, 10, kWrite);
  s.Switch(100, 0, 10, kR, 20, true);
  s.SysEnter(110, 0, 20, kRead);
  s.Switch(200, 0, 20, kS, 0);
  s.Wake(300, 0, 0, 40, 1, kFlagHardirq, WakeupKind::kWakeup);
  s.Finish(900);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuPreempted), 100);  // 100..200
  EXPECT_EQ(s.Micro(10, M::kUnknown), 700);           // 200..900
  EXPECT_TRUE(s.Report(10).thread->lost_touched);
  EXPECT_EQ(s.Micro(40, M::kUnknown), 890);  // before it was seen, and from its wakeup
  EXPECT_EQ(s.Micro(40, M::kWaitCpuWakeup), 0);
  EXPECT_TRUE(s.Report(40).thread->lost_touched);
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kLostEvents), 1u);
  EXPECT_TILED(s);
}

// 40 is woken onto CPU 1 while CPU 1 loses events, and shows up on CPU 0 before CPU 1's
// next record: it may have run on CPU 1 in between, so its wait is unknown.
TEST(StateMachine, AThreadQueuedInAGapAndSeenElsewhereWaitedUnknown) {
  Sim s;
  LoseCpuOneEventsAt300(s);
  s.WakeBoth(350, 0, 10, 40, 1);
  s.Switch(450, 0, 10, kR, 40, true);
  s.SysEnter(460, 0, 40, kRead);
  s.SysExit(550, 1, 20, kWrite);
  s.Finish(900);
  EXPECT_EQ(s.Micro(40, M::kUnknown), 350 + 100);  // before it was seen; 350..450
  EXPECT_EQ(s.Micro(40, M::kWaitCpuWakeup), 0);
  EXPECT_EQ(s.Micro(40, M::kUser), 10);
  EXPECT_TRUE(s.Report(40).thread->lost_touched);
  EXPECT_TILED(s);
}

// 50 exits on CPU 1 right before its events are lost (its final switch among them); its
// parent's wait4 then reaps it, which ends its life though the model never saw it a zombie.
TEST(StateMachine, AThreadExitingIntoLostEventsIsReapedByItsParent) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kWait4);
  s.Switch(2, 0, 10, kS, 0);
  s.Switch(0, 1, 0, kR, 50);
  s.SysEnter(280, 1, 50, 231);  // exit_group
  s.Exit(290, 1, 50);
  s.Lost(290, 1, 9);
  s.Switch(550, 1, 0, kR, 0);  // CPU 1's next record: idle
  s.WakeBoth(560, 1, 0, 10, 0);
  s.Switch(570, 0, 0, kR, 10);
  s.SysExit(600, 0, 10, kWait4, 0, /*ret=*/50);
  s.Finish(900);
  EXPECT_EQ(s.Report(50).thread->end_ts, 600);
  EXPECT_EQ(s.Micro(50, M::kUnknown), 600 - 290);
  EXPECT_TILED(s);
}

// An interrupt open when CPU 1 lost events: whether it ended is unknown, so the time
// after the gap is not the interrupt's. The interrupt's exit does not show which task
// runs: 20 is unknown until its own next event.
TEST(StateMachine, LostEventsCloseTheInterruptNesting) {
  Sim s;
  s.Switch(0, 1, 0, kR, 20);
  s.SysEnter(100, 1, 20, kWrite);
  s.IrqEntry(300, 1, 20);
  s.Lost(300, 1, 9);
  s.IrqExit(550, 1, 20);
  s.SysExit(600, 1, 20, kWrite);
  s.Finish(900);
  EXPECT_EQ(s.Micro(20, M::kIrq), 0);
  EXPECT_EQ(s.Micro(20, M::kUnknown), 300);  // 300..600
  EXPECT_EQ(s.Micro(20, M::kSys), 200);      // 100..300
  EXPECT_TILED(s);
}

// Without task_rename events (trace-cmd -e sched, record --no-defaults -e sched), an
// exec's new name shows first at the thread's switch-out; its exit names it too.
TEST(StateMachine, WithoutRenameEventsAThreadIsNamedAtItsSwitchOutsAndExit) {
  TraceCapabilities caps;
  caps.renames = false;
  Sim s(caps);
  s.Switch(0, 0, 0, kR, 10, false, "bash");
  s.Switch(100, 0, 10, kR, 0, false, "task", 0, "true");
  EXPECT_EQ(s.sm().threads().front().comm, "true");
  s.Switch(200, 0, 0, kR, 10, false, "true");
  s.Exit(300, 0, 10, "true2");
  s.Finish(400);
  EXPECT_EQ(s.Report(10).thread->comm, "true2");
  // With them, a switch's comm renames no one (task_rename does).
  Sim r;
  r.Switch(0, 0, 0, kR, 10, false, "bash");
  r.Switch(100, 0, 10, kR, 0, false, "task", 0, "true");
  r.Finish(400);
  EXPECT_EQ(r.Report(10).thread->comm, "bash");
}

TEST(StateMachine, SoftirqAndNmiStealTime) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kWrite);
  s.SysExit(2, 0, 10, kWrite);
  s.Soft(10, 0, 10, true);
  s.Soft(15, 0, 10, false);
  s.Nmi(30, 0, 10, 4);
  s.Finish(40);
  EXPECT_EQ(s.Micro(10, M::kSoftirq), 5);
  EXPECT_EQ(s.Micro(10, M::kIrq), 4);
  EXPECT_EQ(s.Micro(10, M::kUser), 1 + 8 + 11 + 10);
  EXPECT_EQ(s.Report(10).irqs.size(), 2u);
  EXPECT_TILED(s);
}

TEST(StateMachine, SwitchInWithoutWakeupCountsAsWaitingForCpu) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kRead);
  s.Switch(10, 0, 10, kS, 11);  // signal pending: stays runnable, no wakeup comes
  s.Switch(30, 0, 11, kS, 10);
  s.Finish(40);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuPreempted), 20);
  EXPECT_EQ(s.Micro(10, M::kSleep), 0);
  EXPECT_EQ(s.Report(10).voluntary, 1u);  // the kernel counts it voluntary
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kSwitchInWithoutWakeup), 1u);
}

// A trace without wakeup events (record --no-defaults -e sched:sched_switch) shows no
// sleep's end: every sleep lasts until its switch-in, no anomaly; a preemption's wait is
// still a wait.
TEST(StateMachine, WithoutWakeupEventsASleepLastsUntilTheSwitchIn) {
  TraceCapabilities caps;
  caps.waking = false;
  caps.wakeup = false;
  Sim s(caps);
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kRead);
  s.Switch(10, 0, 10, kS, 11);
  s.Switch(30, 0, 11, kR, 10);  // 11 preempted: waits for the CPU from here
  s.Switch(45, 0, 10, kS, 11);
  s.Finish(60);
  EXPECT_EQ(s.Micro(10, M::kSleep), 20 + 15);  // [10, 30) and [45, 60)
  EXPECT_EQ(s.Micro(10, M::kWaitCpuPreempted), 0);
  EXPECT_EQ(s.Micro(11, M::kWaitCpuPreempted), 15);
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kSwitchInWithoutWakeup), 0u);
  EXPECT_TILED(s);
}

TEST(StateMachine, SwitchOutOfNonCurrentIsCounted) {
  const TrackingPolicy policy = Following({12});
  Sim s({}, policy);
  s.Switch(0, 0, 0, kR, 10);   // unfollowed: its switch to 12 may be filtered out
  s.Switch(10, 0, 12, kS, 0);  // 12 was never switched in on CPU0
  s.Finish(20);
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kSwitchOutNotCurrent), 1u);
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kMissingSwitchOut), 0u);
}

// A followed task's switch-out is recorded whatever the filter: when another task shows
// on its CPU without one, the kernel left it out. Its run ends at its last increment;
// the switch counts as voluntary when a wakeup of it comes next.
TEST(StateMachine, AnotherTaskOnTheCpuEndsAnUntracedRun) {
  Sim s(WithIncrements());
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1'000, 0, 10, kRead);
  s.StatRuntime(4'000, 0, 10, 4'000);
  s.SysEnter(8'000, 0, 12, kWrite);  // 12 runs on CPU0: 10's switch-out was not recorded
  s.WakeBoth(9'000, 0, 12, 10, 0);
  s.Switch(9'500, 0, 12, kS, 10);
  s.Finish(20'000);
  const ThreadReport& r = s.Report(10);
  EXPECT_EQ(r.thread->placement.untraced_switch_outs, 1u);
  EXPECT_EQ(r.voluntary, 1u);
  EXPECT_EQ(s.Cause(10, "sleep:untraced"), 1u);
  EXPECT_EQ(s.Micro(10, M::kSys), 3'000 + 10'500);  // to its last increment; again from 9'500
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kMissingSwitchOut), 1u);
  EXPECT_EQ(r.thread->anomalies.Get(Anomaly::kMissingSwitchOut), 1u);  // counted per thread
  EXPECT_EQ(s.Report(12).thread->anomalies.Get(Anomaly::kMissingSwitchOut), 0u);
  EXPECT_TILED(s);
}

// With every task's events in the trace (no pid filter), an interrupt of the idle task on
// the CPU says the task there went to sleep, though its switch-out is not recorded: from
// then on the idle CPU's interrupts are none of its time (the guest agent's threads, whose
// switch-outs this kernel leaves out, took every idle tick on their CPU as irq time, and
// `cstool irq` counted it twice, as theirs and as the idle CPU's).
TEST(StateMachine, AnInterruptOfTheIdleTaskEndsAnUntracedRun) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1'000, 0, 10, kRead);
  s.Vector(5'000, 0, 0, true);  // idle's tick: 10 is no longer running on CPU0
  s.Vector(5'400, 0, 0, false);
  s.WakeBoth(9'000, 1, 20, 10, 0);
  s.Switch(9'500, 0, 0, kR, 10);
  s.Finish(20'000);
  const ThreadReport& r = s.Report(10);
  EXPECT_EQ(r.thread->placement.untraced_switch_outs, 1u);
  EXPECT_EQ(s.Micro(10, M::kIrq), 0);
  // To the tick; again from its wakeup, which an idle CPU answers at once (the switch is
  // placed there).
  EXPECT_EQ(s.Micro(10, M::kSys), 4'000 + 11'000);
  EXPECT_EQ(s.Micro(10, M::kUnknown), 4'000);  // asleep, unseen, until the wakeup
  EXPECT_EQ(r.voluntary, 1u);
  EXPECT_EQ(s.Cause(10, "sleep:untraced"), 1u);
  EXPECT_TILED(s);
}

// With a pid filter the idle task's events are not in the trace; one that is (an
// interrupt's, in an unfollowed context's wakeup of a followed task) says nothing of the
// followed task's run here, and a followed task's running state stays as it was.
TEST(StateMachine, AnInterruptOfTheIdleTaskInAPidFilteredTraceEndsNoRun) {
  Sim s({}, Following({10}));
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1'000, 0, 10, kRead);
  s.Vector(5'000, 0, 0, true);
  s.Vector(5'400, 0, 0, false);
  s.Finish(20'000);
  EXPECT_EQ(s.Report(10).thread->placement.untraced_switch_outs, 0u);
  EXPECT_EQ(s.Micro(10, M::kIrq), 400);
}

// Only a sleeping task can be woken: a second wakeup of one queued since the first, with
// no run recorded in between, means it ran and slept unrecorded.
TEST(StateMachine, SecondWakeupOfAQueuedTaskCountsAnUntracedRun) {
  Sim s;
  s.Switch(0, 0, 0, kR, 20);
  s.WakeBoth(1'000, 0, 20, 10, 1);
  s.WakeBoth(5'000, 0, 20, 10, 1);
  s.Finish(10'000);
  const ThreadReport& r = s.Report(10);
  EXPECT_EQ(r.voluntary, 1u);
  EXPECT_EQ(r.thread->placement.untraced_switch_ins, 1u);
  EXPECT_EQ(r.thread->placement.untraced_switch_outs, 1u);
  EXPECT_EQ(s.Micro(10, M::kUnknown), 1'000 + 4'000);  // before the trace saw it; unseen run
  EXPECT_EQ(s.Micro(10, M::kWaitCpuWakeup), 5'000);
  EXPECT_TILED(s);
}

// Outside a pid-filtered recording, a thread's switch-in is recorded only from a followed
// task. Woken and never seen running by the end, its time since the wakeup is unknown,
// not a wait for a CPU; woken again, it ran and slept unseen in between, as a followed
// thread never seen running would have. A followed thread still queued at the end waits.
TEST(StateMachine, AnUnfollowedThreadWokenAndNotSeenRunningIsUnknownNotWaiting) {
  const TrackingPolicy policy = Following({20, 30});
  Sim s({}, policy);
  s.Switch(0, 0, 0, kR, 20);
  s.WakeBoth(1'000, 0, 20, 10, 1);  // 10 is not followed (a kernel thread, say)
  s.WakeBoth(5'000, 0, 20, 10, 1);
  s.WakeBoth(6'000, 0, 20, 30, 1);  // 30 is
  s.Finish(10'000);
  const ThreadReport& r = s.Report(10);
  EXPECT_FALSE(r.thread->tracked);
  EXPECT_EQ(r.voluntary, 1u);
  EXPECT_EQ(s.Cause(10, "sleep:untraced"), 1u);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuWakeup), 0);
  EXPECT_EQ(s.Micro(10, M::kUnknown), 1'000 + 4'000 + 5'000);  // unseen; unseen run; tail
  EXPECT_TRUE(s.Report(30).thread->tracked);
  EXPECT_EQ(s.Micro(30, M::kWaitCpuWakeup), 4'000);
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kMissingSwitchOut), 0u);  // only followed ones count
  EXPECT_TILED(s);
}

// The same for unfollowed threads the trace saw run, beside a followed task: woken
// twice (10), or preempted and then woken (11), each ran and slept unseen in between;
// queued by a preemption at the end (12), its state since is unknown too.
TEST(StateMachine, AnUnfollowedThreadSeenRunningAlsoRunsUnseen) {
  const TrackingPolicy policy = Following({20});
  Sim s({}, policy);
  s.Switch(0, 0, 0, kR, 20);
  s.Switch(1'000, 0, 20, kR, 10);  // switched in from a followed task: recorded
  s.Switch(2'000, 0, 10, kS, 20);  // and out to one: it sleeps
  s.WakeBoth(3'000, 0, 20, 10, 1);
  s.WakeBoth(6'000, 0, 20, 10, 1);
  s.Switch(7'000, 0, 20, kR, 11);
  s.Switch(8'000, 0, 11, kR, 20);  // preempted
  s.WakeBoth(9'000, 0, 20, 11, 1);
  s.Switch(9'500, 0, 20, kR, 12);
  s.Switch(9'600, 0, 12, kR, 20);
  s.Finish(12'000);
  EXPECT_TRUE(s.Report(10).thread->seen_running);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuWakeup), 0);
  EXPECT_EQ(s.Report(10).voluntary, 2u);
  EXPECT_EQ(s.Cause(10, "sleep:untraced"), 1u);
  EXPECT_EQ(s.Micro(11, M::kWaitCpuPreempted), 0);
  EXPECT_EQ(s.Micro(11, M::kWaitCpuWakeup), 0);
  EXPECT_EQ(s.Report(11).involuntary, 1u);
  EXPECT_EQ(s.Cause(11, "sleep:untraced"), 1u);
  EXPECT_EQ(s.Micro(12, M::kWaitCpuPreempted), 0);
  EXPECT_TILED(s);
}

// A system-wide recording leaves out only the switches between two of the recorder's
// own threads: one of them woken and not seen switched in by the end waits for a CPU.
TEST(StateMachine, ARecordersOwnThreadQueuedAtTheEndOfASystemWideTraceWaits) {
  TrackingPolicy policy;
  policy.recorder_tids = {10};
  Sim s({}, policy);
  s.Switch(0, 0, 0, kR, 20);
  s.WakeBoth(1'000, 0, 20, 10, 1);
  s.WakeBoth(4'000, 0, 20, 10, 1);  // a second wakeup (missed switches): nothing inferred
  s.Finish(10'000);
  EXPECT_FALSE(s.Report(10).thread->tracked);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuWakeup), 9'000);
  EXPECT_EQ(s.Report(10).voluntary, 0u);
}

// A switch-out inferred from another task on the CPU, followed by the task switching
// out elsewhere with no wakeup or switch-in seen in between: it ran again, so the
// inferred one was a preemption, counted before the traced switch.
TEST(StateMachine, InferredSwitchOutBeforeAnUnseenRunIsInvoluntary) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1'000, 0, 12, kWrite);  // 12 on CPU0: 10's switch-out was not recorded
  s.Switch(5'000, 1, 10, kS, 0);     // 10 runs on CPU1, switched in unseen
  s.Finish(10'000);
  const ThreadReport& r = s.Report(10);
  EXPECT_EQ(r.involuntary, 1u);
  EXPECT_EQ(r.voluntary, 1u);
  EXPECT_EQ(s.Cause(10, "preempt:unknown"), 1u);
  EXPECT_TILED(s);
}

// A task the trace has shown running can be woken twice with no switch in between: it
// ran unseen (a switch from idle this kernel leaves out) and was woken again before its
// schedule() took it off the CPU. That is no switch, and none is counted.
TEST(StateMachine, SecondWakeupOfATaskSeenRunningCountsNoSwitch) {
  Sim s;
  s.Switch(0, 1, 0, kR, 10);
  s.SysEnter(100, 1, 10, kWait4);
  s.Switch(200, 1, 10, kS, 0);
  s.Switch(0, 0, 0, kR, 20);
  s.WakeBoth(1'000, 0, 20, 10, 1);
  s.WakeBoth(5'000, 0, 20, 10, 1);
  s.SysExit(6'000, 1, 10, kWait4);
  s.Finish(10'000);
  const ThreadReport& r = s.Report(10);
  EXPECT_EQ(r.voluntary, 1u);
  EXPECT_EQ(r.thread->placement.untraced_switch_outs, 0u);
  EXPECT_TILED(s);
}

TEST(StateMachine, TrackingFollowsForksOfRootPids) {
  const TrackingPolicy policy = Following({100});
  Sim s({}, policy);
  s.Switch(0, 0, 0, kR, 100);
  s.SysEnter(1, 0, 100, 56);
  s.Fork(10, 0, 100, 101, true);
  s.Switch(20, 1, 0, kR, 300);  // someone else
  s.Finish(30);
  EXPECT_TRUE(s.Report(100).thread->tracked);
  EXPECT_TRUE(s.Report(101).thread->tracked);
  EXPECT_FALSE(s.Report(300).thread->tracked);
}

TEST(StateMachine, WakeupOfRunningThreadChangesNothing) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kFutex);
  s.WakeBoth(5, 1, 0, 10, 0);  // woken before it managed to sleep
  s.SysExit(8, 0, 10, kFutex);
  s.Finish(10);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuWakeup), 0);
  EXPECT_EQ(s.Micro(10, M::kSys), 7);
  EXPECT_EQ(s.Report(10).wakeups, 0u);
}

// The kernel's run delay starts when sched_wakeup's enqueue happens, not at
// sched_waking: the window keeps the part before the enqueue apart for --check.
TEST(StateMachine, WaitBeforeTheEnqueueIsKeptApartForTheKernelCheck) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kRead);
  s.Switch(2, 0, 10, kS, 11);
  s.Wake(100, 0, 11, 10, 0);                          // waking: runnable
  s.Wake(103, 0, 11, 10, 0, 0, WakeupKind::kWakeup);  // queued 3 ns later
  s.Wake(104, 0, 11, 10, 0, 0, WakeupKind::kWakeup);  // a second wakeup: nothing
  s.Switch(110, 0, 11, kR, 10, /*preempt=*/true);     // waited 10 ns
  s.Switch(120, 0, 10, kS, 11);                       // sleeps again
  s.Wake(200, 1, 0, 10, 0, 0, WakeupKind::kWakeup);   // no sched_waking this time
  s.Switch(205, 0, 11, kR, 10, /*preempt=*/true);     // waited 5 ns, all queued
  s.Finish(300);
  const WindowTotals& w = s.Report(10).counter_window.total;
  EXPECT_EQ(s.Micro(10, M::kWaitCpuWakeup), 15);
  EXPECT_EQ(w.wait_cpu_ns, 15 + s.Micro(10, M::kWaitCpuPreempted));
  EXPECT_EQ(w.wait_unqueued_ns, 3);
  EXPECT_EQ(w.QueuedWaitNs(), w.wait_cpu_ns - 3);
}

// sched_waking that comes while the task still runs (about to sleep) does not make it
// runnable: its sched_wakeup, after the switch-out, does. That wakeup is an enqueue like
// any other: when the preemption check before it accounted the target CPU's current task
// (a remote increment), the enqueue is at that increment's clock, before the event.
TEST(StateMachine, AWakeupAfterItsTaskSleptIsDatedByTheTargetsIncrement) {
  Sim s(WithIncrements());
  s.Switch(0, 0, 0, kR, 10);
  s.Switch(0, 1, 0, kR, 11);
  s.SysEnter(1'000, 0, 10, kRead);
  s.StatRuntime(2'000, 0, 10, 2'000);                   // 10 accounted to 2'000
  s.Wake(2'500, 1, 11, 10, 0);                          // sched_waking from CPU 1: 10 still runs
  s.Switch(3'000, 0, 10, kS, 20);                       // 10 sleeps; 20 runs on CPU 0 from 2'000
  s.StatRuntime(8'000, 1, 20, 5'000, 0, 11);            // the enqueue's remote update: to 7'000
  s.Wake(8'500, 1, 11, 10, 0, 0, WakeupKind::kWakeup);  // queued at 7'000
  s.StatRuntime(12'000, 0, 20, 4'000);                  // 20 accounted to 11'000
  s.Switch(12'500, 0, 20, kR, 10, /*preempt=*/true);
  s.Finish(20'000);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuWakeup), 11'000 - 7'000);
  const WindowTotals& w = s.Report(10).counter_window.total;
  EXPECT_EQ(w.QueuedWaitNs(), 11'000 - 7'000);
  EXPECT_TILED(s);
}

// An enqueue that only its sched_wakeup dates: the kernel read the enqueue's clock some
// lag before the event. A wakeup the kernel switched in at that clock (the idle CPU's,
// reused) shows the lag; a later one that waited has its run delay start that much
// before its event.
TEST(StateMachine, TheEnqueueLagOfZeroDelayWakeupsDatesTheWaitsOfTheOthers) {
  Sim s(WithIncrements());
  s.Switch(0, 1, 0, kR, 11);
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1'000, 0, 10, kRead);
  s.StatRuntime(2'000, 0, 10, 2'000);
  s.Switch(2'500, 0, 10, kS, 0);  // 10 sleeps, CPU 0 idle
  // Woken from CPU 1; switched in at 100'500 by its first increment, before the event.
  s.Wake(100'000, 1, 11, 10, 0);
  s.Wake(102'000, 0, 0, 10, 0, kFlagNeedResched, WakeupKind::kWakeup);
  s.Switch(103'000, 0, 0, kR, 10);
  s.SysExit(103'500, 0, 10, kRead);
  s.StatRuntime(110'000, 0, 10, 9'500);  // from 100'500
  s.SysEnter(111'000, 0, 10, kRead);
  s.StatRuntime(112'000, 0, 10, 2'000);
  s.Switch(112'500, 0, 10, kS, 20);  // 10 sleeps; 20 runs
  // Woken again while 20 runs, no increment dates the enqueue: queued 1'550 before the
  // event (the middle of the 1.5 us bin), switched in at 208'900.
  s.Wake(200'000, 1, 11, 10, 0);
  s.Wake(202'000, 1, 11, 10, 0, 0, WakeupKind::kWakeup);
  s.StatRuntime(208'900, 0, 20, 96'900);  // 20 accounted to 208'900
  s.Switch(209'000, 0, 20, kS, 10);
  s.SysExit(209'500, 0, 10, kRead);
  s.StatRuntime(215'000, 0, 10, 6'100);  // from 208'900
  s.Finish(220'000);
  EXPECT_EQ(s.model().enqueue_lag.count(), 1u);
  EXPECT_EQ(s.model().enqueue_lag.Median(), 1'550);
  const WindowTotals& w = s.Report(10).counter_window.total;
  EXPECT_EQ(w.QueuedWaitNs(), 208'900 - (202'000 - 1'550));
}

constexpr uint64_t kTtwuPending = 0xffffffff813b4440;

// Thread 10 sleeps on CPU 0, which goes idle; CPU 1 wakes it at 100'000; CPU 0 writes the
// sched_wakeup at 150'000 and switches it in at 169'000 (its first increment says).
// `between` runs after the waking, before the sched_wakeup.
template <typename Between>
void WakeOnAnIdleCpu(Sim& s, Between between) {
  s.Switch(0, 1, 0, kR, 11);
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1'000, 0, 10, kRead);
  s.StatRuntime(2'000, 0, 10, 2'000);
  s.Switch(2'500, 0, 10, kS, 0);
  s.Wake(100'000, 1, 11, 10, 0);
  between();
  s.Wake(150'000, 0, 0, 10, 0, kFlagNeedResched, WakeupKind::kWakeup);
  s.Switch(170'000, 0, 0, kR, 10);
  s.SysExit(170'500, 0, 10, kRead);
  s.StatRuntime(180'000, 0, 10, 11'000);
  s.Finish(200'000);
}

// A pid-filtered recording of `followed` (and their descendants) with every run-time
// increment in the file: the unfiltered run-time buffer beside the trace.
Sim FollowingWithEveryIncrement(std::vector<int32_t> followed) {
  TraceCapabilities caps = WithIncrements();
  caps.all_increments = true;
  const TrackingPolicy policy = Following(std::move(followed));
  return Sim(caps, policy);
}

// An interrupt segment may be final only after its thread moved: here a thread alive
// before the trace, whose syscall state is told only by its sys_exit on CPU 1 after a
// wakeup queued it there. The segment goes out with the CPU it was on, not the thread's.
//
//   CPU0:  10 (syscall unknown) | irq 1'500-1'600 | sleeps 2'000 ==> 0
//   CPU1:  12 ... wakes 10 onto CPU 1 at 2'500 | 12 ==> 10 at 3'000 | 10 sys_exit(read)
TEST(StateMachine, AHeldInterruptSegmentKeepsItsCpu) {
  struct Seen : Observer {
    uint32_t Hooks() const override { return HookBit(Hook::kInterruptSegment); }
    void OnInterruptSegment(const Thread& t, Microstate s, int32_t cpu, int64_t start,
                            int64_t end) override {
      if (t.tid == 10) segments.push_back({s, cpu, start, end, t.cpu});
    }
    struct Segment {
      Microstate state;
      int32_t cpu;
      int64_t start, end;
      int32_t thread_cpu;  // Thread::cpu at delivery
    };
    std::vector<Segment> segments;
  } seen;
  Sim s;
  s.AddObserver(&seen);
  s.Switch(0, 0, 0, kR, 10);
  s.Switch(0, 1, 0, kR, 12);
  s.SysEnter(100, 1, 12, kWrite);  // (12's syscall state is known)
  s.IrqEntry(1'500, 0, 10);
  s.IrqExit(1'600, 0, 10);
  s.Switch(2'000, 0, 10, kS, 0);
  s.WakeBoth(2'500, 1, 12, 10, 1);
  s.Switch(3'000, 1, 12, kR, 10, true);
  ASSERT_TRUE(seen.segments.empty());  // still waiting for its syscall state
  s.SysExit(3'100, 1, 10, kRead);
  ASSERT_EQ(seen.segments.size(), 1u);
  EXPECT_EQ(seen.segments[0].state, M::kIrq);
  EXPECT_EQ(seen.segments[0].start, 1'500);
  EXPECT_EQ(seen.segments[0].end, 1'600);
  EXPECT_EQ(seen.segments[0].thread_cpu, 1);
  EXPECT_EQ(seen.segments[0].cpu, 0);
  s.Finish(4'000);
  EXPECT_TILED(s);
}

TraceCapabilities WithWakelistFunction() {
  TraceCapabilities caps = WithIncrements();
  caps.wakelist_function = kTtwuPending;
  return caps;
}

// An idle CPU's wakelist flush (from the unfiltered run-time buffer) is where the enqueue
// began, and the enqueue's clock was read right after it; the host can stall the virtual
// CPU before sched_wakeup is written. A wait dated at that event may then have started as
// early as the flush, for the kernel. A flush from before the waking is another wakeup's.
TEST(StateMachine, AWakelistFlushBoundsAnEnqueueDatedAtItsEvent) {
  for (const bool flushed : {false, true}) {
    SCOPED_TRACE(flushed);
    Sim s(WithWakelistFunction());
    s.UnfilteredWakelistFlush(50'000, 0, kTtwuPending);  // another wakeup's
    WakeOnAnIdleCpu(s, [&] {
      if (flushed) s.UnfilteredWakelistFlush(108'000, 0, kTtwuPending);
    });
    const WindowTotals& w = s.Report(10).counter_window.total;
    EXPECT_EQ(w.QueuedWaitNs(), 169'000 - 150'000);  // dated at the event (no lag measured)
    EXPECT_EQ(w.enqueue_maybe_earlier_ns, flushed ? 150'000 - 108'000 : 0);
    EXPECT_EQ(s.sm().enqueues_after_flush(), flushed ? 1u : 0u);
  }
}

// A timer wakes a sleeper on its own idle CPU: queued in place, and the CPU switches to it
// with no sched_switch (this kernel), reusing the clock the enqueue read, so no run delay
// whatever lag other wakeups showed. Only a file that records every wakelist flush can
// tell that enqueue from one a flush did; without them the median lag stands.
TEST(StateMachine, ATimerWakeupQueuedInPlaceOnAnIdleCpuIsNoRunDelay) {
  for (const bool flushes_traced : {false, true}) {
    SCOPED_TRACE(flushes_traced);
    // (Every flush is in a file only with nothing lost: the unfiltered buffer complete.)
    TraceCapabilities caps = flushes_traced ? WithWakelistFunction() : WithIncrements();
    caps.all_increments = true;
    Sim s(caps);
    s.enqueue_lag().Add(1'500);  // median 1'550
    s.Switch(0, 1, 0, kR, 11);
    s.Switch(0, 0, 0, kR, 10);
    s.SysEnter(1'000, 0, 10, kClockNanosleep);
    s.StatRuntime(2'000, 0, 10, 2'000);
    s.Switch(2'500, 0, 10, kS, 0);  // asleep; CPU 0 idle
    s.IrqEntry(100'000, 0, 0);
    s.Wake(100'200, 0, 0, 10, 0, kFlagHardirq);
    s.Wake(102'000, 0, 0, 10, 0, kFlagHardirq | kFlagNeedResched, WakeupKind::kWakeup);
    s.IrqExit(103'000, 0, 0);
    s.SysExit(110'000, 0, 10, kClockNanosleep);  // running, with no sched_switch
    s.StatRuntime(120'000, 0, 10, 18'000);
    s.Finish(200'000);
    EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kMissingSwitchFromIdle), 1u);
    const WindowTotals& w = s.Report(10).counter_window.total;
    EXPECT_EQ(w.wait_cpu_ns, 102'000 - 100'200);  // switched in at the event's clock
    EXPECT_EQ(w.QueuedWaitNs(), flushes_traced ? 0 : 1'550);
  }
}

// A timer wakes a sleeper on its own CPU, busy with another task: the waking and the
// wakeup are one call there, which read the clock in between. A gap of 2 ms between them
// is the virtual CPU stalled in it, maybe after the read: the kernel's run delay may start
// as early as the waking (the check allows that much more, one-sided). A usual gap of a
// few us is no stall; a waking on another CPU began another call (the gap is the
// hand-over); and a wakeup belongs to the latest waking, not to one whose sched_wakeup
// the trace missed.
TEST(StateMachine, AStalledWakeupCallOnOneCpuBoundsItsEnqueueByItsWaking) {
  enum class Call { kStalled, kUsual, kWakingOnAnotherCpu, kWokenAgain };
  for (const Call call :
       {Call::kStalled, Call::kUsual, Call::kWakingOnAnotherCpu, Call::kWokenAgain}) {
    SCOPED_TRACE(static_cast<int>(call));
    const int64_t wakeup = call == Call::kUsual ? 105'200 : 2'100'200;
    Sim s(WithIncrements());
    s.Switch(0, 1, 0, kR, 13);
    s.Switch(0, 0, 0, kR, 10);
    s.SysEnter(1'000, 0, 10, kClockNanosleep);
    s.StatRuntime(2'000, 0, 10, 2'000);
    s.Switch(2'500, 0, 10, kS, 12);  // asleep; 12 runs on CPU 0
    s.IrqEntry(100'000, 0, 12);
    if (call == Call::kWakingOnAnotherCpu)
      s.Wake(100'200, 1, 13, 10, 0);
    else
      s.Wake(100'200, 0, 12, 10, 0, kFlagHardirq);
    if (call == Call::kWokenAgain) s.Wake(wakeup - 2'000, 0, 12, 10, 0, kFlagHardirq);
    s.Wake(wakeup, 0, 12, 10, 0, kFlagHardirq | kFlagNeedResched, WakeupKind::kWakeup);
    s.IrqExit(wakeup + 100, 0, 12);
    s.Switch(wakeup + 100'000, 0, 12, kR, 10);
    s.SysExit(wakeup + 100'500, 0, 10, kClockNanosleep);
    s.StatRuntime(wakeup + 110'000, 0, 10, 10'000);
    s.Finish(wakeup + 200'000);
    const WindowTotals& w = s.Report(10).counter_window.total;
    EXPECT_EQ(w.QueuedWaitNs(), 100'000);  // dated at the event (no lag measured)
    EXPECT_EQ(w.enqueue_maybe_earlier_ns, call == Call::kStalled ? 2'000'000 : 0);
  }
}

// With -a the flushes are in the trace itself, among the other cross-CPU calls: only the
// wakelist function's count, and they are the idle task's events too.
TEST(StateMachine, AWakelistFlushInTheTraceIsTheWakelistFunctionsCallOnly) {
  for (const uint64_t func : {kTtwuPending, kTtwuPending + 0x40}) {
    SCOPED_TRACE(func);
    Sim s(WithWakelistFunction());
    WakeOnAnIdleCpu(s, [&] { s.CsdEntry(108'000, 0, func); });
    const bool wakelist = func == kTtwuPending;
    EXPECT_EQ(s.sm().wakelist_flushes(), wakelist ? 1u : 0u);
    EXPECT_EQ(s.Report(10).counter_window.total.enqueue_maybe_earlier_ns,
              wakelist ? 150'000 - 108'000 : 0);
  }
}

// This kernel often traces neither the enqueue nor the switch when an idle CPU takes a
// task woken from another CPU: both run in the idle task's untraced stretch (the wakelist
// processed in idle), and the task's own event is the first sign. It was queued at the
// clock it then switched with, so its wait since sched_waking is the wakeup's own path,
// sleep to the kernel, not run delay. With the sched_wakeup traced, the wait from it on is.
TEST(StateMachine, AnUntracedEnqueueOnAnIdleCpuIsNoRunDelay) {
  for (const bool wakeup_traced : {false, true}) {
    SCOPED_TRACE(wakeup_traced);
    Sim s;
    s.Switch(0, 0, 0, kR, 11);
    s.Switch(0, 1, 0, kR, 10);
    s.SysEnter(1, 1, 10, kRead);
    s.Switch(100, 1, 10, kS, 0);  // asleep; CPU 1 idle
    s.Wake(500, 0, 11, 10, 1);    // sched_waking from CPU 0, for CPU 1
    if (wakeup_traced) s.Wake(505, 1, 0, 10, 1, 0, WakeupKind::kWakeup);
    s.SysExit(512, 1, 10, kRead);  // its own event: running, with no sched_switch
    s.SysEnter(520, 1, 10, kRead);
    s.Switch(530, 1, 10, kS, 0);
    s.Finish(700);
    EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kMissingSwitchFromIdle), 1u);
    EXPECT_EQ(s.Micro(10, M::kWaitCpuWakeup), 512 - 500);  // what the trace shows
    const WindowTotals& w = s.Report(10).counter_window.total;
    EXPECT_EQ(w.wait_unqueued_ns, wakeup_traced ? 505 - 500 : 512 - 500);
    EXPECT_EQ(w.QueuedWaitNs(), wakeup_traced ? 512 - 505 : 0);
  }
}

// An idle CPU picks up a woken task with no sched_switch recorded, and before any event
// of its own there, a wakeup on another CPU updates its run time (update_curr() accounts
// only a running task): it runs from that increment's start, not from its own first
// event. (hackbench: 0.27 ms of run counted as a wait, --check DISAGREE.)
TEST(StateMachine, ARemoteIncrementOfATaskQueuedOnAnIdleCpuSwitchesItIn) {
  Sim s(WithIncrements());
  s.Switch(0, 0, 0, kR, 11);
  s.Switch(0, 1, 0, kR, 10);
  s.SysEnter(1'000, 1, 10, kRead);
  s.StatRuntime(2'000, 1, 10, 2'000);
  s.Switch(2'100, 1, 10, kS, 0);  // asleep; CPU 1 idle
  s.Wake(10'000, 0, 11, 10, 1);   // sched_waking from CPU 0
  s.Wake(10'500, 1, 0, 10, 1, 0, WakeupKind::kWakeup);
  s.StatRuntime(30'000, 0, 10, 19'000, 0, /*running=*/11);  // from CPU 0: ran since 11'000
  s.SysExit(300'000, 1, 10, kRead);                         // its own first event
  s.StatRuntime(301'000, 1, 10, 271'000);
  s.SysEnter(302'000, 1, 10, kRead);
  s.StatRuntime(303'000, 1, 10, 2'000);
  s.Switch(303'000, 1, 10, kS, 0);
  s.Finish(400'000);
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kMissingSwitchFromIdle), 1u);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuWakeup), 11'000 - 10'000);
  // In read(2) from the pick-up to its exit, and in the next until the switch.
  EXPECT_EQ(s.Micro(10, M::kSys), (2'000 - 1'000) + (300'000 - 11'000) + (303'000 - 302'000));
  EXPECT_TILED(s);
}

// The same when the thread slept in favour of an unfollowed task: the pid filter leaves
// out that task's switch to idle, and the CPU seems to run it still. (A thread frozen
// in favour of the recorder's and thawed on the idle CPU: 0.41 ms of run was a wait.)
TEST(StateMachine, ARemoteIncrementSwitchesInATaskQueuedWhereAnUnfollowedOneSeemsToRun) {
  TraceCapabilities caps = WithIncrements();
  caps.unfiltered_moves = true;  // (without them, the thread may have been moved unseen)
  Sim s(caps, Following({10, 11}));
  s.Switch(0, 0, 0, kR, 11);
  s.Switch(0, 1, 0, kR, 10);
  s.SysEnter(1'000, 1, 10, kRead);
  s.StatRuntime(2'000, 1, 10, 2'000);
  s.Switch(2'100, 1, 10, kD, 50);  // 50 runs, then idles: neither switch is recorded
  s.Wake(10'000, 0, 11, 10, 1);    // sched_waking from CPU 0
  s.Wake(10'500, 1, 0, 10, 1, 0, WakeupKind::kWakeup);
  s.StatRuntime(30'000, 0, 10, 19'000, 0, /*running=*/11);  // from CPU 0: ran since 11'000
  s.SysExit(300'000, 1, 10, kRead);                         // its own first event
  s.StatRuntime(301'000, 1, 10, 271'000);
  s.SysEnter(302'000, 1, 10, kRead);
  s.StatRuntime(303'000, 1, 10, 2'000);
  s.Switch(303'000, 1, 10, kS, 0);
  s.Finish(400'000);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuWakeup), 11'000 - 10'000);
  EXPECT_EQ(s.Micro(10, M::kSys), (2'000 - 1'000) + (300'000 - 11'000) + (303'000 - 302'000));
  EXPECT_TILED(s);
}

// A task that sleeps stays on its runqueue for a while (EEVDF's delayed dequeue); the
// load balancer moving it to another CPU then enqueues it there, which starts the
// kernel's run delay although it still sleeps. The microstates keep the sleep; the
// kernel check's wait (from the enqueue) gains the sleep from the move on.
TEST(StateMachine, SleepAfterAMoveWhileAsleepIsRunDelayToTheKernel) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kRead);
  s.Switch(100, 0, 10, kS, 0);     // asleep on CPU 0
  s.Migrate(300, 1, 0, 10, 0, 1);  // moved to CPU 1 by CPU 1's balancer
  s.Migrate(350, 0, 0, 10, 1, 0);  // and back: the first move counts
  s.Wake(500, 0, 11, 10, 0);       // waking on CPU 0, where it is now
  s.Wake(502, 0, 11, 10, 0, 0, WakeupKind::kWakeup);
  s.Switch(600, 0, 0, kR, 10);
  s.Finish(700);
  EXPECT_EQ(s.Micro(10, M::kSleep), 400);  // 100 .. 500: asleep, as the trace shows
  EXPECT_EQ(s.Micro(10, M::kWaitCpuWakeup), 100);
  EXPECT_EQ(s.Report(10).placement.asleep_queued_ns, 502 - 300);
  EXPECT_EQ(s.Report(10).placement.asleep_maybe_queued_ns, 0);
  const WindowTotals& w = s.Report(10).counter_window.total;
  EXPECT_EQ(w.QueuedWaitNs(), (600 - 502) + (502 - 300));
}

// A preemption can catch a task after it set a sleep state and before schedule() (a
// wait4() scanning its children): the trace shows R+, and a wakeup reaches it while it
// is queued (a runnable task passes none). It waits for a CPU as any preempted task, but
// the kernel queued it for run delay only if it was runnable at the switch-out: schedstat
// leaves that wait out. (Measured: a hackbench parent's 35 ms wait missing from its
// run delay, and nothing else apart.)
//
//   CPU0  10 user | R+ ==> 11 ... waking(10) ... | 11 S ==> 10 | 10 user
//              100                 300         500
TEST(StateMachine, AWaitAfterAPreemptionOnTheWayToSleepIsNotRunDelayToTheKernel) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.Switch(100, 0, 10, kR, 11, /*preempt=*/true);
  s.Wake(300, 0, 11, 10, 0);  // woken while preempted: it had set a sleep state
  s.Wake(301, 0, 11, 10, 0, 0, WakeupKind::kWakeup);
  s.Switch(500, 0, 11, kS, 10);
  s.Switch(600, 0, 10, kR, 11, /*preempt=*/true);  // preempted again, runnable this time
  s.Switch(700, 0, 11, kS, 10);
  s.Finish(800);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuPreempted), 400 + 100);  // a wait, as the trace shows
  const WindowTotals& w = s.Report(10).counter_window.total;
  EXPECT_EQ(w.wait_preempted_asleep_ns, 400);
  EXPECT_EQ(w.QueuedWaitNs(), 100);
  EXPECT_TILED(s);
}

// The load balancer detaches a batch of queued tasks with the source runqueue's clock,
// read before the batch, and attaches them with the destination's, read after it: the
// kernel's run delay grows for none of them in between, and the trace's moves show at
// least the span from the batch's first move to its last. Every task of the batch, not
// only the first, was off the runqueues all that time. A move after another record on
// that CPU, or of another source or destination, begins a batch of its own; a lone move
// shows no span; a thread on a CPU or asleep is in none.
//
//   CPU0  11 R+ | 12 R+ | 13 R+ | 10 ...                 (11, 12, 13 queued on CPU 0)
//   CPU1  idle ... move 11  move 12  move 13 | 11 | 12 | 13 | idle
//                  300      305      312      320  400  500
TEST(StateMachine, ALoadBalancersBatchOfMovesIsNoRunDelayToTheKernel) {
  for (const bool unfiltered : {false, true}) {
    for (const bool interrupted : {false, true}) {
      SCOPED_TRACE(::testing::Message()
                   << "unfiltered " << unfiltered << ", a record between " << interrupted);
      Sim s;
      s.Switch(0, 0, 0, kR, 11);
      s.Switch(10, 0, 11, kR, 12, /*preempt=*/true);
      s.Switch(20, 0, 12, kR, 13, /*preempt=*/true);
      s.Switch(30, 0, 13, kR, 10, /*preempt=*/true);
      s.Switch(0, 1, 0, kR, 20);
      s.Switch(5, 1, 20, kS, 0);
      auto move = [&](int64_t ts, int tid) {
        if (unfiltered)
          s.UnfilteredMigrate(ts, 1, 0, tid, 0, 1);
        else
          s.Migrate(ts, 1, 0, tid, 0, 1);
      };
      move(300, 11);
      if (interrupted) {  // a record of that CPU (in the same buffer) ends the batch
        if (unfiltered)
          s.UnfilteredRuntime(302, 1, 99, 1'000);
        else
          s.Tick(302, 1, 0, 0);
      }
      move(305, 12);
      move(307, 10);  // on a CPU: no wait, and not in the batch's spans
      move(312, 13);
      s.Switch(320, 1, 0, kR, 11);
      s.Switch(400, 1, 11, kS, 12);
      s.Switch(500, 1, 12, kS, 13);
      s.Switch(600, 1, 13, kS, 0);
      s.Finish(700);
      const int64_t gap_11 = interrupted ? 0 : 312 - 300;
      const int64_t gap_rest = interrupted ? 312 - 305 : 312 - 300;
      for (const auto& [tid, wait, gap] :
           {std::tuple{11, 320 - 10, gap_11}, {12, 400 - 20, gap_rest}, {13, 500 - 30, gap_rest}}) {
        SCOPED_TRACE(tid);
        const WindowTotals& w = s.Report(tid).counter_window.total;
        EXPECT_EQ(s.Micro(tid, M::kWaitCpuPreempted), wait);  // a wait, as the trace shows
        EXPECT_EQ(w.wait_between_runqueues_ns, gap);
        EXPECT_EQ(w.QueuedWaitNs(), wait - gap);
      }
      EXPECT_EQ(s.Report(10).counter_window.total.wait_between_runqueues_ns, 0);
      EXPECT_TILED(s);
    }
  }
}

// The unfiltered buffer records so little of an idle CPU that two balancing passes there
// may show nothing between them: moves more than 25 us apart (a batch's come a few
// microseconds apart) are two batches.
TEST(StateMachine, MovesFarApartAreTwoBatches) {
  for (const int64_t apart : {25'000, 25'001}) {
    SCOPED_TRACE(apart);
    Sim s;
    s.Switch(0, 0, 0, kR, 11);
    s.Switch(10, 0, 11, kR, 12, /*preempt=*/true);
    s.Switch(20, 0, 12, kR, 10, /*preempt=*/true);
    s.Switch(0, 1, 0, kR, 20);
    s.Switch(5, 1, 20, kS, 0);
    s.UnfilteredMigrate(1'000, 1, 0, 11, 0, 1);
    s.UnfilteredMigrate(1'000 + apart, 1, 0, 12, 0, 1);
    s.Switch(100'000, 1, 0, kR, 11);
    s.Switch(100'100, 1, 11, kS, 12);
    s.Switch(100'200, 1, 12, kS, 0);
    s.Finish(100'300);
    const int64_t span = apart <= 25'000 ? apart : 0;
    EXPECT_EQ(s.Report(11).counter_window.total.wait_between_runqueues_ns, span);
    EXPECT_EQ(s.Report(12).counter_window.total.wait_between_runqueues_ns, span);
  }
}

// A lone move of a queued task (a stopper thread's, or a balancer that moved one) shows
// no span, and a woken task's placement (between its sched_waking and sched_wakeup) is
// no queued task's move: neither begins a batch that a move after it would widen.
TEST(StateMachine, AWakeupsPlacementBeginsNoBatchOfMoves) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.Switch(10, 0, 10, kR, 11, /*preempt=*/true);  // 10 queued on CPU 0
  s.SysEnter(11, 0, 11, kRead);
  s.Switch(20, 0, 11, kS, 10);  // 11 asleep
  s.Switch(0, 1, 0, kR, 20);
  s.SysEnter(1, 1, 20, kRead);
  s.Switch(5, 1, 20, kS, 0);
  s.Wake(300, 1, 0, 11, 0);
  s.Migrate(301, 1, 0, 11, 0, 1);  // the wakeup picked CPU 1
  s.Migrate(302, 1, 0, 10, 0, 1);  // a queued task's lone move, right after
  s.Wake(303, 1, 0, 11, 1, 0, WakeupKind::kWakeup);
  s.Switch(320, 1, 0, kR, 10);
  s.Switch(400, 1, 10, kS, 11);
  s.Finish(500);
  EXPECT_EQ(s.Report(10).counter_window.total.wait_between_runqueues_ns, 0);
  EXPECT_EQ(s.Report(11).counter_window.total.wait_between_runqueues_ns, 0);
  EXPECT_EQ(s.Report(10).migrations, 1u);
  EXPECT_TILED(s);
}

// Moved to another runqueue while so preempted, the task is queued there anew, and the
// kernel's run delay runs from the first move on, whether it came before the wakeup or
// after it.
TEST(StateMachine, AWaitAfterAPreemptionOnTheWayToSleepCountsFromAMove) {
  for (const bool move_first : {true, false}) {
    SCOPED_TRACE(move_first ? "moved before the wakeup" : "moved after the wakeup");
    Sim s;
    s.Switch(0, 0, 0, kR, 10);
    s.Switch(0, 1, 0, kR, 12);
    s.Switch(100, 0, 10, kR, 11, /*preempt=*/true);
    if (move_first) s.Migrate(200, 1, 12, 10, 0, 1);
    s.Wake(300, 0, 11, 10, move_first ? 1 : 0);
    if (!move_first) s.Migrate(400, 1, 12, 10, 0, 1);
    s.Migrate(450, 0, 11, 10, 1, 0);  // a second move changes nothing
    s.Switch(500, 0, 11, kS, 10);
    s.Finish(800);
    const WindowTotals& w = s.Report(10).counter_window.total;
    EXPECT_EQ(w.wait_cpu_ns, 400);
    EXPECT_EQ(w.QueuedWaitNs(), 500 - (move_first ? 200 : 400));
  }
}

// The same move, done in an unfollowed context (the idle task's), from the unfiltered
// buffer beside a pid-filtered trace: it is the thread's move, counted, and the run delay
// from it on is known, not bounded. One done in a followed context is the trace's own
// (not taken twice), and one of a thread the trace has not named is no row's.
TEST(StateMachine, AMoveFromTheUnfilteredBufferIsTheThreadsOwn) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.Switch(0, 1, 0, kR, 11);
  s.SysEnter(1, 0, 10, kRead);
  s.Switch(100, 0, 10, kS, 0);                // asleep on CPU 0
  s.UnfilteredMigrate(300, 1, 0, 10, 0, 1);   // moved to CPU 1 by CPU 1's balancer
  s.UnfilteredMigrate(310, 1, 11, 10, 1, 0);  // in thread 11's context: the trace has it
  s.UnfilteredMigrate(320, 1, 0, 99, 0, 1);   // not a thread of the trace
  s.Wake(500, 1, 11, 10, 1);                  // waking: on CPU 1, where it was moved
  s.Wake(502, 1, 11, 10, 1, 0, WakeupKind::kWakeup);
  s.Switch(600, 1, 11, kR, 10);
  s.Finish(700);
  EXPECT_EQ(s.sm().unfiltered_migrations_used(), 1u);
  EXPECT_EQ(s.Report(10).migrations, 1u);
  EXPECT_EQ(s.Micro(10, M::kSleep), 400);
  EXPECT_EQ(s.Report(10).placement.asleep_queued_ns, 502 - 300);
  EXPECT_EQ(s.Report(10).placement.asleep_maybe_queued_ns, 0);
  EXPECT_THROW(s.Report(99), std::runtime_error);
}

// Moved while asleep with the move untraced (done from an unfollowed task's context):
// sched_waking names the CPU the task is on before the wakeup picks one, and that is
// not the one it slept on. Up to the whole sleep may be run delay to the kernel.
TEST(StateMachine, AnUntracedMoveWhileAsleepBoundsTheKernelsExtraRunDelay) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kRead);
  s.Switch(100, 0, 10, kS, 0);  // asleep on CPU 0
  s.Wake(500, 0, 11, 10, 1);    // ... and on CPU 1 when woken
  s.Wake(502, 0, 11, 10, 1, 0, WakeupKind::kWakeup);
  s.Switch(600, 1, 0, kR, 10);
  s.Finish(700);
  EXPECT_EQ(s.Report(10).placement.asleep_queued_ns, 0);
  EXPECT_EQ(s.Report(10).placement.asleep_maybe_queued_ns, 400);
  const WindowTotals& w = s.Report(10).counter_window.total;
  EXPECT_EQ(w.QueuedWaitNs(), 600 - 502);
  EXPECT_EQ(w.asleep_maybe_queued_ns, 400);
}

// The ordinary case: a sleeping task is placed by its wakeup (sched_waking names the CPU
// it slept on, the move comes after it): no sleep is run delay.
TEST(StateMachine, AMoveByTheWakeupIsNotAMoveWhileAsleep) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kRead);
  s.Switch(100, 0, 10, kS, 0);
  s.Wake(500, 1, 11, 10, 0);        // waking: still on CPU 0
  s.Migrate(501, 1, 11, 10, 0, 1);  // select_task_rq() picked CPU 1
  s.Wake(502, 1, 11, 10, 1, 0, WakeupKind::kWakeup);
  s.Switch(600, 1, 0, kR, 10);
  s.Switch(650, 1, 10, kS, 0);  // and once more, woken where it slept
  s.WakeBoth(660, 1, 11, 10, 1);
  s.Switch(670, 1, 0, kR, 10);
  s.Finish(700);
  EXPECT_EQ(s.Report(10).placement.asleep_queued_ns, 0);
  EXPECT_EQ(s.Report(10).placement.asleep_maybe_queued_ns, 0);
  EXPECT_EQ(s.Report(10).counter_window.total.QueuedWaitNs(), (600 - 502) + (670 - 660));
}

// A move while asleep queues the thread for the wakeup that follows, and for that one
// only. Here the wakeup's enqueue is not in the trace: sched_setaffinity() moved the
// sleeping thread with the stopper, which woke it from its unfollowed context, and CPU 1
// picked it up with no switch traced. It ran, slept again (a futex) and was woken: the
// second wait owes nothing to the move (it held 5.4 ms of that sleep as run delay the
// kernel never counted, a README example's check failing).
//
//   CPU0:  10 (sched_setaffinity) | D ==> 500   move 0->1 at 300, waking 10 at 400
//   CPU1:  600 ...... 10 runs (first event 450) | futex S ==> 600 ... woken 1'000 | 600 ==> 10
TEST(StateMachine, AMoveWhileAsleepEndsWithTheRunItsWakeupLedTo) {
  for (const bool switch_traced : {false, true}) {  // 600 ==> 10 in the trace, or not
    SCOPED_TRACE(switch_traced);
    Sim s(TraceCapabilities{}, Following({10}));
    s.Switch(0, 1, 0, kR, 600);
    s.Switch(0, 0, 0, kR, 10);
    s.SysEnter(1, 0, 10, kRead);
    s.Switch(100, 0, 10, kD, 500);
    s.UnfilteredMigrate(300, 0, 500, 10, 0, 1);
    s.Wake(400, 0, 500, 10, 1);  // sched_waking; its sched_wakeup is not in the trace
    if (switch_traced) s.Switch(450, 1, 600, kR, 10);
    s.SysExit(450, 1, 10, kRead);
    s.SysEnter(460, 1, 10, kFutex);
    s.Switch(470, 1, 10, kS, 600);
    s.WakeBoth(1'000, 0, 500, 10, 1);
    s.Switch(1'100, 1, 600, kR, 10);
    s.Finish(1'200);
    EXPECT_EQ(s.Report(10).placement.asleep_queued_ns, 400 - 300);
    EXPECT_EQ(s.Report(10).placement.asleep_maybe_queued_ns, 0);
    EXPECT_EQ(s.Report(10).counter_window.total.QueuedWaitNs(),
              (450 - 400) + (400 - 300) + (1'100 - 1'000));
    EXPECT_EQ(s.Micro(10, M::kWaitCpuWakeup), (450 - 400) + (1'100 - 1'000));
    EXPECT_TILED(s);
  }
}

// Moving a queued thread to another CPU (load balancing) dequeues it from its runqueue, and the
// kernel adds its run delay so far: a sample between the move and the switch-in sees the
// wait up to the move. A woken thread's placement (between sched_waking and its enqueue)
// moves nothing queued. (A system-wide check failed by a 12 ms wait so split.)
//
//   CPU0:  10 | R+ ==> 12 (100) ...... waking 10 (1'000), placed 1->0, wakeup | R+ ==> 10 (1'800)
//   CPU1:  11 ... moves 10 0->1 (300) | S ==> 10 (700) | S ==> idle (800)
//   samples of 10:  500, 1'500
TEST(StateMachine, AMoveWhileQueuedCountsTheRunDelaySoFarAtASample) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.Switch(0, 1, 0, kR, 11);
  s.SampleAt(10, 500);
  s.SampleAt(10, 1'500);
  s.Switch(100, 0, 10, kR, 12, /*preempt=*/true);
  s.Migrate(300, 1, 11, 10, 0, 1);
  s.Switch(700, 1, 11, kS, 10);
  s.Switch(800, 1, 10, kS, 0);
  s.Wake(1'000, 0, 12, 10, 1);
  s.Migrate(1'010, 0, 12, 10, 1, 0);
  s.Wake(1'020, 0, 12, 10, 0, 0, WakeupKind::kWakeup);
  s.Switch(1'800, 0, 12, kR, 10, /*preempt=*/true);
  s.Finish(2'000);
  const CounterWindow& w = s.Report(10).counter_window;
  EXPECT_EQ(w.Before(500).QueuedWaitNs(), 300 - 100);
  EXPECT_EQ(w.Before(1'500).QueuedWaitNs(), 700 - 100);
  EXPECT_EQ(w.total.QueuedWaitNs(), (700 - 100) + (1'800 - 1'020));
  EXPECT_TILED(s);
}

// A CPU's clock stepping back (a damaged or merged file) is named, once per step; the
// other CPU's earlier timestamps are not a step back.
TEST(StateMachine, TimeGoingBackwardsOnACpuIsCounted) {
  Sim s;
  s.Switch(100, 0, 0, kR, 10);
  s.SysEnter(110, 0, 10, kRead);
  s.Switch(50, 1, 0, kR, 11);    // CPU 1 starts earlier: fine
  s.SysExit(105, 0, 10, kRead);  // CPU 0 steps back 5 ns
  s.Finish(200);
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kTimeBackwards), 1u);
}

// A damaged record's absurd target CPU is ignored, not used to size per-CPU state.
TEST(StateMachine, AbsurdWakeupTargetCpuIsIgnored) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kRead);
  s.Switch(2, 0, 10, kS, 11);
  s.Wake(10, 0, 11, 10, INT32_MAX, 0, WakeupKind::kWakeup);
  s.Switch(20, 0, 11, kR, 10, /*preempt=*/true);
  s.Finish(30);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuWakeup), 10);
  EXPECT_EQ(s.Report(10).thread->cpu, 0);
}

// The kernel switch instant: a wakeup that finds need-resched set skips the next clock
// update, so the kernel switches at the wakeup's clock; a later clock update (the tick)
// moves that instant; without need-resched the switch is where the trace shows it.
TEST(StateMachine, SkippedClockUpdatePlacesTheSwitchAtTheWakeup) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kWrite);
  s.Wake(20, 0, 10, 11, 0, 0, WakeupKind::kWaking);
  s.Wake(21, 0, 10, 11, 0, kFlagNeedResched, WakeupKind::kWakeup);
  s.SysExit(25, 0, 10, kWrite);
  s.Switch(30, 0, 10, kR, 11);
  s.Finish(40);
  EXPECT_EQ(s.Micro(10, M::kSys), 21 - 1);  // its run ends at the wakeup's clock
  EXPECT_EQ(s.Micro(10, M::kUser), 1);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuPreempted), 40 - 21);
  EXPECT_EQ(s.Micro(11, M::kWaitCpuWakeup), 1);  // waking .. wakeup
  EXPECT_EQ(s.Report(10).placement.out_early_ns, 30 - 21);
  EXPECT_EQ(s.Report(11).placement.in_early_ns, 30 - 21);
  EXPECT_TILED(s);
}

// The skip goes to the next __schedule() on the CPU, whichever task it switches: when the
// wakee's switch-in shows another task before it than the one the wakeup interrupted, a
// switch between two unfollowed tasks came first, untraced, and took the skip; the
// wakee's switch read a fresh clock, and its wait runs to the traced switch. (A tick's
// wakeup in a compiler, the compiler to rcu_preempt, rcu_preempt to the wakee: 41 us of
// run delay had been placed at the wakeup.) Out of the interrupted task, it is the
// reschedule the skip was for.
//
//   CPU0:  11 sleeps | 50 runs; tick wakes 11 (need-resched) at 20 | 50 ==> 60 (untraced)
//          | 60 ==> 11 at 45: run delay 20..45, not 0
TEST(StateMachine, ASkipTakenByAnUntracedSwitchLeavesTheWakeesSwitchAFreshClock) {
  for (const int prev : {60, 50}) {
    SCOPED_TRACE(prev);
    const TrackingPolicy policy = Following({11});
    Sim s({}, policy);
    s.Switch(0, 0, 11, kS, 50);
    s.Wake(19, 0, 50, 11, 0, kFlagHardirq, WakeupKind::kWaking);
    s.Wake(20, 0, 50, 11, 0, kFlagHardirq | kFlagNeedResched, WakeupKind::kWakeup);
    s.Switch(45, 0, prev, kR, 11, /*preempt=*/true);
    s.Finish(50);
    const bool skip_taken = prev != 50;
    EXPECT_EQ(s.Micro(11, M::kWaitCpuWakeup), (skip_taken ? 45 : 20) - 19);
    EXPECT_EQ(s.Report(11).placement.in_early_ns, skip_taken ? 0 : 45 - 20);
    EXPECT_TILED(s);
  }
}

// With the unfiltered run-time buffer, another unfollowed task's own increment on the CPU
// shows it ran there after the skip was asked for: the switch to it took the skip, even
// when the task the wakeup interrupted is the one that later switches the wakee in (a
// compiler in a long system call, three other tasks, the compiler again: 2.4 ms of run
// delay had been placed at the wakeup, and counted as steal). That task's own increment
// instead is a newer clock read (its tick), which the skip reuses.
//
//   CPU0:  11 sleeps | 50 runs; tick wakes 11 (need-resched) at 20 | 50 ==> 70 (untraced)
//          | 70's increment at 30 | 70 ==> 50 (untraced) | 50 ==> 11 at 60
TEST(StateMachine, AnotherTasksIncrementAfterTheSkipShowsItTaken) {
  for (const bool other_ran : {true, false}) {
    SCOPED_TRACE(other_ran);
    Sim s = FollowingWithEveryIncrement({11});
    s.Switch(0, 0, 11, kS, 50);
    s.Wake(19'000, 0, 50, 11, 0, kFlagHardirq, WakeupKind::kWaking);
    s.Wake(20'000, 0, 50, 11, 0, kFlagHardirq | kFlagNeedResched, WakeupKind::kWakeup);
    s.UnfilteredRuntime(30'000, 0, other_ran ? 70 : 50, 5'000);
    s.Switch(60'000, 0, 50, kR, 11, /*preempt=*/true);
    s.Finish(70'000);
    EXPECT_EQ(s.Micro(11, M::kWaitCpuWakeup), (other_ran ? 60'000 : 30'000) - 19'000);
    EXPECT_TILED(s);
  }
}

TEST(StateMachine, TickAfterTheWakeupMovesTheSwitchInstant) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kWrite);
  s.WakeBoth(20, 0, 10, 11, 0, kFlagNeedResched);
  s.Vector(26, 0, 10, true, "local_timer", kFlagHardirq | kFlagNeedResched);  // rq clock: 26
  s.Vector(27, 0, 10, false, "local_timer", kFlagHardirq | kFlagNeedResched);
  s.Switch(30, 0, 10, kR, 11);
  s.Finish(40);
  EXPECT_EQ(s.Report(10).placement.out_early_ns, 30 - 26);
  EXPECT_EQ(s.Report(11).placement.in_early_ns, 30 - 26);
  EXPECT_EQ(s.Micro(11, M::kWaitCpuWakeup), 26 - 20);
  EXPECT_TILED(s);
}

TEST(StateMachine, NoSkipWithoutNeedResched) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kRead);
  s.WakeBoth(20, 1, 0, 11, 0, kFlagHardirq);  // from CPU1; CPU0 never shows need-resched
  s.Switch(30, 0, 10, kS, 11);                // 10 blocks on its own
  s.Finish(40);
  EXPECT_EQ(s.Micro(11, M::kWaitCpuWakeup), 10);
  EXPECT_EQ(s.Micro(10, M::kSys), 29);
  EXPECT_EQ(s.Report(11).placement.in_early_ns, 0);
  EXPECT_TILED(s);
}

// With sched_stat_runtime, the kernel's own increments place the switches: the first
// one of a run is measured from the switch-in, and the run ends where they add up to.
TEST(StateMachine, RuntimeIncrementsPlaceBothSwitches) {
  Sim s(WithIncrements());
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1'000, 0, 10, kRead);
  s.Switch(5'000, 0, 10, kS, 0);
  s.WakeBoth(20'000, 0, 0, 10, 0, kFlagHardirq | kFlagNeedResched);  // CPU0 idle
  s.Switch(30'000, 0, 0, kR, 10);  // model: switched in at 20'000; the kernel says 24'000
  s.SysExit(32'000, 0, 10, kRead);
  s.StatRuntime(40'000, 0, 10, 16'000);  // 40'000 - 16'000 = 24'000
  s.SysEnter(50'000, 0, 10, kWrite);
  s.WakeBoth(54'000, 0, 10, 11, 0, kFlagNeedResched);  // the model's instant: 54'000
  s.StatRuntime(59'000, 0, 10, 34'000);                // accounted up to 74'000, past the trace
  s.Switch(61'000, 0, 10, kR, 11);  // preempted: the run ends at 74'000, clamped to 61'000
  s.Finish(70'000);
  const ThreadReport& r = s.Report(10);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuWakeup), 24'000 - 20'000);
  EXPECT_EQ(r.placement.in_early_ns, 30'000 - 24'000);
  EXPECT_EQ(r.placement.out_early_ns, 0);  // the increments reach the traced switch
  EXPECT_TILED(s);
}

// An increment's event comes up to kIncrementLagNs after the clock it was computed with,
// so a first increment measured from less than that after the model's instant (here the
// previous task's last increment, which __schedule() accounts with the clock it switches
// at) was measured from that same clock: the switch-in stays at the model's instant.
TEST(StateMachine, FirstIncrementWithinItsLagOfTheModelsInstantKeepsIt) {
  Sim s(WithIncrements());
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1'000, 0, 10, kRead);
  s.StatRuntime(10'000, 0, 10, 10'000);  // 10 accounted to 10'000: it switches there
  s.Switch(11'500, 0, 10, kS, 20);       // traced 1'500 after that clock
  s.SysExit(12'000, 0, 20, kRead);
  s.StatRuntime(30'000, 0, 20, 18'600);  // measured from 11'400: late by the event's lag
  s.SysEnter(31'000, 0, 20, kRead);
  s.StatRuntime(32'000, 0, 20, 2'000);
  s.Switch(32'500, 0, 20, kS, 0);
  s.Finish(40'000);
  EXPECT_EQ(s.Report(20).placement.in_early_ns, 11'500 - 10'000);
  // The run starts at 10'000 and ends where its increments add up: 10'000 + 20'600.
  EXPECT_EQ(s.Micro(20, M::kSys) + s.Micro(20, M::kUser), 30'600 - 10'000);
  EXPECT_TILED(s);
}

TEST(StateMachine, RuntimeIncrementsEndAPreemptedRun) {
  Sim s(WithIncrements());
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1, 0, 10, kWrite);
  s.StatRuntime(10, 0, 10, 10);               // switched in at 0, accounted to 10
  s.WakeBoth(20, 1, 0, 11, 0, kFlagHardirq);  // remote wakeup: rq clock 20
  s.Tick(22, 0, 10, kFlagNeedResched);        // need-resched shows: skip at 20
  s.StatRuntime(23, 1, 10, 13);               // a remote increment: accounted to 23
  s.SysExit(25, 0, 10, kWrite);
  s.Switch(30, 0, 10, kR, 11);  // the run ends at max(20, 23)
  s.Finish(40);
  const ThreadReport& r = s.Report(10);
  EXPECT_EQ(s.Micro(10, M::kSys), 23 - 1);
  EXPECT_EQ(s.Micro(10, M::kUser), 1);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuPreempted), 40 - 23);
  EXPECT_EQ(r.placement.out_early_ns, 30 - 23);
  EXPECT_TILED(s);
}

TEST(StateMachine, UntracedSwitchFromIdleIsPlacedAtTheWakeup) {
  Sim s;
  s.Switch(0, 1, 0, kR, 10);
  s.SysEnter(1, 1, 10, kRead);
  s.Switch(5, 1, 10, kS, 0);
  s.WakeBoth(20, 1, 0, 10, 1, kFlagHardirq | kFlagNeedResched);
  s.SysExit(33, 1, 10, kRead);  // no sched_switch into it was traced
  s.Finish(40);
  const ThreadReport& r = s.Report(10);
  EXPECT_EQ(r.placement.untraced_switch_ins, 1u);
  EXPECT_EQ(r.placement.in_early_ns, 33 - 20);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuWakeup), 0);
  EXPECT_EQ(s.Micro(10, M::kSys), 4 + (33 - 20));
  EXPECT_TILED(s);
}

// An increment whose start is after the traced switch-in is not the run's first (that
// one was done from an unfollowed task's context): the model's instant stands.
TEST(StateMachine, LateFirstIncrementDoesNotMoveTheSwitchIn) {
  Sim s(WithIncrements());
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1'000, 0, 10, kRead);
  s.StatRuntime(2'000, 0, 10, 2'000);
  s.Switch(3'000, 0, 10, kS, 20);                 // CPU0 stays busy with 20
  s.WakeBoth(10'000, 1, 0, 10, 0, kFlagHardirq);  // no need-resched shows on CPU0
  s.Switch(30'000, 0, 20, kS, 10);                // 20 blocks: a fresh clock
  s.SysExit(31'000, 0, 10, kRead);
  s.StatRuntime(100'000, 0, 10, 20'000);  // starts at 80'000: not from the switch
  s.SysEnter(110'000, 0, 10, kRead);
  s.StatRuntime(111'000, 0, 10, 11'000);
  s.Switch(111'000, 0, 10, kS, 0);
  s.Finish(120'000);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuWakeup), 30'000 - 10'000);
  EXPECT_EQ(s.Report(10).placement.in_early_ns, 0);
  EXPECT_TILED(s);
}

// A remote wakeup that preempts: its increment of the running task was done from an
// unfollowed context, so the task's increments stop early; the reschedule IPI (with
// need-resched set) shows about when the kernel accounted it last.
TEST(StateMachine, RescheduleIpiMarksAMissingIncrement) {
  Sim s(WithIncrements());
  s.Switch(0, 0, 0, kR, 10);
  s.StatRuntime(10'000, 0, 10, 10'000);  // switched in at 0, accounted to 10'000
  s.Vector(100'000, 0, 10, true, "reschedule", kFlagHardirq | kFlagNeedResched);
  s.Vector(101'000, 0, 10, false, "reschedule", kFlagHardirq | kFlagNeedResched);
  s.Switch(105'000, 0, 10, kR, 500);  // to an unfollowed task
  s.Finish(110'000);
  EXPECT_EQ(s.Micro(10, M::kUser), 100'000 - 2'000);  // to the IPI, less the lag bound
  EXPECT_EQ(s.Micro(10, M::kWaitCpuPreempted), 110'000 - 98'000);
  EXPECT_TILED(s);
}

// Beside a pid-filtered trace, the unfiltered run-time buffer has the increment a remote
// enqueue did from an unfollowed context (500, on CPU1): the preempted run ends at its
// clock, where the kernel switched, not at the reschedule IPI that followed. The buffer's
// increments done in a followed context are in the filtered trace already, and an
// unfollowed task's own are of no use: both are left out.
TEST(StateMachine, AnUnfilteredIncrementFromAnUnfollowedContextEndsThePreemptedRun) {
  for (const bool unfiltered : {false, true}) {
    const TrackingPolicy policy = Following({10});
    Sim s(WithIncrements(), policy);
    s.Switch(0, 0, 0, kR, 10);
    s.Switch(0, 1, 0, kR, 500);
    s.StatRuntime(10'000, 0, 10, 10'000);  // accounted to 10'000
    if (unfiltered) {
      s.UnfilteredRuntime(10'000, 0, 10, 10'000);       // in 10's own context: a copy
      s.UnfilteredRuntime(60'000, 1, 500, 7'000);       // an unfollowed task's own
      s.UnfilteredRuntime(85'300, 1, 10, 75'000, 500);  // the remote enqueue: to 85'000
    }
    s.Vector(92'000, 0, 10, true, "reschedule", kFlagHardirq | kFlagNeedResched);
    s.Vector(92'500, 0, 10, false, "reschedule", kFlagHardirq | kFlagNeedResched);
    s.Switch(95'000, 0, 10, kR, 500);  // reuses the enqueue's clock
    s.Finish(110'000);
    const int64_t end = unfiltered ? 85'000 : 92'000 - 2'000;  // without: the IPI less the lag
    EXPECT_EQ(s.Micro(10, M::kUser), end) << unfiltered;
    EXPECT_EQ(s.Micro(10, M::kWaitCpuPreempted), 110'000 - end) << unfiltered;
    EXPECT_EQ(s.machine().unfiltered_increments_used(), unfiltered ? 1u : 0u);
    EXPECT_TILED(s);
  }
}

// An unfiltered increment of a followed thread that is asleep tells nothing (an
// unfollowed context read its run time, with no run to add to): the report's count of
// increments used leaves it out, and the sleep stays whole.
TEST(StateMachine, AnUnfilteredIncrementOfASleepingThreadIsNotCountedAsUsed) {
  Sim s(WithIncrements(), Following({10}));
  s.Switch(0, 0, 0, kR, 10);
  s.StatRuntime(10'000, 0, 10, 10'000);
  s.SysEnter(15'000, 0, 10, 0);          // read
  s.StatRuntime(20'000, 0, 10, 10'000);  // __schedule()'s own update
  s.Switch(20'000, 0, 10, kS, 0);
  s.UnfilteredRuntime(30'000, 1, 10, 5'000, 500);  // read from 500's context on CPU 1
  s.Finish(50'000);
  EXPECT_EQ(s.machine().unfiltered_increments_used(), 0u);
  EXPECT_EQ(s.Micro(10, M::kSleep), 50'000 - 20'000);
  EXPECT_TILED(s);
}

// With every increment in the trace (the unfiltered run-time buffer beside it), a run's
// increments that add up to less than the next one's clock show the clock standing still
// (steal), not an update filtered out: the thread stays on its CPU in the microstates,
// and the stretch is named. Without that buffer, or once it lost events, the same gap is
// taken for a filtered update, as before.
//
//   CPU0:  10 on CPU --------------------------------------------------------| ==> 500
//   incr:  [0, 10'000)   (no update: 10'000..40'000)   [40'000, 100'000) [.., 105'000)
TEST(StateMachine, AGapInTheIncrementsIsStealWhenEveryIncrementIsInTheTrace) {
  enum class Case { kNoBuffer, kBuffer, kBufferLost, kTraceLost };
  for (const Case c : {Case::kNoBuffer, Case::kBuffer, Case::kBufferLost, Case::kTraceLost}) {
    TraceCapabilities caps = WithIncrements();
    caps.all_increments = c != Case::kNoBuffer;
    const TrackingPolicy policy = Following({10});
    Sim s(caps, policy);
    s.Switch(0, 0, 0, kR, 10);
    s.StatRuntime(10'500, 0, 10, 10'000);  // from 500: within the lag of the switch-in
    if (c == Case::kBufferLost) s.UnfilteredLost(20'000, 1, 3);
    if (c == Case::kTraceLost) s.Lost(20'000, 1, 3);  // another CPU's: a remote update there?
    s.StatRuntime(100'500, 0, 10, 60'000);            // from 40'500: 30'000 the clock did not count
    s.StatRuntime(105'500, 0, 10, 5'000);             // the run went on past it
    s.Switch(106'000, 0, 10, kR, 500);
    s.Finish(110'000);
    // The lag rule keeps the switch-in at 0; the run ends with its last increment's clock.
    const int64_t stolen = c == Case::kBuffer ? 100'500 - 2'000 - 70'000 : 0;
    EXPECT_EQ(s.Report(10).placement.stolen_ns, stolen) << static_cast<int>(c);
    EXPECT_EQ(s.Micro(10, M::kUser), 105'500 - 2'000) << static_cast<int>(c);
    EXPECT_TILED(s);
  }
}

// Increments cannot add up past their own clock: when the one after a gap counts from the
// gapped one's clock, that clock was an old one (a reschedule at the return from a long
// execve picked the same task, reusing the clock of the wakeup that asked for it: no
// switch shows it), and the stretch was run time, not steal. Counted from that one's
// event on, the gap was steal.
//
//   CPU0:  10 on CPU ---------------------------------------------------------| ==> 500
//   incr:  [0, 10'000)  [10'000, 40'000) at 100'500  then at 105'500: from 40'000 or 98'500
TEST(StateMachine, AnIncrementCountingFromTheGappedOnesClockMakesTheGapRunTime) {
  // The next increment's runtime, the steal left and where the run ends: counted from
  // the gapped one's clock, from halfway, from its event, or from less than a lag before
  // it (the two events' lags differ: taken as it is).
  struct Case {
    uint64_t runtime;
    int64_t stolen;
    int64_t end;
  };
  const Case cases[] = {{63'500, 0, 103'500},
                        {35'000, 28'500, 103'500},
                        {5'000, 58'500, 103'500},
                        {6'900, 58'500, 105'400}};
  for (const auto& [runtime, stolen, end] : cases) {
    SCOPED_TRACE(runtime);
    Sim s = FollowingWithEveryIncrement({10});
    s.Switch(0, 0, 0, kR, 10);
    s.StatRuntime(10'500, 0, 10, 10'000);
    s.StatRuntime(100'500, 0, 10, 30'000);  // to 40'000: 58'500 short of its event
    s.StatRuntime(105'500, 0, 10, runtime);
    s.Switch(106'000, 0, 10, kR, 500);
    s.Finish(110'000);
    EXPECT_EQ(s.Report(10).placement.stolen_ns, stolen);
    EXPECT_EQ(s.Micro(10, M::kUser), end);
    EXPECT_TILED(s);
  }
}

// A gap in a run's increments can also be an increment's event written late: the vCPU
// stalled between the clock read and the event, and the kernel gave the stall to what
// ran next. At a voluntary switch-out the next task's first increment tells: measured
// from that clock, the switch came there; measured from the event on, the clock stood
// still.
//
//   CPU0:  10 user ... read() | incr(2'000) at 50'500      switch 10 ==> 11 at 51'000
//   incr:  [0, 10'000)  [10'000, 12'000) if late, [46'500, 48'500) if steal
//          11: first incr at 55'000 from 12'000 (late) or from 48'500 (steal)
TEST(StateMachine, AGapThatTheNextTaskCoversWasALateEventNotSteal) {
  for (const bool late : {true, false}) {
    Sim s = FollowingWithEveryIncrement({10, 11});
    s.Switch(0, 0, 0, kR, 10);
    s.StatRuntime(10'500, 0, 10, 10'000);
    s.Wake(11'000, 0, 10, 11, 0);
    s.SysEnter(12'000, 0, 10, 0);
    s.StatRuntime(50'500, 0, 10, 2'000);  // from 48'500: 36'500 after the one before
    s.Switch(51'000, 0, 10, kS, 11);
    s.StatRuntime(55'000, 0, 11, late ? 43'000 : 6'500);  // from 12'000 or from 48'500
    s.Finish(60'000);
    const int64_t end = late ? 12'000 : 48'500;  // 10's switch-out, as the kernel had it
    EXPECT_EQ(s.Report(10).placement.stolen_ns, late ? 0 : 36'500) << late;
    EXPECT_EQ(s.Micro(10, M::kUser) + s.Micro(10, M::kSys), end) << late;
    EXPECT_EQ(s.Micro(10, M::kSleep), 60'000 - end) << late;
    EXPECT_TILED(s);
  }
}

// Steal at a preemption: 10 wakes 11 with need-resched set (11 will preempt it at that
// wakeup's clock), then the host takes the vCPU for 500 us before the switch. With every
// increment in the file, 10's wakeup increment is the last of its run, and 11's first is
// measured from the same clock: it counts 2 us, not 502. The kernel charged neither with
// the 500 us and counted them in 10's run delay; the switch was at 10'000 for both, and
// the stretch is steal in 11's run. Without every increment (10's last may be missing),
// or from an increment done remotely, the next task's first increment places the switch
// (at 510'000), as before. (A pid-filtered ping-pong under a build: 10's on-CPU +0.504 ms
// and run delay -0.502 ms, kernel check FAIL.)
//
//   CPU0:  11 | 10 ---- incr, wake 11 (need-resched) ... stolen ... switch 10 ==> 11 .. incr 11
//          0  1'000     10'000                                      510'000           512'000
//          (10 switched in at 11's last increment's clock, 1'000; traced at 1'100)
TEST(StateMachine, StealBetweenAWakeupAndThePreemptionItAskedForIsTheNextRunsSteal) {
  enum class Case { kEveryIncrement, kNotEvery, kRemoteFirstIncrement };
  for (const Case c : {Case::kEveryIncrement, Case::kNotEvery, Case::kRemoteFirstIncrement}) {
    SCOPED_TRACE(static_cast<int>(c));
    TraceCapabilities caps = WithIncrements();
    caps.all_increments = c != Case::kNotEvery;
    Sim s(caps, Following({10, 11}));
    s.Switch(0, 0, 0, kR, 11);
    s.StatRuntime(1'000, 0, 11, 1'000);
    s.Switch(1'100, 0, 11, kS, 10);
    s.SysExit(1'200, 0, 10, kRead);       // 10 returns to user space
    s.StatRuntime(10'000, 0, 10, 9'000);  // the wakeup's update of 10: from 1'000
    s.WakeBoth(10'000, 0, 10, 11, 0, kFlagNeedResched);
    s.Switch(510'000, 0, 10, kR, 11, /*preempt=*/true);
    if (c == Case::kRemoteFirstIncrement)
      s.StatRuntime(512'000, 1, 11, 2'000, 0, 12);  // from CPU 1, by a wakeup there
    else
      s.StatRuntime(512'000, 0, 11, 2'000);
    s.Finish(520'000);
    const bool at_wakeup = c == Case::kEveryIncrement;
    const int64_t ran_to = at_wakeup ? 10'000 : 510'000;  // 10's run, as the kernel had it
    EXPECT_EQ(s.Micro(10, M::kSys) + s.Micro(10, M::kUser), ran_to - 1'000);
    EXPECT_EQ(s.Micro(10, M::kWaitCpuPreempted), 520'000 - ran_to);
    EXPECT_EQ(s.Micro(11, M::kWaitCpuWakeup), ran_to - 10'000);
    EXPECT_EQ(s.Report(11).placement.stolen_ns, at_wakeup ? 500'000 : 0);
    EXPECT_TILED(s);
  }
}

// A gap closed by the increment at a preemption: the clock stood still, or the switch
// reused the clock of a wakeup the trace did not see (it asked for the reschedule long
// before, and the task ran on in the kernel to its next preemption point: the end of an
// execve). The increment was computed with that clock. An unfollowed next task cannot
// tell which (its increments are not in the file): the switch came at that clock, and
// the run delay from there. With a followed one, or an increment long before the switch
// (not the switch's own), or a tick's (in a hardirq: its clock read right then; the
// preemption it caused reused it), the gap stays steal. (-a: a thread preempted by the
// recorder after a tick showed 1.7 ms of host steal as run delay, --check DISAGREE.)
//
//   CPU0:  10 on CPU -------------------------------------------| incr  ==> 500 (R)
//   incr:  [0, 10'000)  [10'000, 40'000) at 300'500
TEST(StateMachine, AGapClosedAtAPreemptionByAnUnfollowedTaskIsAReusedClock) {
  enum class Case {
    kUnfollowedNext,
    kFollowedNext,
    kIncrementLongBefore,
    kTicksIncrement,
    kSoftirqsIncrement,
    kRemoteIncrement
  };
  for (const Case c : {Case::kUnfollowedNext, Case::kFollowedNext, Case::kIncrementLongBefore,
                       Case::kTicksIncrement, Case::kSoftirqsIncrement, Case::kRemoteIncrement}) {
    SCOPED_TRACE(static_cast<int>(c));
    Sim s = FollowingWithEveryIncrement(c == Case::kFollowedNext ? std::vector<int32_t>{10, 500}
                                                                 : std::vector<int32_t>{10});
    s.Switch(0, 0, 0, kR, 10);
    s.StatRuntime(10'500, 0, 10, 10'000);
    const uint8_t flags = c == Case::kTicksIncrement      ? kFlagHardirq
                          : c == Case::kSoftirqsIncrement ? kFlagSoftirq
                                                          : 0;
    if (c == Case::kRemoteIncrement)  // a wakeup on CPU 1 updating 10 on CPU 0
      s.StatRuntime(300'500, 1, 10, 30'000, 0, 11);
    else
      s.StatRuntime(300'500, 0, 10, 30'000, flags);  // to 40'000
    const int64_t switch_at = c == Case::kIncrementLongBefore ? 600'000 : 301'000;
    s.Switch(switch_at, 0, 10, kR, 500);
    s.Finish(700'000);
    const bool reused_clock = c == Case::kUnfollowedNext;
    const int64_t end = reused_clock ? 40'000 : 300'500 - 2'000;
    EXPECT_EQ(s.Report(10).placement.stolen_ns, reused_clock ? 0 : end - 40'000);
    EXPECT_EQ(s.Micro(10, M::kUser), end);
    EXPECT_EQ(s.Micro(10, M::kWaitCpuPreempted), 700'000 - end);
    EXPECT_TILED(s);
  }
}

// The same rules for a run's first increment: one that counts from after the switch-in
// leaves a gap, which its own clock's freshness decides. A tick's (fresh) is steal at the
// start of the run, whatever the preemption's increment after it (an exec'ing `true`:
// 0.36 ms of steal before its first tick had been a wait the kernel's run delay did not
// have); one in the task's own context may have used an old clock, and the increment after
// it decides as before: the preemption's own (its clock reused, with an unfollowed next
// task) places the switch at the clock the accounting reached without the stretch.
//
//   CPU0:  500 ==> 10 at 0 ---------------------------------------| 10 ==> 500 (R) at 302'000
//   incr:  (steal 0..48'500) [.., 298'500) at 300'500 (tick)  [.., 299'500) at 301'500
//   or:    [0, 250'000) at 300'500, in 10's own context  [.., 251'000) at 301'500
TEST(StateMachine, AGapInARunsFirstIncrementIsDecidedByThatIncrementsClock) {
  for (const bool tick : {true, false}) {
    SCOPED_TRACE(tick);
    Sim s = FollowingWithEveryIncrement({10});
    s.Switch(0, 0, 500, kR, 10);
    s.StatRuntime(300'500, 0, 10, 250'000, tick ? kFlagHardirq : 0);  // measured from 50'500
    s.StatRuntime(301'500, 0, 10, 1'000);  // the preemption's, in 10's context
    s.Switch(302'000, 0, 10, kR, 500);
    s.Finish(400'000);
    const int64_t end = tick ? 301'500 - 2'000 : 251'000;
    EXPECT_EQ(s.Report(10).placement.stolen_ns, tick ? 300'500 - 2'000 - 250'000 : 0);
    EXPECT_EQ(s.Micro(10, M::kUser), end);
    EXPECT_EQ(s.Micro(10, M::kWaitCpuPreempted), 400'000 - end);
    EXPECT_TILED(s);
  }
}

// An increment of the running task between its sched_waking of another and that one's
// sched_wakeup on its own CPU is the enqueue's (enqueue_entity() accounts the running task
// with the clock ttwu just read): a fresh clock, so a gap it closes is steal, even where
// the preemption that follows has no increment of its own and an unfollowed next task.
// Queued on another CPU, the wakeup read that CPU's clock: the increment here is of no
// wakeup, and the rule for a task's own increment stands (a reused clock).
// (sh, at its exec, woke the recorder: 0.1 ms of its run had been taken for a wait.)
//
//   CPU0:  10 on CPU -------- waking(500) incr wakeup(500) ------| 10 ==> 500 (R)
//   incr:  [0, 10'000)  [10'000, 40'000) at 300'500: stood still 40'000..298'500
TEST(StateMachine, AnIncrementInsideAWakeupOnItsOwnCpuHasAFreshClock) {
  for (const bool own_cpu : {true, false}) {
    SCOPED_TRACE(own_cpu);
    Sim s = FollowingWithEveryIncrement({10});
    s.Switch(0, 0, 0, kR, 10);
    s.StatRuntime(10'500, 0, 10, 10'000);
    const int target = own_cpu ? 0 : 1;
    s.Wake(300'400, 0, 10, 500, target, 0, WakeupKind::kWaking);
    s.StatRuntime(300'500, 0, 10, 30'000);  // to 40'000
    s.Wake(300'600, 0, 10, 500, target, own_cpu ? kFlagNeedResched : 0, WakeupKind::kWakeup);
    s.Switch(301'000, 0, 10, kR, 500);
    s.Finish(700'000);
    const int64_t end = own_cpu ? 300'500 - 2'000 : 40'000;
    EXPECT_EQ(s.Report(10).placement.stolen_ns, end - 40'000);
    EXPECT_EQ(s.Micro(10, M::kWaitCpuPreempted), 700'000 - end);
    EXPECT_TILED(s);
  }
}

// A run's first increment, a tick's (a fresh clock), counts from after the traced switch-in:
// the clock stood still in the run. How much is sure depends on where the switch-in is
// dated: at the model's instant when that is within a lag of the traced switch, else only
// from the traced switch, the latest the kernel can have switched. Either way the run
// reached the tick's clock, less that uncertainty, before the preemption that followed
// (by an unfollowed task, with no increment of its own). (An exec'ing child of sh, switched
// in 4 us after its parent's last increment, had 0.2 ms of steal counted as a wait.)
//
//   CPU0:  10 incr at 10'000, 10 ==> 20 (S) at 11'000 or 14'000
//   incr of 20:  tick at 500'000, 300'000 (measured from 200'000)   20 ==> 500 (R) at 501'000
TEST(StateMachine, AFirstIncrementsShortfallIsSureFromTheTracedSwitchIn) {
  for (const int64_t traced_switch : {11'000, 14'000}) {
    SCOPED_TRACE(traced_switch);
    Sim s = FollowingWithEveryIncrement({10, 20});
    s.Switch(0, 0, 0, kR, 10);
    s.StatRuntime(10'000, 0, 10, 10'000);  // 10 accounted to 10'000, where it switches
    s.Switch(traced_switch, 0, 10, kS, 20);
    s.StatRuntime(500'000, 0, 20, 300'000, kFlagHardirq);
    s.Switch(501'000, 0, 20, kR, 500);
    s.Finish(700'000);
    const int64_t unsure = traced_switch - 10'000 <= 2'000 ? 0 : traced_switch - 10'000;
    const int64_t end = 500'000 - 2'000 - unsure;
    EXPECT_EQ(s.Report(20).placement.stolen_ns, end - 10'000 - 300'000);
    EXPECT_EQ(s.Micro(20, M::kWaitCpuPreempted), 700'000 - end);
    EXPECT_TILED(s);
  }
}

// A followed task on CPU1 queues 12 on CPU0, accounting 10 there (its increment is in
// the trace) and asking for a reschedule; the host then does not run CPU0 for 850 us, so
// the reschedule IPI and the switch come that late. The switch reuses the enqueue's
// clock: 10 waits from there. Without every increment in the trace, the model takes the
// IPI for the wakeup's time (at most kMaxIpiDelayNs late) and assumes an increment up to it.
//
//   CPU1:  11: waking(12) incr(10) wakeup(12 -> CPU0)
//   CPU0:  10 on CPU ----|.................(steal)......... IPI  switch 10 ==> 12
TEST(StateMachine, WithEveryIncrementALateReschedulingIpiKeepsTheEnqueuesClock) {
  for (const bool all_increments : {false, true}) {
    TraceCapabilities caps = WithIncrements();
    caps.all_increments = all_increments;
    const TrackingPolicy policy = Following({10, 11, 12});
    Sim s(caps, policy);
    s.Switch(0, 0, 0, kR, 10);
    s.Switch(0, 1, 0, kR, 11);
    s.StatRuntime(10'500, 0, 10, 10'000);
    s.Wake(50'000, 1, 11, 12, 0);
    s.StatRuntime(50'500, 1, 10, 40'000, 0, 11);  // the enqueue's update of 10: to 50'000
    s.Wake(51'000, 1, 11, 12, 0, 0, WakeupKind::kWakeup);
    s.Vector(900'000, 0, 10, true, "reschedule", kFlagHardirq | kFlagNeedResched);
    s.Vector(900'500, 0, 10, false, "reschedule", kFlagHardirq | kFlagNeedResched);
    s.Switch(901'000, 0, 10, kR, 12);
    s.StatRuntime(902'000, 0, 12, 500);  // measured from the reused clock, less the steal
    s.Finish(950'000);
    const int64_t end = all_increments ? 50'000 : 900'000 - 2'000;
    EXPECT_EQ(s.Micro(10, M::kUser), end) << all_increments;
    EXPECT_EQ(s.Micro(10, M::kWaitCpuPreempted), 950'000 - end) << all_increments;
    EXPECT_TILED(s);
  }
}

// With -a the buffer holds the recorder's contexts: an increment one of them did for a
// thread running elsewhere (a wakeup of a recorder thread queued there) fills a gap that
// would otherwise be taken for steal. A thread outside the report gets no steal: the
// increments other contexts do for it are not kept.
//
//   CPU0:  10 on CPU --------------------------------------------| ==> 11
//   incr:  [0, 10'000)  [10'000, 40'000) by recorder 900 on CPU1  [40'000, 100'000)
TEST(StateMachine, WithMinusATheRecordersIncrementsFillTheGapsTheyMade) {
  for (const bool recorder_increment : {false, true}) {
    TraceCapabilities caps = WithIncrements();
    caps.all_increments = true;
    TrackingPolicy policy;  // -a: every thread but the recorder's
    policy.recorder_tids = {900};
    Sim s(caps, policy);
    s.Switch(0, 0, 0, kR, 10);
    s.StatRuntime(10'500, 0, 10, 10'000);
    if (recorder_increment) s.UnfilteredRuntime(40'500, 1, 10, 30'000, 900);
    s.StatRuntime(100'500, 0, 10, 60'000);
    s.Switch(101'000, 0, 10, kR, 11);
    s.Finish(110'000);
    EXPECT_EQ(s.Report(10).placement.stolen_ns, recorder_increment ? 0 : 98'500 - 70'000);
    EXPECT_EQ(s.machine().unfiltered_increments_used(), recorder_increment ? 1u : 0u);
    EXPECT_TILED(s);
  }
  // An untracked thread's own increments with a gap: no steal is claimed for it.
  TraceCapabilities caps = WithIncrements();
  caps.all_increments = true;
  const TrackingPolicy policy = Following({10});
  Sim s(caps, policy);
  s.Switch(0, 0, 0, kR, 500);
  s.StatRuntime(10'500, 0, 500, 10'000);
  s.StatRuntime(100'500, 0, 500, 60'000);
  s.Finish(110'000);
  for (const Thread& t : s.machine().threads()) EXPECT_EQ(t.placement.stolen_ns, 0) << t.tid;
}

// A preemption whose last increment is missing: the next task's first increment tells
// the clock both switched at.
TEST(StateMachine, PreemptedRunEndsWhereTheNextStarts) {
  Sim s(WithIncrements());
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1'000, 0, 10, kWrite);
  s.StatRuntime(50'000, 0, 10, 50'000);  // accounted to 50'000
  s.WakeBoth(52'000, 1, 0, 11, 0, kFlagHardirq);
  s.Switch(60'000, 0, 10, kR, 11);       // the model: at 50'000 (its increments' end)
  s.StatRuntime(70'000, 0, 11, 15'000);  // 11 ran from 55'000: so did 10, until then
  s.Finish(80'000);
  EXPECT_EQ(s.Micro(10, M::kSys), 55'000 - 1'000);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuPreempted), 80'000 - 55'000);
  EXPECT_EQ(s.Report(10).placement.out_early_ns, 60'000 - 55'000);
  EXPECT_EQ(s.Report(11).placement.in_early_ns, 60'000 - 55'000);
  EXPECT_TILED(s);
}

// A reschedule IPI made the model assume a missing increment; the next increment, measured
// from where the last one ended, shows none was missing: the assumption is taken back.
TEST(StateMachine, IncrementTakesBackAnIncrementTheIpiAssumedMissing) {
  Sim s(WithIncrements());
  s.Switch(0, 0, 0, kR, 10);
  s.StatRuntime(10'000, 0, 10, 10'000);  // accounted to 10'000
  s.Vector(100'000, 0, 10, true, "reschedule", kFlagHardirq | kFlagNeedResched);
  s.Vector(101'000, 0, 10, false, "reschedule", kFlagHardirq | kFlagNeedResched);
  s.StatRuntime(100'500, 0, 10, 90'000);  // from 10'500: nothing was missing; to 100'000
  s.Switch(105'000, 0, 10, kR, 500);      // to an unfollowed task
  s.Finish(110'000);
  EXPECT_EQ(s.Micro(10, M::kUser), 100'000);
  EXPECT_TILED(s);
}

// The exit record (taskstats, sampled before it wakes the recorder's listener) holds the
// accounting as of the kernel's last update before it: an update the trace shows only by
// the next increment's start counts only if it came before the record.
TEST(StateMachine, ExitRecordHoldsOnlyTheUpdatesBeforeIt) {
  for (const auto& [runtime, expected] :
       {std::pair<uint64_t, int64_t>{5'000, 10'000}, {18'000, 22'000}}) {
    Sim s(WithIncrements());
    s.Switch(0, 0, 0, kR, 10);
    s.StatRuntime(10'000, 0, 10, 10'000);  // accounted to 10'000
    s.SysEnter(20'000, 0, 10, kExitGroup);
    s.Wake(25'000, 0, 10, 600, 1);  // taskstats_exit() wakes the listener: the record
    s.Exit(26'000, 0, 10);
    s.StatRuntime(40'000, 0, 10, runtime);  // its update at 40'000 - runtime
    s.Switch(41'000, 0, 10, kStateZombie, 0);
    s.Finish(50'000);
    EXPECT_EQ(s.Report(10).thread->accounted_at_exit, expected) << "runtime " << runtime;
  }
}

// hackbench's senders: after their last increment, 3 ms of 100-byte writes (6 000
// segments) and the exit, whose record holds only that increment's accounting. The
// window is cut there although the run since has more segments than a few thousand
// (--check had put all of it in the record: +3 ms on-CPU).
TEST(StateMachine, ExitRecordCutsARunOfThousandsOfSegmentsAtItsLastIncrement) {
  Sim s(WithIncrements());
  s.Switch(0, 0, 0, kR, 10);
  s.StatRuntime(10'000, 0, 10, 10'000);  // accounted to 10'000
  int64_t ts = 10'000;
  for (int i = 0; i < 3'000; ++i, ts += 1'000) {
    s.SysEnter(ts + 100, 0, 10, kWrite);
    s.SysExit(ts + 600, 0, 10, kWrite);
  }
  s.SysEnter(ts, 0, 10, kExitGroup);
  s.Wake(ts + 5'000, 0, 10, 600, 1);  // the record
  s.Exit(ts + 6'000, 0, 10);
  s.StatRuntime(ts + 7'000, 0, 10, ts - 3'000);  // from 10'000
  s.Switch(ts + 8'000, 0, 10, kStateZombie, 0);
  s.Finish(ts + 9'000);
  const ThreadReport& r = s.Report(10);
  EXPECT_EQ(r.thread->accounted_at_exit, 10'000);
  EXPECT_EQ(r.counter_window.exit_ts, 10'000);
  EXPECT_EQ(r.counter_window.total.on_cpu_ns - r.counter_window.after_exit.on_cpu_ns, 10'000);
}

// A thread still running when the recording ends, its last increment before /proc's end
// sample (taken while tracing is on): the sample read its exec runtime as that increment
// left it, so the window's cut counts its run up to there, not up to the sample. (An -a
// recording's assembler, 1.8 ms after its last tick: +1.8 ms, --check DISAGREE.) With
// increments possibly missing, the cut stays at the sample.
TEST(StateMachine, AThreadRunningAtTheEndIsSampledAtItsLastIncrement) {
  for (const bool complete : {true, false}) {
    SCOPED_TRACE(complete);
    TraceCapabilities caps = WithIncrements();
    caps.all_increments = complete;
    Sim s(caps);
    s.Switch(0, 0, 0, kR, 10);
    s.SysEnter(1'000, 0, 10, kWrite);
    s.SampleAt(10, 15'000);
    s.SysExit(2'000, 0, 10, kWrite);
    s.StatRuntime(10'000, 0, 10, 10'000);  // accounted to 10'000
    s.SysEnter(16'000, 0, 10, kWrite);     // after the sample, no increment
    s.SysExit(17'000, 0, 10, kWrite);
    s.Finish(20'000);
    const WindowCut* cut = s.Report(10).counter_window.Cut(15'000);
    ASSERT_NE(cut, nullptr);
    EXPECT_EQ(cut->before.on_cpu_ns, complete ? 10'000 : 15'000);
  }
}

// A tick between the exit's start and the listener's wakeup: taskstats read the runtime
// before or after it (the trace cannot tell), so the accounting before the tick is kept as
// the record's other candidate, and the exit window is cut at both.
TEST(StateMachine, TickBeforeTheExitRecordLeavesTwoCandidates) {
  Sim s(WithIncrements());
  s.Switch(0, 0, 0, kR, 10);
  s.StatRuntime(10'000, 0, 10, 10'000);  // accounted to 10'000
  s.SysEnter(20'000, 0, 10, kExitGroup);
  s.StatRuntime(24'000, 0, 10, 14'000);  // the tick: 10'000 -> 24'000
  s.Wake(25'000, 0, 10, 600, 1);         // the listener: the record was read by now
  s.Exit(26'000, 0, 10);
  s.StatRuntime(40'000, 0, 10, 16'000);
  s.Switch(41'000, 0, 10, kStateZombie, 0);
  s.Finish(50'000);
  const ThreadReport& r = s.Report(10);
  EXPECT_EQ(r.thread->accounted_at_exit, 24'000);
  EXPECT_EQ(r.thread->accounted_before_exit_tick, 10'000);
  EXPECT_EQ(r.counter_window.exit_ts, 24'000);
  EXPECT_EQ(r.counter_window.exit_before_tick_ts, 10'000);
  EXPECT_EQ(r.counter_window.total.on_cpu_ns - r.counter_window.after_exit.on_cpu_ns, 24'000);
  EXPECT_EQ(r.counter_window.total.on_cpu_ns - r.counter_window.after_exit_before_tick.on_cpu_ns,
            10'000);
}

// exit() with other threads alive (exit_group()) wakes them, to kill them, before
// do_exit() takes the record, and an update such a wakeup makes is in the record. The
// record is where the recorder's listener is woken when the file names it (a tracer's
// wakeup, at the exit's ptrace stop, comes before the record too); in an older file, the
// first wakeup of a thread outside the process. (A thread pool's exit(): --check said
// 1.5 ms of its run was after the record.)
TEST(StateMachine, AnExitsWakeupsOfItsOwnThreadsComeBeforeTheRecord) {
  for (const bool named : {true, false}) {
    SCOPED_TRACE(named);
    TraceCapabilities caps = WithIncrements();
    if (named) caps.exit_listener_tid = 600;
    TrackingPolicy policy;
    policy.known_tgids = {{10, 10}, {11, 10}};
    Sim s(caps, policy);
    s.Switch(0, 0, 0, kR, 10);
    s.StatRuntime(10'000, 0, 10, 10'000);  // accounted to 10'000
    s.SysEnter(20'000, 0, 10, kExitGroup);
    s.Wake(21'000, 0, 10, 11, 1);              // its other thread, to kill it
    s.StatRuntime(22'000, 0, 10, 12'000);      // that wakeup's update: accounted to 22'000
    if (named) s.Wake(23'000, 0, 10, 700, 1);  // a tracer, at the exit's ptrace stop
    s.Wake(25'000, 0, 10, 600, 1);             // the listener: the record
    s.Exit(26'000, 0, 10);
    s.StatRuntime(40'000, 0, 10, 18'000);  // from 22'000
    s.Switch(41'000, 0, 10, kStateZombie, 0);
    s.Finish(50'000);
    const Thread& t = *s.Report(10).thread;
    EXPECT_EQ(t.exit_record_ts, 25'000);
    EXPECT_EQ(t.accounted_at_exit, 22'000);
    EXPECT_EQ(s.Report(10).counter_window.exit_ts, 22'000);
  }
}

// CPU 1 left out of the recording (record -C 0).
TraceCapabilities CpuOneLeftOut() {
  TraceCapabilities caps;
  caps.untraced_cpus = {1};
  return caps;
}

// record -C leaves a CPU out: a thread queued there, by a wakeup or a move, may run, wait
// or sleep there unseen. That time is unknown until its next event on a recorded CPU, not
// a wait for a CPU (a ping-pong pinned to the unrecorded CPU showed 95-100 % of it).
TEST(StateMachine, AThreadQueuedOnAnUnrecordedCpuIsUnknownThere) {
  Sim s(CpuOneLeftOut());
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(5, 0, 10, kRead);
  s.Switch(100, 0, 10, kS, 11);        // 10 sleeps; 11 runs on CPU 0
  s.WakeBoth(200, 0, 11, 10, 1);       // 10 queued on CPU 1, not recorded
  s.Switch(400, 0, 11, kR, 10, true);  // back on CPU 0 (moved there unseen)
  s.SysExit(410, 0, 10, kRead);
  s.Switch(500, 0, 10, kR, 11, true);  // 10 preempted, queued on CPU 0
  s.Migrate(600, 0, 11, 10, 0, 1);     // and moved to CPU 1
  s.Switch(900, 0, 11, kS, 10);
  s.Finish(1'000);
  EXPECT_EQ(s.Micro(10, M::kSleep), 100);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuWakeup), 0);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuPreempted), 600 - 500);
  EXPECT_EQ(s.Micro(10, M::kUnknown), (400 - 200) + (900 - 600));
  EXPECT_TILED(s);
  // With every CPU recorded the same events are a wait for a CPU.
  Sim all;
  all.Switch(0, 0, 0, kR, 10);
  all.SysEnter(5, 0, 10, kRead);
  all.Switch(100, 0, 10, kS, 11);
  all.WakeBoth(200, 0, 11, 10, 1);
  all.Switch(400, 0, 11, kR, 10, true);
  all.Finish(500);
  EXPECT_EQ(all.Micro(10, M::kUnknown), 0);
  EXPECT_EQ(all.Micro(10, M::kWaitCpuWakeup), 200);
}

// Woken onto the unrecorded CPU and woken again before it shows running: it ran and slept
// there unseen, a voluntary switch the kernel counted (--check had one switch too few
// wherever a new thread started on the unrecorded CPU).
TEST(StateMachine, AThreadWokenAgainOnAnUnrecordedCpuSleptThereUnseen) {
  Sim s(CpuOneLeftOut());
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(5, 0, 10, kRead);
  s.Switch(100, 0, 10, kS, 11);
  s.WakeBoth(200, 0, 11, 10, 1);  // onto CPU 1, not recorded
  s.WakeBoth(300, 0, 11, 10, 0);  // woken again: it had run and slept there
  s.Switch(400, 0, 11, kR, 10, true);
  s.Finish(500);
  EXPECT_EQ(s.Report(10).voluntary, 2u);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuWakeup), 100);
  EXPECT_TILED(s);
}

constexpr int64_t kExecve = 59;  // x86_64

// Process 10 and its second thread 11, the one that execs.
TrackingPolicy LeaderAndThread() {
  TrackingPolicy policy;
  policy.known_tgids = {{10, 10}, {11, 10}};
  return policy;
}

// A non-leader thread's exec: the kernel exchanges its tid with its leader's as the
// leader exits, and events carry the new tids before sched_process_exec says so: the
// thread's (its new name, a page fault, a preemption) the leader's tid, the leader's last
// ones (an interrupt, its final switch) the thread's old tid, whichever side shows first.
// They are each one's own: the leader keeps its name and switches, nothing is an anomaly,
// and the kernel's counters name the thread by the leader's tid from the exchange on.
//
// The kernel often leaves out the switch to the woken thread (from idle, or from a task a
// pid-filtered trace does not follow): its first event on that CPU, as the leader's tid,
// is still the thread's (it was taken for the dead leader's, an event from a sleeping
// thread, on 5 of 60 recordings of such an exec).
TEST(StateMachine, AnExecExchangesTheTidsOfTheThreadAndItsLeader) {
  enum class Shape { kThreadFirst, kLeaderFirst, kUntracedFromIdle, kUntracedFromUnfollowed };
  for (const Shape shape : {Shape::kThreadFirst, Shape::kLeaderFirst, Shape::kUntracedFromIdle,
                            Shape::kUntracedFromUnfollowed}) {
    SCOPED_TRACE(static_cast<int>(shape));
    const bool leader_first = shape == Shape::kLeaderFirst;
    const bool untraced_switch_in =
        shape == Shape::kUntracedFromIdle || shape == Shape::kUntracedFromUnfollowed;
    TrackingPolicy policy;
    policy.all = false;
    policy.root_pids = {10};
    policy.known_tgids = {{10, 10}, {11, 10}, {20, 20}};
    Sim s({}, policy);
    s.Switch(0, 0, 0, kR, 10);  // the leader, on CPU 0
    s.Switch(0, 1, 0, kR, 11);  // the thread that execs, on CPU 1
    s.SysEnter(1'000, 0, 10, kRead);
    s.SysExit(1'500, 0, 10, kRead);
    s.SysEnter(3'000, 1, 11, kExecve);
    // It waits for the leader to die; an unfollowed task 20 runs, and goes idle unseen.
    s.Switch(3'500, 1, 11, kD, shape == Shape::kUntracedFromUnfollowed ? 20 : 0);
    s.Exit(6'000, 0, 10);  // killed by the exec
    s.Wake(6'500, 0, 10, 11, 1);
    if (!untraced_switch_in) s.Switch(7'000, 1, 0, kR, 11);
    if (leader_first) {  // the leader's last events, under the thread's old tid
      s.Vector(7'400, 0, 11, true);
      s.Vector(7'450, 0, 11, false);
      s.Switch(7'600, 0, 11, kStateZombie, 0);
    } else {
      s.Switch(7'600, 0, 10, kStateZombie, 0);
    }
    s.Rename(8'000, 1, 10, "newprog");  // the thread, as 10 now
    s.Fault(9'000, 1, 10);
    s.Switch(10'000, 1, 10, kR, 0, /*preempt=*/true, "swapper/1", 0, "newprog");
    s.Switch(11'000, 1, 0, kR, 10, false, "newprog");
    s.Exec(12'000, 1, 11, 10);
    s.SysExit(13'000, 1, 10, kExecve);
    s.Finish(20'000);
    for (Anomaly a : {Anomaly::kSwitchOutNotCurrent, Anomaly::kEventFromSleepingThread,
                      Anomaly::kSwitchInAlreadyOnCpu, Anomaly::kMissingSwitchOut})
      EXPECT_EQ(s.sm().anomalies().Get(a), 0u) << NameOf(a);
    EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kMissingSwitchFromIdle),
              shape == Shape::kUntracedFromIdle ? 1u : 0u);
    const ThreadReport& execed = s.Report(10);
    const ThreadReport* leader = nullptr;
    for (const ThreadReport& r : s.model().threads)
      if (r.thread && r.thread->tid == 10 && &r != &execed) leader = &r;
    ASSERT_NE(leader, nullptr);
    EXPECT_EQ(execed.thread->comm, "newprog");
    EXPECT_EQ(execed.thread->tid_since, leader_first ? 7'400 : 8'000);
    EXPECT_EQ(execed.thread->tid_before_exec, 11);
    EXPECT_EQ(leader->thread->tid_before_exec, 0);
    // The exec released the leader: a zombie from its final switch to the exec's event.
    EXPECT_EQ(leader->thread->end_ts, 12'000);
    EXPECT_EQ(leader->microstates[static_cast<size_t>(M::kZombie)], 12'000 - 7'600);
    EXPECT_EQ(execed.voluntary, 1u);  // its wait for the leader
    EXPECT_EQ(execed.involuntary, 1u);
    EXPECT_EQ(leader->thread->comm, "task");
    EXPECT_EQ(leader->thread->tid_since, 0);
    EXPECT_EQ(leader->voluntary, 1u);  // its final switch
    EXPECT_EQ(leader->involuntary, 0u);
    EXPECT_TILED(s);
  }
}

// Process 10, whose thread 11 execs, and process 30 followed beside it (500 is not),
// with every increment in the file.
Sim ExecsProcessWithEveryIncrement() {
  TraceCapabilities caps = WithIncrements();
  caps.all_increments = true;
  TrackingPolicy policy;
  policy.all = false;
  policy.root_pids = {10, 30};
  policy.known_tgids = {{10, 10}, {11, 10}, {500, 500}, {30, 30}};
  return Sim(caps, policy);
}

// An increment done from another context (a wakeup on another CPU checking preemption
// there; an unfollowed one's is in the unfiltered buffer) names the exec'ing thread by
// its leader's tid once the leader is dead: the kernel exchanged the tids before the
// thread's own events show it. It is the thread's run time, not the dead leader's; taken
// for the leader's, the thread's increments fell short of its run, read as steal.
//
//   CPU 0:  10 (leader) ... exit ... wakes 11 | X      500: incr(pid 10, 100'000) at 800'000
//   CPU 1:  11 in execve, waits (D) .......... | 11 runs from 700'000 ... as 10: incr at 900'000
TEST(StateMachine, AnIncrementOfTheLeadersTidAfterItsDeathIsTheExecingThreads) {
  for (const bool followed_context : {false, true}) {
    SCOPED_TRACE(followed_context);
    Sim s = ExecsProcessWithEveryIncrement();
    s.Switch(0, 0, 0, kR, 10);
    s.Switch(0, 1, 0, kR, 11);
    s.StatRuntime(100'000, 0, 10, 100'000);
    s.StatRuntime(100'000, 1, 11, 100'000);
    s.SysEnter(200'000, 1, 11, kExecve);
    s.StatRuntime(350'000, 1, 11, 250'000);
    s.Switch(350'000, 1, 11, kD, 0);  // waits for the leader to die
    s.Exit(600'000, 0, 10);
    s.Wake(650'000, 0, 10, 11, 1);
    s.Switch(700'000, 1, 0, kR, 11);
    s.StatRuntime(760'000, 0, 10, 660'000);
    s.Switch(760'000, 0, 10, kStateZombie, 0);
    // The thread, as 10: 700'000 -> 800'000. A wakeup on CPU 0 checked preemption on CPU 1.
    if (followed_context)
      s.StatRuntime(800'000, 0, 10, 100'000, 0, 30);
    else
      s.UnfilteredRuntime(800'000, 0, 10, 100'000, 500);
    s.StatRuntime(900'000, 1, 10, 100'000);  // its own tick, as 10
    s.Exec(1'000'000, 1, 11, 10);
    s.SysExit(1'050'000, 1, 10, kExecve);
    s.StatRuntime(1'200'000, 1, 10, 300'000);
    s.Switch(1'200'000, 1, 10, kS, 0);
    s.Finish(2'000'000);
    for (Anomaly a : {Anomaly::kSwitchOutNotCurrent, Anomaly::kEventFromSleepingThread,
                      Anomaly::kSwitchInAlreadyOnCpu, Anomaly::kMissingSwitchOut})
      EXPECT_EQ(s.sm().anomalies().Get(a), 0u) << NameOf(a);
    const ThreadReport& execed = s.Report(10);
    ASSERT_EQ(execed.thread->tid_before_exec, 11);
    EXPECT_EQ(execed.placement.stolen_ns, 0);
    EXPECT_EQ(execed.microstates[static_cast<size_t>(M::kUser)] +
                  execed.microstates[static_cast<size_t>(M::kSys)],
              350'000 + 500'000);
    const ThreadReport* leader = nullptr;
    for (const ThreadReport& r : s.model().threads)
      if (r.thread && r.thread->tid == 10 && &r != &execed) leader = &r;
    ASSERT_NE(leader, nullptr);
    EXPECT_EQ(leader->microstates[static_cast<size_t>(M::kZombie)], 1'000'000 - 760'000);
    EXPECT_EQ(leader->placement.stolen_ns, 0);
    EXPECT_TILED(s);
  }
}

// A leader preempted in its exit is alive: an increment naming its tid (done by another
// context) is its own, and the exec'ing thread it woke keeps its tid until an event of
// its own shows the exchange.
TEST(StateMachine, AnIncrementOfAnExitingLeaderStillAliveIsItsOwn) {
  Sim s = ExecsProcessWithEveryIncrement();
  s.Switch(0, 0, 0, kR, 10);
  s.Switch(0, 1, 0, kR, 11);
  s.SysEnter(200'000, 1, 11, kExecve);
  s.StatRuntime(350'000, 1, 11, 350'000);
  s.Switch(350'000, 1, 11, kD, 0);  // waits for the leader to die
  s.StatRuntime(500'000, 0, 10, 500'000);
  s.Exit(600'000, 0, 10);
  s.Wake(650'000, 0, 10, 11, 1);
  s.StatRuntime(700'000, 0, 10, 200'000);
  s.Switch(700'000, 0, 10, kR, 500, /*preempt=*/true);  // preempted in its exit
  s.UnfilteredRuntime(800'000, 0, 10, 1'000, 500);      // run again unseen: its own
  const Thread* leader = nullptr;
  const Thread* execing = nullptr;
  for (const Thread& t : s.sm().threads()) {
    if (t.tid == 10) leader = &t;
    if (t.tid == 11) execing = &t;
  }
  ASSERT_NE(leader, nullptr);
  ASSERT_NE(execing, nullptr);
  EXPECT_TRUE(leader->exiting);
  EXPECT_EQ(execing->tid_since, 0);  // no exchange
  EXPECT_TRUE(IsSleeping(execing->state) || IsWaitingForCpu(execing->state));
}

// The leader's own events between its wakeup of the exec'ing thread and the exchange are
// its own, even where the CPU's current is unknown (lost events) and the thread is queued
// on that CPU with its switch-in not yet seen.
TEST(StateMachine, TheLeadersOwnEventAfterItWokeTheExecingThreadKeepsItsTid) {
  Sim s({}, LeaderAndThread());
  s.Switch(0, 0, 0, kR, 10);
  s.Switch(0, 1, 0, kR, 11);
  s.SysEnter(3'000, 1, 11, kExecve);
  s.Switch(3'500, 1, 11, kD, 0);
  s.Exit(6'000, 0, 10);
  s.Wake(6'500, 0, 10, 11, 0);  // queued on the leader's CPU
  s.Lost(6'600, 0, 3);
  s.Vector(6'700, 0, 10, true);  // the leader, still on CPU 0
  s.Vector(6'750, 0, 10, false);
  s.Switch(7'600, 0, 10, kStateZombie, 11);
  s.Rename(8'000, 0, 10, "newprog");  // the thread, as 10 now
  s.Exec(12'000, 0, 11, 10);
  s.SysExit(13'000, 0, 10, kExecve);
  s.Finish(20'000);
  const ThreadReport& execed = s.Report(10);
  ASSERT_EQ(execed.thread->tid_before_exec, 11);
  EXPECT_EQ(execed.thread->comm, "newprog");
  EXPECT_EQ(execed.thread->tid_since, 8'000);
  for (const ThreadReport& r : s.model().threads)
    if (r.thread && r.thread->tid == 10 && &r != &execed) {
      EXPECT_EQ(r.thread->comm, "task");
      EXPECT_EQ(r.voluntary, 1u);  // its final switch
    }
}

// The exec'ing thread names its leader's tid before the exchange too, about the leader:
// it wakes it to kill it (a leader the trace had not shown yet, as in -a or a flight
// dump), then switches to it. Those name the leader; the exchange comes with the thread's
// first event as the leader's tid (here its new name).
TEST(StateMachine, AnExecingThreadWakingAndSwitchingToItsLeaderExchangesNothing) {
  Sim s({}, LeaderAndThread());
  s.Switch(0, 1, 0, kR, 11);
  s.SysEnter(1'000, 1, 11, kExecve);
  s.Wake(2'000, 1, 11, 10, 1);     // kills the leader, unseen so far
  s.Switch(3'000, 1, 11, kD, 10);  // waits for it; it runs
  s.Exit(3'500, 1, 10);
  s.Wake(3'600, 1, 10, 11, 1);
  s.Switch(4'000, 1, 10, kStateZombie, 11);
  s.Rename(5'000, 1, 10, "newprog");  // the thread, as 10 now
  s.Exec(6'000, 1, 11, 10);
  s.SysExit(7'000, 1, 10, kExecve);
  s.Finish(10'000);
  for (Anomaly a : {Anomaly::kSwitchOutNotCurrent, Anomaly::kEventFromSleepingThread,
                    Anomaly::kSwitchInAlreadyOnCpu, Anomaly::kMissingSwitchOut})
    EXPECT_EQ(s.sm().anomalies().Get(a), 0u) << NameOf(a);
  // By internal id: the thread came first, the leader at its wakeup; both are 10 now.
  ASSERT_EQ(s.model().threads.size(), 2u);
  const ThreadReport& execed = s.model().threads[0];
  const ThreadReport& leader = s.model().threads[1];
  EXPECT_EQ(execed.thread->tid, 10);
  EXPECT_EQ(execed.thread->comm, "newprog");
  EXPECT_EQ(execed.thread->tid_since, 5'000);
  EXPECT_EQ(execed.voluntary, 1u);  // its wait for the leader
  EXPECT_EQ(leader.thread->tid, 10);
  EXPECT_EQ(leader.thread->comm, "task");
  EXPECT_EQ(leader.voluntary, 1u);  // its final switch
  EXPECT_TILED(s);
}

// A thread killed by another's exit (exit_group() kills the process's other threads): its
// sleep returns to the signal and do_exit(), in the kernel. From sched_process_exit on it
// is surely there (it showed as user time); before, it may have run user code.
TEST(StateMachine, AThreadIsInTheKernelFromItsExitOn) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(1'000, 0, 10, kClockNanosleep);
  s.SysExit(2'000, 0, 10, kClockNanosleep, 0, -516);  // ERESTART_RESTARTBLOCK: a signal
  s.Exit(3'000, 0, 10);
  s.Switch(5'000, 0, 10, kStateDead, 0);
  s.Finish(10'000);
  EXPECT_EQ(s.Micro(10, M::kSys), 1'000 + 2'000);
  EXPECT_EQ(s.Micro(10, M::kUser), 1'000 + 1'000);
  EXPECT_TILED(s);
}

// Without an increment between the exit's start and the record there is one candidate.
TEST(StateMachine, NoTickBeforeTheExitRecordLeavesOneCandidate) {
  Sim s(WithIncrements());
  s.Switch(0, 0, 0, kR, 10);
  s.StatRuntime(10'000, 0, 10, 10'000);
  s.SysEnter(20'000, 0, 10, kExitGroup);
  s.Wake(25'000, 0, 10, 600, 1);
  s.Exit(26'000, 0, 10);
  s.StatRuntime(40'000, 0, 10, 30'000);
  s.Switch(41'000, 0, 10, kStateZombie, 0);
  s.Finish(50'000);
  EXPECT_EQ(s.Report(10).thread->accounted_at_exit, 10'000);
  EXPECT_EQ(s.Report(10).thread->accounted_before_exit_tick, -1);
  EXPECT_EQ(s.Report(10).counter_window.exit_before_tick_ts, -1);
}

// A fatal signal's exit begins with no exit syscall (do_exit() on the way back to user
// mode after kill(2) returned): its record is taken at the listener's wakeup, its first
// outside a syscall since kill(2), as for exit_group; without one, at sched_process_exit.
// A tick between the two tells them apart: before the listener's record, after the
// other. (`record -- sh -c 'kill -KILL $$'`: --check said the run after the record was in
// it.)
TEST(StateMachine, AFatalSignalsExitRecordIsWhereItWokeTheListener) {
  constexpr int64_t kKill = 62;  // x86_64
  for (const bool listener : {true, false}) {
    Sim s(WithIncrements());
    s.Switch(0, 0, 0, kR, 10);
    s.StatRuntime(10'000, 0, 10, 10'000);  // accounted to 10'000
    s.SysEnter(20'000, 0, 10, kKill);
    s.Wake(21'000, 0, 10, 600, 1);  // in kill(2): no record
    s.SysExit(22'000, 0, 10, kKill);
    if (listener) s.Wake(25'000, 0, 10, 600, 1, 0, WakeupKind::kWaking);
    s.StatRuntime(25'500, 0, 10, 15'500);  // a tick: accounted to 25'500
    s.Exit(26'000, 0, 10);
    s.StatRuntime(40'000, 0, 10, 14'500);  // from 25'500
    s.Switch(41'000, 0, 10, kStateDead, 0);
    s.Finish(50'000);
    const Thread& t = *s.Report(10).thread;
    EXPECT_EQ(t.exit_record_ts, listener ? 25'000 : 26'000);
    EXPECT_EQ(t.accounted_at_exit, listener ? 10'000 : 25'500) << "listener " << listener;
    EXPECT_EQ(s.Report(10).counter_window.exit_ts, t.accounted_at_exit);
    // The run after the record's accounting (to the last increment: the final switch
    // came at its clock) is what the kernel's counters leave out, though the tick after
    // the wakeup had made part of it final before the exit showed.
    EXPECT_EQ(s.Report(10).counter_window.after_exit.on_cpu_ns, 40'000 - t.accounted_at_exit)
        << "listener " << listener;
  }
}

// The host stole the vCPU after the exit began, before the tick that came next: with
// every increment in the file, that tick's update began where the increments before it
// ended (its clock stood still for the steal), not at its event less its runtime. The
// record, taken before the tick, holds the accounting to there: a fatal signal's, at the
// listener's wakeup, and an exit syscall's first candidate (a tick before its record).
// (A leader killed by its thread's exec: --check had its run 0.87 ms past the record.)
//
//   trace:  10 on CPU: incr to 10'000 | exit begins 20'000 ... (stolen) ... tick at 60'000
//   kernel: the tick's update counts [10'000, 60'000) less 8'000 of steal: 40'000
//           measured from its event: 20'000, which would put 10'000 more in the record
TEST(StateMachine, StealBeforeTheTickAfterTheExitBeganIsNotInTheExitRecord) {
  constexpr int64_t kKill = 62;  // x86_64
  for (const bool signal : {true, false}) {
    SCOPED_TRACE(signal);
    TraceCapabilities caps = WithIncrements();
    caps.all_increments = true;
    caps.exit_listener_tid = 600;
    Sim s(caps, Following({10}));
    s.Switch(0, 0, 0, kR, 10);
    s.StatRuntime(10'000, 0, 10, 10'000);  // accounted to 10'000
    if (signal) {
      s.SysEnter(15'000, 0, 10, kKill);
      s.SysExit(16'000, 0, 10, kKill);
      s.Wake(20'000, 0, 10, 600, 1);  // the record
    } else {
      s.SysEnter(20'000, 0, 10, kExitGroup);
    }
    s.StatRuntime(60'000, 0, 10, 40'000, kFlagHardirq);
    if (!signal) s.Wake(61'000, 0, 10, 600, 1);  // the record: after the tick
    s.Exit(62'000, 0, 10);
    s.StatRuntime(64'000, 0, 10, 4'000);
    s.Switch(64'500, 0, 10, kStateDead, 0);
    s.Finish(70'000);
    const ThreadReport& r = s.Report(10);
    EXPECT_EQ(r.placement.stolen_ns, 60'000 - 2'000 - 50'000);
    if (signal) {
      EXPECT_EQ(r.thread->accounted_at_exit, 10'000);
      EXPECT_EQ(r.counter_window.exit_ts, 10'000);
    } else {
      EXPECT_EQ(r.thread->accounted_at_exit, 60'000);  // where the update after it began
      EXPECT_EQ(r.thread->accounted_before_exit_tick, 10'000);
      EXPECT_EQ(r.counter_window.exit_before_tick_ts, 10'000);
    }
    EXPECT_TILED(s);
  }
}

// The same when the tick is the run's first increment: the update began at the run's
// start, where the model settles the switch-in, so the record holds none of the run.
TEST(StateMachine, StealInTheRunsFirstIncrementAfterTheExitBeganIsNotInTheExitRecord) {
  constexpr int64_t kKill = 62;  // x86_64
  TraceCapabilities caps = WithIncrements();
  caps.all_increments = true;
  caps.exit_listener_tid = 600;
  Sim s(caps, Following({10}));
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(15'000, 0, 10, kKill);
  s.SysExit(16'000, 0, 10, kKill);
  s.Wake(20'000, 0, 10, 600, 1);                       // the record
  s.StatRuntime(60'000, 0, 10, 40'000, kFlagHardirq);  // measured from 20'000
  s.Exit(62'000, 0, 10);
  s.StatRuntime(64'000, 0, 10, 4'000);
  s.Switch(64'500, 0, 10, kStateDead, 0);
  s.Finish(70'000);
  const ThreadReport& r = s.Report(10);
  EXPECT_EQ(r.thread->accounted_at_exit, 0);
  EXPECT_EQ(r.counter_window.exit_ts, 0);
  EXPECT_TILED(s);
}

// An exit record taken before the run's first increment holds the accounting as of the
// kernel's switch-in, which that increment tells: not the model's instant for a switch-in
// the trace did not show. (A readlink preempted by the migration thread, moved to an idle
// CPU and picked up there unseen: its cut stood at its first event there, 0.24 ms after
// the kernel's switch, and --check had its on-CPU time 0.239 ms over the record's.) The
// same for a fatal signal's record, taken at its wakeup of the listener.
//
//   CPU 0:  10 runs, incr to 10'000 | preempted by migration/0 at 10'050
//   CPU 1:  idle | (kernel: 10 in at 12'000, untraced) | fault 30'000 ... exit begins
//           record 51'000 | incr 39'500 at 51'500: measured from 12'000 | exit | dead
TEST(StateMachine, AnExitRecordBeforeTheRunsFirstIncrementHoldsTheKernelsSwitchIn) {
  constexpr int64_t kKill = 62;  // x86_64
  for (const bool signal : {false, true}) {
    SCOPED_TRACE(signal);
    TraceCapabilities caps = WithIncrements();
    caps.exit_listener_tid = 600;
    Sim s(caps);
    s.Switch(0, 0, 0, kR, 10);
    s.Switch(1'000, 1, 20, kS, 0);  // CPU 1 idle
    s.StatRuntime(10'000, 0, 10, 10'000);
    s.Switch(10'050, 0, 10, kR, 18, /*preempt=*/true);
    s.Fault(30'000, 1, 10);  // its first event on CPU 1
    if (signal) {
      s.SysEnter(40'000, 1, 10, kKill);
      s.SysExit(41'000, 1, 10, kKill);
    } else {
      s.SysEnter(50'000, 1, 10, kExitGroup);
    }
    s.Wake(51'000, 1, 10, 600, 0, 0, WakeupKind::kWaking);  // the record
    s.StatRuntime(51'500, 1, 10, 39'500);
    s.Exit(52'000, 1, 10);
    s.Switch(53'000, 1, 10, kStateDead, 0);
    s.Finish(60'000);
    const ThreadReport& r = s.Report(10);
    EXPECT_EQ(r.thread->exit_record_ts, 51'000);
    EXPECT_EQ(r.thread->accounted_at_exit, 12'000);
    EXPECT_EQ(r.counter_window.exit_ts, 12'000);
    EXPECT_TILED(s);
  }
}

// A record taken in a run that ended with no increment (switched out, the model's
// switch-in standing) holds that run's switch-in: the next run's first increment does not
// move it.
TEST(StateMachine, AnExitRecordOfARunWithoutIncrementsStaysWithThatRun) {
  TraceCapabilities caps = WithIncrements();
  caps.exit_listener_tid = 600;
  Sim s(caps);
  s.Switch(0, 0, 0, kR, 10);
  s.StatRuntime(5'000, 0, 10, 5'000);
  s.Switch(6'000, 0, 10, kR, 11, /*preempt=*/true);
  s.Switch(8'000, 0, 11, kS, 10);  // 10 back at 8'000
  s.SysEnter(9'000, 0, 10, kExitGroup);
  s.Wake(10'000, 0, 10, 600, 1, 0, WakeupKind::kWaking);  // the record
  s.Switch(11'000, 0, 10, kR, 12, /*preempt=*/true);      // out with no increment
  s.Switch(20'000, 0, 12, kS, 10);
  s.StatRuntime(25'000, 0, 10, 5'000);  // the next run's first: from 20'000
  s.Exit(26'000, 0, 10);
  s.Switch(27'000, 0, 10, kStateDead, 0);
  s.Finish(30'000);
  EXPECT_EQ(s.Report(10).thread->accounted_at_exit, 8'000);
  EXPECT_TILED(s);
}

// A fatal signal's exit whose listener was woken on its own CPU: the wakeup's update (from
// 10'000) comes before sched_process_exit and settles what the record holds there, also
// when no increment follows (the final switch reused that wakeup's clock). With the
// listener named, a tick in between (exit_mm() of a large process) does not make the
// wakeup an old one.
TEST(StateMachine, TheListenersWakeupOnTheDyingThreadsCpuSettlesItsRecord) {
  constexpr int64_t kKill = 62;  // x86_64
  enum class After { kNothing, kTick };
  for (const After after : {After::kNothing, After::kTick}) {
    TraceCapabilities caps = WithIncrements();
    caps.exit_listener_tid = 600;
    Sim s(caps);
    s.Switch(0, 0, 0, kR, 10);
    s.StatRuntime(10'000, 0, 10, 10'000);
    s.SysEnter(20'000, 0, 10, kKill);
    s.SysExit(22'000, 0, 10, kKill);
    s.Wake(25'000, 0, 10, 600, 0, 0, WakeupKind::kWaking);  // the record: 10'000
    s.StatRuntime(25'500, 0, 10, 15'500);                   // the wakeup's own update
    s.Wake(25'600, 0, 10, 600, 0, 0, WakeupKind::kWakeup);
    if (after == After::kTick) s.StatRuntime(29'500, 0, 10, 4'000, kFlagHardirq);
    s.Exit(30'000, 0, 10);
    s.Switch(30'500, 0, 10, kStateDead, 0);
    s.Finish(50'000);
    const ThreadReport& r = s.Report(10);
    EXPECT_EQ(r.thread->exit_record_ts, 25'000) << static_cast<int>(after);
    EXPECT_EQ(r.thread->accounted_at_exit, 10'000) << static_cast<int>(after);
    // Up to the last increment (the final switch came at its clock).
    EXPECT_EQ(r.counter_window.after_exit.on_cpu_ns,
              (after == After::kTick ? 29'500 : 25'500) - 10'000)
        << static_cast<int>(after);
    EXPECT_TILED(s);
  }
}

// A wakeup outside a syscall is no exit's record when a later syscall or a later update
// of the thread's accounting shows it ran on; with no syscall events at all, or for a
// kernel thread, nothing tells where an exit began: the record stays at
// sched_process_exit with no cut, as before.
TEST(StateMachine, AnOldWakeupIsNoSignalExitRecord) {
  enum class Case { kLaterSyscall, kLaterUpdate, kNoSyscallEvents };
  for (Case c : {Case::kLaterSyscall, Case::kLaterUpdate, Case::kNoSyscallEvents}) {
    TraceCapabilities caps = WithIncrements();
    caps.syscalls = c != Case::kNoSyscallEvents;
    Sim s(caps);
    s.Switch(0, 0, 0, kR, 10);
    if (caps.syscalls) {
      s.SysEnter(1'000, 0, 10, kRead);
      s.SysExit(2'000, 0, 10, kRead);
    }
    s.StatRuntime(10'000, 0, 10, 10'000);
    s.Wake(12'000, 0, 10, 600, 1);  // outside a syscall (a page fault's, say)
    if (c == Case::kLaterSyscall) {
      s.SysEnter(20'000, 0, 10, kRead);
      s.SysExit(22'000, 0, 10, kRead);
    }
    if (c == Case::kLaterUpdate) {
      s.StatRuntime(14'000, 0, 10, 4'000);  // 10'000 -> 14'000
      s.StatRuntime(18'000, 0, 10, 4'000);  // from 14'000, after the wakeup: it ran on
    }
    s.Exit(26'000, 0, 10);
    s.StatRuntime(40'000, 0, 10, 30'000);
    s.Switch(41'000, 0, 10, kStateDead, 0);
    s.Finish(50'000);
    const Thread& t = *s.Report(10).thread;
    EXPECT_EQ(t.exit_record_ts, 26'000) << static_cast<int>(c);
    EXPECT_EQ(t.accounted_at_exit,
              caps.syscalls ? 10'000 + (c == Case::kLaterUpdate ? 8'000 : 0) : -1)
        << static_cast<int>(c);
  }
}

// A reschedule IPI long after the running task's last increment assumes one missing, but
// the wakeup that sent it may have done that update itself, from the waker's CPU (seen):
// the next task's first increment, measured from the clock both switched at, tells.
TEST(StateMachine, NextTasksFirstIncrementTakesBackAnIncrementTheIpiAssumedMissing) {
  Sim s(WithIncrements());
  s.Switch(0, 0, 0, kR, 10);
  s.StatRuntime(10'000, 0, 10, 10'000);
  s.Switch(0, 1, 0, kR, 20);
  s.StatRuntime(50'000, 1, 10, 40'000, 0, /*running=*/20);  // the wakeup's remote update
  s.Vector(150'000, 0, 10, true, "reschedule", kFlagHardirq | kFlagNeedResched);
  s.Vector(151'000, 0, 10, false, "reschedule", kFlagHardirq | kFlagNeedResched);
  s.Switch(155'000, 0, 10, kR, 30);
  s.StatRuntime(160'000, 0, 30, 110'000);  // from 50'000: the reused clock
  s.SysEnter(165'000, 0, 30, kRead);
  s.StatRuntime(170'000, 0, 30, 10'000);
  s.Switch(170'000, 0, 30, kS, 0);
  s.Finish(200'000);
  EXPECT_EQ(s.Micro(10, M::kUser), 50'000);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuPreempted), 150'000);
  // (The IPI came after the switch's clock: in 30's run.)
  EXPECT_EQ(s.Micro(30, M::kIrq), 1'000);
  EXPECT_EQ(s.Micro(30, M::kUser) + s.Micro(30, M::kSys), 120'000 - 1'000);
  EXPECT_TILED(s);
}

// The same with an interrupt between the switch's clock and the IPI: when the next task's
// first increment moves the switch back to that clock, the interrupt was in its run too.
TEST(StateMachine, AnInterruptInTheStretchTheFirstIncrementMovesIntoTheRunIsItsIrq) {
  for (const int64_t kernel_switch : {50'000, 120'000}) {
    Sim s(WithIncrements());
    s.Switch(0, 0, 0, kR, 10);
    s.StatRuntime(10'000, 0, 10, 10'000);
    s.Switch(0, 1, 0, kR, 20);
    s.StatRuntime(50'000, 1, 10, 40'000, 0, /*running=*/20);  // the wakeup's remote update
    s.Vector(100'000, 0, 10, true, "irq_work", kFlagHardirq | kFlagNeedResched);
    s.Vector(102'000, 0, 10, false, "irq_work", kFlagHardirq | kFlagNeedResched);
    s.Vector(150'000, 0, 10, true, "reschedule", kFlagHardirq | kFlagNeedResched);
    s.Vector(151'000, 0, 10, false, "reschedule", kFlagHardirq | kFlagNeedResched);
    s.Switch(155'000, 0, 10, kR, 30);
    s.StatRuntime(160'000, 0, 30, 160'000 - kernel_switch);
    s.SysEnter(165'000, 0, 30, kRead);
    s.StatRuntime(170'000, 0, 30, 10'000);
    s.Switch(170'000, 0, 30, kS, 0);
    s.Finish(200'000);
    const bool in_30s_run = kernel_switch < 100'000;
    EXPECT_EQ(s.Micro(10, M::kIrq), in_30s_run ? 0 : 2'000) << kernel_switch;
    EXPECT_EQ(s.Micro(10, M::kWaitCpuPreempted), 200'000 - kernel_switch) << kernel_switch;
    EXPECT_EQ(s.Micro(30, M::kIrq), (in_30s_run ? 2'000 : 0) + 1'000) << kernel_switch;
    EXPECT_EQ(s.Micro(30, M::kUser) + s.Micro(30, M::kSys) + s.Micro(30, M::kIrq),
              170'000 - kernel_switch)
        << kernel_switch;
    EXPECT_TILED(s);
  }
}

// Followed: 10 (running on CPU0) and the tasks it wakes or forks; CPU1 runs 21, which the
// pid filter leaves out (migration/1 moving a thread that pinned itself to CPU0).
TrackingPolicy FollowingTen() {
  const TrackingPolicy policy = Following({10});
  return policy;
}

// 21 followed too when `waker_followed`.
TrackingPolicy FollowingTenAnd21(bool waker_followed) {
  TrackingPolicy policy = FollowingTen();
  if (waker_followed) policy.root_pids.push_back(21);
  return policy;
}

// 10 runs on CPU0, accounted to 10'000; CPU1 runs 21.
void RunTenAndAWakerOnCpu1(Sim& s) {
  s.Switch(0, 0, 0, kR, 10);
  s.StatRuntime(10'000, 0, 10, 10'000);
  s.Switch(0, 1, 0, kR, 21);
}

// An unfollowed task on CPU1 queues 11 on CPU0: the enqueue accounted 10 first, with the
// clock read just after the waking, and the filter dropped that increment. 10 then
// sleeps with no increment of its own (__schedule() reused that clock): its run ended at
// the enqueue, not at its last increment.
TEST(StateMachine, AFilteredRemoteEnqueueAccountedTheRunningTask) {
  for (const bool waker_followed : {false, true}) {
    Sim s(WithIncrements(), FollowingTenAnd21(waker_followed));
    RunTenAndAWakerOnCpu1(s);
    s.Wake(50'000, 1, 21, 11, 0, 0, WakeupKind::kWaking);
    s.Wake(59'000, 1, 21, 11, 0, 0, WakeupKind::kWakeup);  // after the reschedule IPI
    s.SysEnter(62'000, 0, 10, kFutex);
    s.Switch(65'000, 0, 10, kS, 11);
    s.Finish(100'000);
    // A followed waker's increment would be in the trace: none means none was made.
    const int64_t run_end = waker_followed ? 10'000 : 50'000;
    EXPECT_EQ(s.Micro(10, M::kUser), run_end) << "waker followed: " << waker_followed;
    EXPECT_EQ(s.Micro(10, M::kSys), 0);
    EXPECT_EQ(s.Micro(10, M::kSleepFutex), 100'000 - run_end);
    EXPECT_TILED(s);
  }
}

// The same enqueue's sched_wakeup may come after the switch it caused (the waker sends
// the reschedule IPI first): the waking in flight, naming CPU0, stands for it. A waking
// for another CPU, or older than an IPI's latency, does not.
TEST(StateMachine, AFilteredRemoteEnqueueInFlightAtTheSwitch) {
  struct Case {
    int target;
    int64_t waking_ts;
    int64_t run_end;
  };
  for (const Case& c :
       {Case{0, 60'000, 60'000}, Case{1, 60'000, 10'000}, Case{0, 30'000, 10'000}}) {
    Sim s(WithIncrements(), FollowingTen());
    RunTenAndAWakerOnCpu1(s);
    s.Wake(c.waking_ts, 1, 21, 11, c.target, 0, WakeupKind::kWaking);
    s.SysEnter(62'000, 0, 10, kFutex);
    s.Switch(65'000, 0, 10, kS, 0);
    s.Wake(70'000, 1, 21, 11, c.target, 0, WakeupKind::kWakeup);
    s.Finish(100'000);
    EXPECT_EQ(s.Micro(10, M::kUser), c.run_end)
        << "target " << c.target << ", waking at " << c.waking_ts;
    EXPECT_TILED(s);
  }
}

// Where nothing is filtered (record -a, a foreign file), every update is in the trace:
// a remote enqueue with no increment of the running task made none, and a waking in
// flight is no sign of one.
TEST(StateMachine, NothingFilteredNothingAssumed) {
  for (const bool in_flight : {false, true}) {
    Sim s(WithIncrements());
    RunTenAndAWakerOnCpu1(s);
    s.Wake(60'000, 1, 21, 11, 0, 0, WakeupKind::kWaking);
    if (!in_flight) s.Wake(61'000, 1, 21, 11, 0, 0, WakeupKind::kWakeup);
    s.SysEnter(62'000, 0, 10, kFutex);
    s.Switch(65'000, 0, 10, kS, in_flight ? 0 : 11);
    if (in_flight) s.Wake(70'000, 1, 21, 11, 0, 0, WakeupKind::kWakeup);
    s.Finish(100'000);
    EXPECT_EQ(s.Micro(10, M::kUser), 10'000) << "in flight: " << in_flight;
    EXPECT_TILED(s);
  }
}

// In a trace without sched_wakeup the waking queues the task, with the clock read
// before it: the running task was accounted up to the waking's time.
TEST(StateMachine, AFilteredRemoteWakingWithoutSchedWakeup) {
  TraceCapabilities caps = WithIncrements();
  caps.wakeup = false;
  Sim s(caps, FollowingTen());
  RunTenAndAWakerOnCpu1(s);
  s.Wake(50'000, 1, 21, 11, 0, 0, WakeupKind::kWaking);
  s.SysEnter(62'000, 0, 10, kFutex);
  s.Switch(65'000, 0, 10, kS, 11);
  s.Finish(100'000);
  EXPECT_EQ(s.Micro(10, M::kUser), 50'000);
  EXPECT_TILED(s);
}

// With an increment of its own at the switch, the kernel's accounting is known: neither
// rule moves it.
TEST(StateMachine, AnIncrementAtTheSwitchOutrulesAFilteredEnqueue) {
  Sim s(WithIncrements(), FollowingTen());
  RunTenAndAWakerOnCpu1(s);
  s.Wake(60'000, 1, 21, 11, 0, 0, WakeupKind::kWaking);
  s.SysEnter(62'000, 0, 10, kFutex);
  s.StatRuntime(64'500, 0, 10, 54'000);  // the dequeue's: accounted to 64'000
  s.Switch(65'000, 0, 10, kS, 0);
  s.Wake(70'000, 1, 21, 11, 0, 0, WakeupKind::kWakeup);
  s.Finish(100'000);
  EXPECT_EQ(s.Micro(10, M::kUser) + s.Micro(10, M::kSys), 64'000);
  EXPECT_TILED(s);
}

// An interrupt's task is the one running there: on a CPU believed idle it is the switch
// from idle the kernel did not trace, and the increment inside the interrupt is its run's
// first (measured from the wakeup's clock).
TEST(StateMachine, InterruptShowsTheUntracedSwitchFromIdle) {
  Sim s(WithIncrements());
  s.Switch(0, 1, 0, kR, 10);
  s.SysEnter(1'000, 1, 10, kRead);
  s.StatRuntime(2'000, 1, 10, 2'000);
  s.Switch(2'000, 1, 10, kS, 0);
  s.Switch(0, 0, 0, kR, 20);
  s.WakeBoth(10'000, 0, 20, 10, 1);
  s.Vector(30'000, 1, 10, true);
  s.StatRuntime(30'500, 1, 10, 20'000);  // on CPU since 10'500
  s.Vector(31'000, 1, 10, false);
  s.StatRuntime(40'000, 1, 10, 9'500);
  s.Switch(40'000, 1, 10, kS, 0);
  s.Finish(50'000);
  const ThreadReport& r = s.Report(10);
  EXPECT_EQ(r.thread->placement.untraced_switch_ins, 1u);
  EXPECT_EQ(s.Micro(10, M::kUser) + s.Micro(10, M::kSys) + s.Micro(10, M::kIrq), 2'000 + 29'500);
  EXPECT_TILED(s);
}

// The recorder's own threads (-a) are not traced: their own updates, the one at a
// voluntary switch included, are missing, so a recent remote increment of one does not
// tell when it switched; the next task's wait runs to the traced switch.
TEST(StateMachine, UntracedPrevsRemoteIncrementDoesNotPlaceItsVoluntarySwitch) {
  TrackingPolicy policy;
  policy.recorder_tids = {50};
  Sim s(WithIncrements(), policy);
  s.Switch(0, 1, 0, kR, 50);
  s.Switch(0, 0, 0, kR, 10);
  s.StatRuntime(1'000, 0, 10, 1'000);
  s.Switch(1'000, 0, 10, kS, 20);
  s.WakeBoth(10'000, 0, 20, 10, 1);
  s.StatRuntime(10'100, 0, 50, 10'000, 0, /*running=*/20);  // 50 accounted by the wakeup
  s.Switch(20'000, 1, 50, kS, 10);
  s.StatRuntime(25'000, 0, 10, 2'000, 0, /*running=*/20);  // a later remote update
  s.Switch(30'000, 1, 10, kS, 0);
  s.Finish(40'000);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuWakeup), 10'000);
  EXPECT_FALSE(s.Report(50).thread->tracked);
  EXPECT_TILED(s);
}

}  // namespace
}  // namespace cstool::testing
