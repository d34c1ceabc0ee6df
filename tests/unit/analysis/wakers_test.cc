// Who made each thread wait: the waker that ended each sleep ("woken by", with the
// blocked time it ended), what ran on the CPU a runnable thread was queued on ("waited
// behind"), and the wait spent queued on a CPU before a migration away from it.
#include "analysis/wakers.h"

#include <gtest/gtest.h>

#include "analysis/report_view.h"
#include "tests/support/sim.h"

namespace cstool::testing {
namespace {

using M = Microstate;

const WokenBy* FindWaker(const ThreadReport& r, int tid) {
  for (const WokenBy& w : r.woken_by)
    if (w.waker.thread && w.waker.thread->tid == tid) return &w;
  return nullptr;
}
const WokenBy* FindWaker(const ThreadReport& r, std::string_view source) {
  for (const WokenBy& w : r.woken_by)
    if (!w.waker.thread && w.waker.source == source) return &w;
  return nullptr;
}
int64_t Behind(const ThreadReport& r, int tid) {
  for (const WaitedBehind& w : r.waited_behind)
    if (w.running.thread && w.running.thread->tid == tid) return w.time_ns;
  return -1;
}
int64_t Behind(const ThreadReport& r, std::string_view source) {
  for (const WaitedBehind& w : r.waited_behind)
    if (!w.running.thread && w.running.source == source) return w.time_ns;
  return -1;
}

// A thread woken once by another thread and once from an interrupt: each waker gets
// the sleep it ended; the queued time goes to what ran on the CPU meanwhile.
TEST(Wakers, WokenByAThreadAndByAnIrq) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(5, 0, 10, kRead);
  s.Switch(100, 0, 10, kS, 11);   // 10 blocks in read; 11 runs on CPU 0
  s.WakeBoth(300, 0, 11, 10, 0);  // 11 ends 10's 200-ns sleep
  s.Switch(350, 0, 11, kS, 10);   // 10 waited 50 ns behind 11
  s.Switch(400, 0, 10, kS, 0);    // blocks again; CPU 0 idle
  s.IrqEntry(500, 0, 0);
  s.WakeBoth(510, 0, 0, 10, 0, kFlagHardirq);  // the interrupt ends a 110-ns sleep
  s.IrqExit(520, 0, 0);
  s.Switch(530, 0, 0, kR, 10);  // 20 ns queued on an idle CPU
  s.Finish(600);

  const ThreadReport& r = s.Report(10);
  ASSERT_EQ(r.woken_by.size(), 2u);
  const WokenBy* by_thread = FindWaker(r, 11);
  ASSERT_NE(by_thread, nullptr);
  EXPECT_EQ(by_thread->wakeups, 1u);
  EXPECT_EQ(by_thread->blocked_ns, 200);
  const WokenBy* by_irq = FindWaker(r, "irq:24 virtio0");
  ASSERT_NE(by_irq, nullptr);
  EXPECT_EQ(by_irq->wakeups, 1u);
  EXPECT_EQ(by_irq->blocked_ns, 110);
  // The blocked times are exactly the sleeps the microstates count.
  EXPECT_EQ(s.Micro(10, M::kSleep), 200 + 110);
  EXPECT_EQ(r.woken_by.front().waker.thread, by_thread->waker.thread);  // largest first
  EXPECT_EQ(Behind(r, 11), 50);
  EXPECT_EQ(Behind(r, kPartyIdle), 20);
  EXPECT_EQ(r.waited_behind.size(), 2u);
}

// Each wait for a CPU, from the wakeup or preemption to the switch-in as traced (perf
// sched latency's delay): how many ended, and the longest, with where it began. One still
// going at the end has no length; after lost events none is measured.
TEST(Wakers, TheLongestWaitIsFromTheWakeupOrPreemptionToTheSwitchIn) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.SysEnter(5, 0, 10, kRead);
  s.Switch(100, 0, 10, kS, 11);
  s.WakeBoth(300, 0, 11, 10, 0);
  s.Switch(350, 0, 11, kS, 10);        // waited 50
  s.Switch(400, 0, 10, kR, 12, true);  // preempted
  s.Switch(480, 0, 12, kS, 10);        // waited 80
  s.Switch(500, 0, 10, kR, 12, true);  // preempted, still queued at the end
  s.Finish(700);
  const ThreadReport& r = s.Report(10);
  EXPECT_EQ(r.waits_ended, 2u);
  EXPECT_EQ(r.longest_wait_ns, 80);
  EXPECT_EQ(r.longest_wait_from, 400);
  EXPECT_EQ(s.Report(11).waits_ended, 0u);
  EXPECT_EQ(s.Report(11).longest_wait_from, -1);
}

