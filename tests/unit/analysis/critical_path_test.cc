// The critical path: walked back from a thread's end through its wakers, tiling the
// interval exactly; each rule where the chain ends (interrupt, unknown or idle waker,
// the trace start, no wakeup) and lost events inside it.
#include "analysis/critical_path.h"

#include <gtest/gtest.h>

#include <map>

#include "tests/support/sim.h"

namespace cstool::testing {
namespace {

using M = Microstate;

// Without syscall events every on-CPU stretch is user time: the states are exact.
TraceCapabilities NoSyscalls() {
  TraceCapabilities caps;
  caps.syscalls = false;
  return caps;
}

class PathSim {
 public:
  PathSim() : sim(NoSyscalls()) { sim.AddObserver(&recorder); }
  CriticalPath Walk(int tid, int64_t from, int64_t to) {
    return recorder.Walk(*sim.Report(tid).thread, from, to);
  }
  Sim sim;
  CriticalPathRecorder recorder;
};

// The segments tile [from, to): each starts where the one before ended.
void ExpectTiled(const CriticalPath& p) {
  int64_t at = p.from;
  for (const PathSegment& s : p.segments) {
    EXPECT_EQ(s.start, at);
    EXPECT_GT(s.end, s.start);
    at = s.end;
  }
  EXPECT_EQ(at, p.to);
}

// Time on the path per tid.
std::map<int, int64_t> PerTid(const CriticalPath& p) {
  std::map<int, int64_t> out;
  for (const PathSegment& s : p.segments) out[s.thread->tid] += s.end - s.start;
  return out;
}

// A (10) wakes B (11), B wakes C (12), C works, wakes B, B wakes A: A's sleep is
// explained by B's and C's time, back to the instant A went to sleep.
void ScriptChain(Sim& s) {
  s.Switch(0, 0, 0, kR, 10);      // A runs on CPU 0
  s.Switch(0, 1, 0, kR, 11);      // B on CPU 1 ...
  s.Switch(10, 1, 11, kS, 12);    // ... sleeps; C runs
  s.Switch(30, 1, 12, kS, 0);     // C sleeps too
  s.WakeBoth(100, 0, 10, 11, 1);  // A wakes B (pipe)
  s.Switch(110, 0, 10, kS, 0);    // and sleeps
  s.Switch(120, 1, 0, kR, 11);
  s.WakeBoth(150, 1, 11, 12, 0);  // B wakes C (futex)
  s.Switch(160, 1, 11, kS, 0);
  s.Switch(170, 0, 0, kR, 12);    // C works on CPU 0
  s.WakeBoth(400, 0, 12, 11, 1);  // C wakes B
  s.Switch(410, 0, 12, kS, 0);
  s.Switch(420, 1, 0, kR, 11);
  s.WakeBoth(450, 1, 11, 10, 0);  // B wakes A
  s.Switch(460, 1, 11, kS, 0);
  s.Switch(470, 0, 0, kR, 10);
}

TEST(CriticalPath, FollowsAChainOfThreadWakers) {
  PathSim p;
  ScriptChain(p.sim);
  p.sim.Finish(600);
  const CriticalPath path = p.Walk(10, 0, 500);
  ExpectTiled(path);
  // A: its run before the sleep and from its wakeup; B: from A's sleep to waking C, and
  // from C's wakeup to waking A; C: from B's sleep to waking B.
  EXPECT_EQ(PerTid(path), (std::map<int, int64_t>{{10, 110 + 50}, {11, 50 + 50}, {12, 240}}));
  ASSERT_FALSE(path.segments.empty());
  EXPECT_EQ(path.segments.front().thread->tid, 10);
  EXPECT_EQ(path.segments.front().state, M::kUser);
  EXPECT_EQ(path.segments.front().end, 110);
  for (const PathSegment& s : path.segments) {
    EXPECT_EQ(s.ends, PathEnd::kNone);
    EXPECT_FALSE(IsSleeping(s.state)) << s.thread->tid << " " << s.start;  // all explained
  }
  // C's time on the path is its work, all user time.
  for (const PathSegment& s : path.segments) {
    if (s.thread->tid == 12) {
      EXPECT_EQ(s.state, M::kUser) << s.start;
    }
  }
  EXPECT_EQ(path.lost_events, 0u);
}

// An interval inside the life: the walk starts at --to and stops at --from.
TEST(CriticalPath, AnIntervalIsTiledToo) {
  PathSim p;
  ScriptChain(p.sim);
  p.sim.Finish(600);
  // Inside A's sleep, C working: the sleep's waker (B, at 450) explains it from the
  // interval's end, and B, asleep then, is explained by its own waker, C.
  const CriticalPath path = p.Walk(10, 200, 300);
  ExpectTiled(path);
  EXPECT_EQ(PerTid(path), (std::map<int, int64_t>{{12, 100}}));
}

// A ping-pong across CPUs whose wakeups the kernel completes on the wakee's CPU: A wakes
// B while B is still on its way to sleep, then sleeps itself; B's sleep ends at its
// wakelist flush (an interrupt on CPU 1), and B wakes A the same way. B's waker is A, but
// A's part was done before B's sleep began, so that sleep stays on B (the wakeup's own
// latency), and the walk does not bounce between the two at one instant (it did: 64
// hand-offs, then "unknown waker").
TEST(CriticalPath, AWakeupBegunBeforeTheSleepLeavesTheSleepOnTheSleeper) {
  PathSim p;
  Sim& s = p.sim;
  s.Switch(0, 0, 0, kR, 10);
  s.Switch(0, 1, 0, kR, 11);
  s.SysEnter(1, 0, 10, kRead);
  s.SysEnter(2, 1, 11, kRead);
  s.Wake(100, 0, 10, 11, 1);    // A wakes B, B still on CPU 1
  s.Switch(102, 1, 11, kS, 0);  // B sleeps
  s.Switch(104, 0, 10, kS, 0);  // A sleeps
  s.IrqEntry(106, 1, 0);
  s.Wake(108, 1, 0, 11, 1, kFlagHardirq, WakeupKind::kWakeup);  // B's flush
  s.IrqExit(110, 1, 0);
  s.Switch(112, 1, 0, kR, 11);
  s.SysExit(114, 1, 11, kRead);
  s.SysEnter(150, 1, 11, kWrite);
  s.WakeBoth(160, 1, 11, 10, 0);  // B wakes A, asleep since 104: an ordinary wakeup
  s.Switch(170, 0, 0, kR, 10);
  s.Finish(200);
  const WokenBy* by_a = nullptr;
  for (const WokenBy& w : s.Report(11).woken_by)
    if (w.waker.thread && w.waker.thread->tid == 10) by_a = &w;
  ASSERT_NE(by_a, nullptr);  // B's waker is A
  const CriticalPath path = p.Walk(10, 0, 200);
  ExpectTiled(path);
  for (const PathSegment& seg : path.segments) EXPECT_EQ(seg.ends, PathEnd::kNone) << seg.start;
  // A's sleep [104, 160) is B's: B's sleep [102, 108) stays B's own, then B ran.
  EXPECT_EQ(PerTid(path), (std::map<int, int64_t>{{10, 104 + 40}, {11, 160 - 104}}));
}

// An interrupt's wakeup ends the chain: the sleep stays on the sleeper, naming it.
TEST(CriticalPath, AnIrqWakerEndsTheChain) {
  PathSim p;
  Sim& s = p.sim;
  s.Switch(0, 0, 0, kR, 10);
  s.Switch(100, 0, 10, kS, 0);
  s.IrqEntry(300, 0, 0);
  s.WakeBoth(305, 0, 0, 10, 0, kFlagHardirq);
  s.IrqExit(310, 0, 0);
  s.Switch(320, 0, 0, kR, 10);
  s.Finish(400);
  const CriticalPath path = p.Walk(10, 0, 400);
  ExpectTiled(path);
  const PathSegment* sleep = nullptr;
  for (const PathSegment& seg : path.segments)
    if (seg.state == M::kSleep) sleep = &seg;
  ASSERT_NE(sleep, nullptr);
  EXPECT_EQ(sleep->start, 100);
  EXPECT_EQ(sleep->end, 305);
  EXPECT_EQ(sleep->ends, PathEnd::kIrqWaker);
  EXPECT_EQ(sleep->source, "irq:24 virtio0");
  EXPECT_EQ(PerTid(path), (std::map<int, int64_t>{{10, 400}}));
}

// A waker that exits afterwards, its tid then reused: the path names the thread that
// did the wakeup, not the new one with its tid.
TEST(CriticalPath, AWakerThatExitsAndWhoseTidIsReused) {
  PathSim p;
  Sim& s = p.sim;
  s.Switch(0, 0, 0, kR, 10);
  s.Switch(50, 0, 10, kS, 11);    // A sleeps; B runs
  s.WakeBoth(200, 0, 11, 10, 1);  // B wakes A ...
  s.Switch(205, 1, 0, kR, 10);
  s.Exit(210, 0, 11);  // ... and exits
  s.Switch(220, 0, 11, kStateDead, 12);
  s.Fork(230, 0, 12, 11, false);  // a new 11
  s.Finish(300);
  const CriticalPath path = p.Walk(10, 0, 300);
  ExpectTiled(path);
  const Thread* waker = nullptr;
  for (const PathSegment& seg : path.segments)
    if (seg.thread->tid == 11) waker = seg.thread;
  ASSERT_NE(waker, nullptr);
  EXPECT_TRUE(waker->exiting);
  EXPECT_NE(waker, s.Report(11).thread);  // the live 11 is the new one
  EXPECT_EQ(PerTid(path), (std::map<int, int64_t>{{10, 50 + 100}, {11, 150}}));
}

// The waker was already alive, in a state the trace cannot know, when the trace began:
// the chain ends there, labelled, rather than guessing further back.
TEST(CriticalPath, AChainCrossingTheTraceStartEndsThere) {
  PathSim p;
  Sim& s = p.sim;
  s.Switch(0, 0, 0, kR, 10);
  s.Switch(100, 0, 10, kS, 0);
  s.WakeBoth(300, 1, 11, 10, 0);  // 11's first event: it runs on CPU 1
  s.Switch(320, 0, 0, kR, 10);
  s.Finish(400);
  const CriticalPath path = p.Walk(10, 0, 400);
  ExpectTiled(path);
  const PathSegment* before = nullptr;
  for (const PathSegment& seg : path.segments)
    if (seg.thread->tid == 11) before = &seg;
  ASSERT_NE(before, nullptr);
  EXPECT_EQ(before->start, 100);
  EXPECT_EQ(before->end, 300);
  EXPECT_EQ(before->state, M::kUnknown);
  EXPECT_EQ(before->ends, PathEnd::kTraceStart);
}

// Lost events inside the chain: the path goes on where the trace still shows the
// wakeup, with the segments the gap overlaps marked; a wakeup from a CPU the gap made
// unknown ends the chain as an unknown waker.
TEST(CriticalPath, LostEventsInsideAChainAreMarked) {
  PathSim p;
  Sim& s = p.sim;
  s.Switch(0, 0, 0, kR, 10);
  s.Switch(0, 1, 0, kR, 11);
  s.Switch(100, 0, 10, kS, 0);    // A sleeps
  s.Lost(200, 1, 7);              // B's CPU loses events
  s.WakeBoth(300, 1, 11, 10, 0);  // B's own wakeup of A: B ran, as its event shows
  s.Switch(320, 0, 0, kR, 10);
  s.Switch(350, 0, 10, kS, 0);  // A sleeps again
  s.Lost(360, 1, 2);
  s.WakeBoth(400, 1, 0, 10, 0);  // from task context of an unknown task
  s.Switch(420, 0, 0, kR, 10);
  s.Finish(500);
  const CriticalPath path = p.Walk(10, 0, 500);
  ExpectTiled(path);
  EXPECT_EQ(path.lost_events, 2u);
  bool marked_b = false, unknown_end = false;
  for (const PathSegment& seg : path.segments) {
    if (seg.thread->tid == 11 && seg.start <= 200 && seg.end >= 200) marked_b = seg.lost_events;
    if (seg.thread->tid == 10 && seg.start == 350) {
      EXPECT_EQ(seg.end, 400);
      unknown_end = seg.ends == PathEnd::kUnknownWaker;
    }
  }
  EXPECT_TRUE(marked_b);
  EXPECT_TRUE(unknown_end);
  EXPECT_EQ(PerTid(path)[11], 200);  // 100 .. 300
}

// The thread still asleep at the trace's end: nothing explains that sleep.
// Outside a pid-filtered recording a waker may run unseen: 10, not followed, woken by 20
// at 1000 and again by 30 at 5000, ran and slept in between (it could not be woken
// otherwise), so 20's sleep from 2000 is explained by 10 back to 5000 and by 30, who
// woke it then, before that; not by 10 waiting for a CPU since 1000.
TEST(CriticalPath, AnUnfollowedWakerWokenTwiceRanAndSleptInBetween) {
  Sim s(NoSyscalls(), Following({20, 30}));
  CriticalPathRecorder recorder;
  s.AddObserver(&recorder);
  s.Switch(0, 0, 0, kR, 20);
  s.Switch(0, 2, 0, kR, 30);
  s.WakeBoth(1'000, 0, 20, 10, 1);
  s.Switch(2'000, 0, 20, kS, 0);
  s.WakeBoth(5'000, 2, 30, 10, 1);
  s.WakeBoth(8'000, 1, 10, 20, 0);
  s.Switch(9'000, 0, 0, kR, 20);
  s.Finish(10'000);
  const CriticalPath p = recorder.Walk(*s.Report(20).thread, 0, 10'000);
  ExpectTiled(p);
  ASSERT_EQ(p.segments.size(), 4u);
  EXPECT_EQ(p.segments[0].thread->tid, 20);
  EXPECT_EQ(p.segments[1].thread->tid, 30);  // running while 10 slept, until it woke 10
  EXPECT_EQ(p.segments[1].state, M::kUser);
  EXPECT_EQ(p.segments[1].start, 2'000);
  EXPECT_EQ(p.segments[1].end, 5'000);
  EXPECT_EQ(p.segments[2].thread->tid, 10);
  EXPECT_EQ(p.segments[2].state, M::kWaitCpuWakeup);
  EXPECT_EQ(p.segments[2].start, 5'000);
  EXPECT_EQ(p.segments[2].end, 8'000);
  EXPECT_EQ(p.segments[3].thread->tid, 20);
}

TEST(CriticalPath, ASleepNeverWokenStaysOnTheThread) {
  PathSim p;
  Sim& s = p.sim;
  s.Switch(0, 0, 0, kR, 10);
  s.Switch(100, 0, 10, kS, 0);
  s.Finish(400);
  const CriticalPath path = p.Walk(10, 0, 400);
  ExpectTiled(path);
  ASSERT_EQ(path.segments.size(), 2u);
  EXPECT_EQ(path.segments[1].ends, PathEnd::kNotWoken);
  EXPECT_EQ(path.segments[1].state, M::kSleep);
}

}  // namespace
}  // namespace cstool::testing