// Woken on its way to sleep: 11's sched_waking (on CPU 1) comes while 10 still runs on
// CPU 0, so the kernel queues the wakeup on CPU 0's wakelist; 10's switch-out follows,
// then its sched_wakeup in the wakelist interrupt there. The waker is 11, which did the
// wakeup, not the interrupt that completed it ("irq", 4 of a mutex thread's 751 wakeups,
// and the critical path stopped there). A waking that ttwu found still runnable (no
// sleep followed it at once) names no waker of a later sleep.
TEST(Wakers, AWakeupCompletedInTheWakelistInterruptIsTheWakingTasks) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.Switch(0, 1, 0, kR, 11);
  s.SysEnter(5, 0, 10, kFutex);
  s.Wake(100, 1, 11, 10, 0);    // 10 still on CPU 0
  s.Switch(104, 0, 10, kS, 0);  // ... and asleep
  s.IrqEntry(108, 0, 0);
  s.Wake(110, 0, 0, 10, 0, kFlagHardirq, WakeupKind::kWakeup);  // the wakelist's flush
  s.IrqExit(112, 0, 0);
  s.Switch(120, 0, 0, kR, 10);
  // A waking while it runs, with no sleep after it (its syscall returns first), then a
  // sleep an interrupt ends: the interrupt is that sleep's waker.
  s.Wake(200, 1, 11, 10, 0);
  s.SysExit(210, 0, 10, kFutex, 0);
  s.SysEnter(220, 0, 10, kRead);
  s.Switch(230, 0, 10, kS, 0);
  s.IrqEntry(300, 0, 0);
  s.WakeBoth(310, 0, 0, 10, 0, kFlagHardirq);
  s.IrqExit(312, 0, 0);
  s.Switch(320, 0, 0, kR, 10);
  s.Finish(400);

  const ThreadReport& r = s.Report(10);
  const WokenBy* by_thread = FindWaker(r, 11);
  ASSERT_NE(by_thread, nullptr);
  EXPECT_EQ(by_thread->wakeups, 1u);
  EXPECT_EQ(by_thread->blocked_ns, 110 - 104);
  const WokenBy* by_irq = FindWaker(r, "irq:24 virtio0");
  ASSERT_NE(by_irq, nullptr);
  EXPECT_EQ(by_irq->wakeups, 1u);
  EXPECT_EQ(by_irq->blocked_ns, 310 - 230);
  EXPECT_EQ(r.woken_by.size(), 2u);
}

// A softirq waker whose entry the trace did not show is named by the context only.
TEST(Wakers, AnIrqWakerWithoutItsEntryIsNamedByItsContext) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.Switch(100, 0, 10, kS, 0);
  s.WakeBoth(200, 0, 0, 10, 0, kFlagSoftirq);
  s.Switch(210, 0, 0, kR, 10);
  s.Finish(300);
  const WokenBy* w = FindWaker(s.Report(10), "softirq");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->blocked_ns, 100);
}

// After lost events on a CPU nothing is known of what runs there: a wakeup from its
// task context names an unknown waker, and the wait there is behind "unknown". The
// sleep it ends is the part after the gap (150..170, during which it may have run).
TEST(Wakers, AWakerAfterLostEventsIsUnknown) {
  Sim s;
  s.Switch(0, 1, 0, kR, 10);
  s.Switch(100, 1, 10, kS, 0);
  s.Lost(150, 1, 5);
  s.Tick(170, 1, 0, 0);          // CPU 1's first record after the loss
  s.WakeBoth(200, 1, 0, 10, 1);  // pid 0 but not idle as far as anyone knows
  s.Switch(260, 1, 0, kR, 10);
  s.Finish(300);
  const ThreadReport& r = s.Report(10);
  const WokenBy* w = FindWaker(r, kPartyUnknown);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->blocked_ns, 30);
  EXPECT_EQ(Behind(r, kPartyUnknown), 60);
}

// A thread asleep when the trace began: its first wakeup ends a sleep whose start is
// the trace's (its unknown time), and names the waker all the same.
TEST(Wakers, ASleepCrossingTheTraceStartIsOwedToItsWaker) {
  Sim s;
  s.Switch(0, 0, 0, kR, 11);
  s.Tick(1, 1, 10, 0);  // 10 seen once on CPU 1 at the trace start... then asleep
  s.Switch(2, 1, 10, kS, 0);
  s.WakeBoth(100, 0, 11, 12, 0);  // 12 never seen before: asleep since the trace began
  s.Switch(120, 0, 11, kS, 12);
  s.Finish(200);
  const ThreadReport& r = s.Report(12);
  const WokenBy* w = FindWaker(r, 11);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->blocked_ns, 100);  // from the trace's first event
  EXPECT_EQ(s.Report(12).thread->first_ts, 0);
}

// A waker that exits, and a new thread that reuses its tid and wakes the same sleeper:
// two wakers, never merged.
TEST(Wakers, AReusedTidIsAnotherWaker) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.Switch(10, 0, 10, kS, 11);
  s.WakeBoth(50, 0, 11, 10, 1);  // the first 11 wakes 10 (to CPU 1)
  s.Switch(55, 1, 0, kR, 10);
  s.Exit(60, 0, 11);
  s.Switch(70, 0, 11, kStateDead, 0);  // and is gone
  s.Switch(80, 1, 10, kS, 0);
  s.Switch(90, 0, 0, kR, 12);
  s.Fork(100, 0, 12, 11, false);  // a new 11
  s.WakeBoth(110, 0, 12, 11, 0, 0);
  s.Switch(120, 0, 12, kS, 11);
  s.WakeBoth(200, 0, 11, 10, 1);  // the new 11 wakes 10
  s.Finish(300);

  const ThreadReport& r = s.Report(10);
  ASSERT_EQ(r.woken_by.size(), 2u);
  EXPECT_NE(r.woken_by[0].waker.thread, r.woken_by[1].waker.thread);
  EXPECT_EQ(r.woken_by[0].waker.thread->tid, 11);
  EXPECT_EQ(r.woken_by[1].waker.thread->tid, 11);
  EXPECT_EQ(r.woken_by[0].blocked_ns, 120);  // 80 .. 200: the new one's, largest first
  EXPECT_EQ(r.woken_by[1].blocked_ns, 40);   // 10 .. 50
}

// Per process, wakers and runners are processes: two threads of one process waking the
// same sleeper share one entry.
TEST(Wakers, ProcessTotalsGroupWakersByProcess) {
  TrackingPolicy policy;
  policy.known_tgids = {{10, 10}, {20, 20}, {21, 20}};
  Sim s({}, policy);
  s.Switch(0, 0, 0, kR, 20);
  s.Switch(10, 1, 0, kR, 10);
  s.Switch(20, 1, 10, kS, 0);
  s.WakeBoth(50, 0, 20, 10, 1);  // 30 ns
  s.Switch(60, 1, 0, kR, 10);
  s.Switch(70, 1, 10, kS, 0);
  s.Switch(80, 0, 20, kS, 21);
  s.WakeBoth(100, 0, 21, 10, 1);  // 30 ns
  s.Switch(110, 1, 0, kR, 10);
  s.Finish(200);
  ViewOptions options;
  options.all_threads = true;
  ReportView view = BuildView(s.model(), s.syscalls(), options);
  const ProcessTotals* p = nullptr;
  for (const ProcessTotals& q : view.processes)
    if (q.pid == 10) p = &q;
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(p->sum.woken_by.size(), 1u);
  EXPECT_EQ(p->sum.woken_by[0].waker.thread->tgid, 20);
  EXPECT_EQ(p->sum.woken_by[0].wakeups, 2u);
  EXPECT_EQ(p->sum.woken_by[0].blocked_ns, 60);
  EXPECT_EQ(s.Report(10).woken_by.size(), 2u);  // per thread: two wakers
}

// In a pid-filtered recording, a thread outside the workload woken by it (a kernel
// thread) runs where the filter hides its switch-in: nothing is charged as its wait
// behind what ran, neither after its wakeup nor after a preemption, while the followed
// threads' waits are charged as in a system-wide recording. Its waker is still known.
TEST(Wakers, AThreadOutsideAFilteredRecordingWaitsBehindNothing) {
  TrackingPolicy policy = Following({10});
  policy.known_tgids = {{10, 10}, {11, 10}, {12, 10}};
  Sim s({}, policy);
  s.Switch(0, 0, 0, kR, 10);
  s.Switch(0, 1, 0, kR, 11);
  s.WakeBoth(10, 0, 10, 50, 1);  // 10 wakes kernel thread 50 onto CPU 1, where 11 runs
  s.WakeBoth(20, 1, 11, 12, 1);  // and 11 wakes 12 there: queued behind 11
  s.Switch(40, 1, 11, kS, 12);
  s.Switch(60, 1, 12, kR, 51, /*preempt=*/true);  // 12 preempted by unfollowed 51
  s.Switch(90, 1, 51, kR, 12);  // unfollowed 51 preempted: filtered out, seen here
  s.Finish(200);
  ASSERT_TRUE(s.Report(12).thread->tracked);
  ASSERT_FALSE(s.Report(50).thread->tracked);
  ASSERT_FALSE(s.Report(51).thread->tracked);
  EXPECT_EQ(Behind(s.Report(12), 11), 20);
  EXPECT_EQ(Behind(s.Report(12), 51), 30);
  EXPECT_TRUE(s.Report(50).waited_behind.empty());
  EXPECT_TRUE(s.Report(51).waited_behind.empty());
  ASSERT_NE(FindWaker(s.Report(50), 10), nullptr);
}

// With a pid filter, a switch between two unfollowed tasks is not recorded: the task the
// followed thread switched to when it blocked may have stopped running long before its
// wakeup. A wakeup in an interrupt names the task it interrupted (common_pid), which held
// the CPU then: the wait from there is behind that task. (An fsync thread's 18 ms of waits
// were all charged to a kworker that ran 20-30 us each time, not to the compiler that
// held the CPU.)
TEST(Wakers, AnInterruptsWakeupNamesTheTaskThatHeldTheCpu) {
  for (const uint8_t context : {kFlagSoftirq, kFlagHardirq}) {
    SCOPED_TRACE(context);
    TrackingPolicy policy = Following({10});
    policy.known_tgids = {{10, 10}};
    Sim s({}, policy);
    s.Switch(0, 1, 0, kR, 10);
    s.SysEnter(5, 1, 10, kRead);
    s.Switch(100, 1, 10, kD, 44);            // blocks; kworker 44 runs, then 60 (unseen switch)
    s.WakeBoth(300, 1, 60, 10, 1, context);  // the I/O's completion, interrupting 60
    s.Switch(380, 1, 60, kR, 10);
    s.Finish(500);
    const ThreadReport& r = s.Report(10);
    EXPECT_EQ(Behind(r, 60), 80);
    EXPECT_EQ(Behind(r, 44), -1);
    EXPECT_EQ(r.waited_behind.size(), 1u);
    EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kSwitchOutNotCurrent), 0u);
  }
}

// A followed thread preempted by one of the recorder's own threads (its reader, woken by a
// timer) counts the switch as the kernel does, and as recording's cost besides; one
// preempted by another task does not.
TEST(Wakers, APreemptionByTheRecordersThreadIsCountedAsItsCost) {
  TrackingPolicy policy = Following({10});
  policy.known_tgids = {{10, 10}, {90, 90}};
  policy.recorder_tids = {90};
  Sim s({}, policy);
  s.Switch(0, 0, 0, kR, 10);
  s.Switch(100, 0, 10, kR, 90, /*preempt=*/true);  // the reader
  s.Switch(150, 0, 90, kS, 10);
  s.Switch(300, 0, 10, kR, 50, /*preempt=*/true);  // another task
  s.Switch(350, 0, 50, kS, 10);
  s.Finish(500);
  const ThreadReport& r = s.Report(10);
  EXPECT_EQ(r.involuntary, 2u);
  EXPECT_EQ(r.involuntary_to_recorder, 1u);
  EXPECT_EQ(Behind(r, 90), 50);
  EXPECT_FALSE(s.Report(90).thread->tracked);
}

// An interrupt's wakeup written by the idle task (pid 0) says the CPU had gone idle: the
// unfollowed task the trace last showed there stopped unseen. The wait from there is
// behind idle, and the woken thread's first event is an untraced switch from idle (dated
// at the kernel's switch), not a task replacing another.
TEST(Wakers, AnInterruptsWakeupFromIdleSaysTheCpuIsIdle) {
  TrackingPolicy policy = Following({10});
  policy.known_tgids = {{10, 10}};
  Sim s({}, policy);
  s.Switch(0, 1, 0, kR, 10);
  s.SysEnter(5, 1, 10, kRead);
  s.Switch(100, 1, 10, kD, 44);                // blocks; kworker 44 runs, goes idle unseen
  s.WakeBoth(300, 1, 0, 10, 1, kFlagSoftirq);  // the completion, in idle's softirq
  s.SysExit(360, 1, 10, kRead);                // its switch-in was not traced
  s.Finish(500);
  const ThreadReport& r = s.Report(10);
  EXPECT_EQ(Behind(r, 44), -1);
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kMissingSwitchFromIdle), 1u);
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kSwitchOutNotCurrent), 0u);
}

// A wait on a CPU the trace last showed idle, ended by a switch from a task whose
// switch-in it did not show (an unfollowed one, from idle): a CPU with a task queued does
// not stay idle, so the wait was behind that task, not idle.
TEST(Wakers, AWaitEndedByAnUntracedTasksSwitchWasBehindIt) {
  TrackingPolicy policy = Following({10});
  policy.known_tgids = {{10, 10}, {90, 90}};
  Sim s({}, policy);
  s.Switch(0, 1, 0, kR, 10);
  s.SysEnter(5, 1, 10, kRead);
  s.Switch(100, 1, 10, kS, 0);                 // blocks; CPU 1 idle
  s.WakeBoth(300, 1, 0, 10, 1, kFlagHardirq);  // a timer, in idle's interrupt
  s.Switch(2'000, 1, 90, kS, 10);              // 90 ran first, its switch-in unseen
  s.Finish(2'500);
  const ThreadReport& r = s.Report(10);
  EXPECT_EQ(Behind(r, 90), 2'000 - 300);
  EXPECT_EQ(Behind(r, kPartyIdle), -1);
}

// A wait the trace last showed behind an unfollowed task, ended by a switch from another
// one: the switch between the two was not recorded, so when the first stopped is unknown,
// and so is what the wait was behind (not the task switched in when it began: rcu_preempt
// took a `sleep`'s 4 ms that a compiler held).
TEST(Wakers, AWaitEndedByAnotherTaskThanTheLastShownIsBehindUnknown) {
  TrackingPolicy policy = Following({10});
  policy.known_tgids = {{10, 10}};
  Sim s({}, policy);
  s.Switch(0, 1, 0, kR, 10);
  s.Switch(100, 1, 10, kR, 15, /*preempt=*/true);  // preempted by 15
  s.Switch(4'100, 1, 60, kR, 10);                  // 60 switches back: 15 -> 60 unseen
  s.Finish(5'000);
  const ThreadReport& r = s.Report(10);
  EXPECT_EQ(Behind(r, kPartyUnknown), 4'000);
  EXPECT_EQ(Behind(r, 15), -1);
  EXPECT_EQ(Behind(r, 60), -1);
  EXPECT_EQ(r.longest_wait_ns, 4'000);
}

// The same wait with a sign in between: an interrupt's wakeup shows the task it
// interrupted, 60. What ran before that sign is unknown; from it on, 60.
TEST(Wakers, ASignOfAnotherTaskMakesTheWaitBeforeItUnknown) {
  TrackingPolicy policy = Following({10});
  policy.known_tgids = {{10, 10}, {11, 10}};
  Sim s({}, policy);
  s.Switch(0, 0, 0, kR, 11);
  s.Switch(0, 1, 0, kR, 10);
  s.SysEnter(10, 0, 11, kRead);
  s.Switch(20, 0, 11, kS, 0);
  s.Switch(100, 1, 10, kR, 15, /*preempt=*/true);
  s.WakeBoth(1'000, 1, 60, 11, 0, kFlagHardirq);  // wakes 11 onto CPU 0, interrupting 60
  s.Switch(4'100, 1, 60, kR, 10);
  s.Finish(5'000);
  const ThreadReport& r = s.Report(10);
  EXPECT_EQ(Behind(r, kPartyUnknown), 900);
  EXPECT_EQ(Behind(r, 60), 3'100);
  EXPECT_EQ(Behind(r, 15), -1);
}

// The unfiltered buffer's increments of unfollowed tasks in their own context say what
// ran between the switches the pid filter drops: 15 ran until 120, 60 from 1 100 (its
// increment at its switch-out covers its run since its switch-in); between, unknown.
TEST(Wakers, UnfollowedTasksOwnIncrementsNameWhatAWaitWasBehind) {
  TrackingPolicy policy = Following({10});
  policy.known_tgids = {{10, 10}};
  Sim s({}, policy);
  s.Switch(0, 1, 0, kR, 10);
  s.Switch(100, 1, 10, kR, 15, /*preempt=*/true);
  s.UnfilteredRuntime(120, 1, 15, 20);       // 15's switch-out: ran [100, 120]
  s.UnfilteredRuntime(4'099, 1, 60, 2'999);  // 60's, just before its switch: [1 100, 4 099]
  s.Switch(4'100, 1, 60, kR, 10);
  s.Finish(5'000);
  const ThreadReport& r = s.Report(10);
  EXPECT_EQ(Behind(r, 15), 20);
  EXPECT_EQ(Behind(r, kPartyUnknown), 980);
  EXPECT_EQ(Behind(r, 60), 3'000);
  EXPECT_FALSE(s.Report(60).thread->tracked);
}

// With every increment there, the runs tile the wait: nothing unknown. A tick's
// increment (in an interrupt, in the task's context) counts as its own; one done in
// another context (a remote wakeup's) says nothing of what ran. A task's increment that
// starts later than its last one ended (beyond the clock read's lag) says it stopped and
// ran again: what ran between is unknown.
TEST(Wakers, IncrementsThatTileTheWaitLeaveNothingUnknown) {
  for (const bool gap : {false, true}) {
    SCOPED_TRACE(gap);
    TrackingPolicy policy = Following({10});
    policy.known_tgids = {{10, 10}};
    Sim s({}, policy);
    s.Switch(0, 1, 0, kR, 10);
    s.Switch(100, 1, 10, kR, 15, /*preempt=*/true);
    s.UnfilteredRuntime(120, 1, 15, 20);
    s.UnfilteredRuntime(2'000, 1, 80, 500, /*running=*/60);  // 60 updating 80: not a run
    if (gap)
      s.UnfilteredRuntime(1'000, 1, 60, 880);  // ran [120, 1 000], then stopped
    else
      s.UnfilteredRuntime(3'000, 1, 60, 2'880);  // the tick: ran [120, 3 000]
    // Its switch-out's: from 3 500, 500 ns after the tick's end (its clock read's lag), or
    // 2 500 after the earlier run's.
    s.UnfilteredRuntime(4'099, 1, 60, 599);
    s.Switch(4'100, 1, 60, kR, 10);
    s.Finish(5'000);
    const ThreadReport& r = s.Report(10);
    EXPECT_EQ(Behind(r, 15), 20);
    EXPECT_EQ(Behind(r, 60), gap ? 880 + 600 : 3'980);
    EXPECT_EQ(Behind(r, kPartyUnknown), gap ? 2'500 : -1);
    EXPECT_EQ(Behind(r, 80), -1);
  }
}

// An increment at a switch's time comes after the switch (the decoder's order for the
// unfiltered buffer's records): the switch has told what ran, and the increment must not
// make the view name the task switched out while the next one runs.
TEST(Wakers, AnIncrementAtItsSwitchsTimeChangesNothing) {
  TrackingPolicy policy = Following({10});
  policy.known_tgids = {{10, 10}, {11, 10}};
  Sim s({}, policy);
  s.Switch(0, 0, 0, kR, 11);
  s.SysEnter(10, 0, 11, kRead);
  s.Switch(20, 0, 11, kS, 0);
  s.Switch(0, 1, 0, kR, 10);
  s.Switch(100, 1, 10, kR, 15, /*preempt=*/true);
  s.Switch(1'000, 1, 15, kR, 10);
  s.UnfilteredRuntime(1'000, 1, 15, 900);        // 15's switch-out, after the switch
  s.WakeBoth(1'500, 0, 0, 11, 1, kFlagHardirq);  // 11 queued on CPU 1, behind 10
  s.Switch(1'800, 1, 10, kR, 11, /*preempt=*/true);
  s.Finish(3'000);
  EXPECT_EQ(Behind(s.Report(10), 15), 900);
  EXPECT_EQ(Behind(s.Report(11), 10), 300);
  EXPECT_EQ(Behind(s.Report(11), kPartyUnknown), -1);
}

// Preempted on CPU 0, then moved to CPU 1 by its balancer: the wait queued on CPU 0 is
// pre-migration wait, a part of wait_cpu_preempted; the queue time splits by CPU.
TEST(Wakers, PreMigrationWaitIsTheWaitQueuedBeforeTheMove) {
  Sim s;
  s.Switch(0, 1, 12, kS, 0);  // CPU 1 idle from the start
  s.Switch(5, 0, 0, kR, 10);
  s.Switch(100, 0, 10, kR, 11, /*preempt=*/true);  // 10 queued on CPU 0 behind 11
  s.Migrate(150, 1, 0, 10, 0, 1);                  // pulled to idle CPU 1
  s.Switch(170, 1, 0, kR, 10);
  s.Finish(300);
  const ThreadReport& r = s.Report(10);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuPreempted), 70);
  EXPECT_EQ(r.wait_before_migration_preempted_ns, 50);
  EXPECT_EQ(r.wait_before_migration_wakeup_ns, 0);
  EXPECT_EQ(r.migrations, 1u);
  ASSERT_EQ(r.migration_pairs.size(), 1u);
  EXPECT_EQ((r.migration_pairs.at({0, 1})), 1u);
  EXPECT_EQ(Behind(r, 11), 50);
  EXPECT_EQ(Behind(r, kPartyIdle), 20);
}

// Moved twice while queued after a wakeup: each move ends a pre-migration part; the
// wakeup's own placement (between sched_waking and sched_wakeup) is not one.
TEST(Wakers, PreMigrationWaitAddsUpOverMovesButNotTheWakeupsPlacement) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.Switch(0, 1, 0, kR, 13);  // CPU 1 busy throughout
  s.SysEnter(1, 0, 10, kRead);
  s.Switch(100, 0, 10, kS, 11);
  s.Wake(200, 0, 11, 10, 0);        // sched_waking: still on CPU 0
  s.Migrate(201, 0, 11, 10, 0, 1);  // select_task_rq() picks CPU 1: placement
  s.Wake(202, 0, 11, 10, 1, 0, WakeupKind::kWakeup);
  s.Migrate(260, 0, 11, 10, 1, 0);  // queued on CPU 1 for 60 ns, moved
  s.Migrate(300, 1, 13, 10, 0, 1);  // queued on CPU 0 for 40 ns, moved back
  s.Switch(320, 1, 13, kS, 10);
  s.Finish(400);
  const ThreadReport& r = s.Report(10);
  EXPECT_EQ(s.Micro(10, M::kWaitCpuWakeup), 120);
  EXPECT_EQ(r.wait_before_migration_wakeup_ns, 60 + 40);
  EXPECT_EQ(r.migrations, 3u);
  EXPECT_EQ((r.migration_pairs.at({0, 1})), 2u);
  EXPECT_EQ((r.migration_pairs.at({1, 0})), 1u);
}

}  // namespace
}  // namespace cstool::testing
