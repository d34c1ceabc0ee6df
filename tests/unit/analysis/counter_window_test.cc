#include "analysis/counter_window.h"

#include <gtest/gtest.h>

namespace cstool {
namespace {

// /proc shows a running thread's exec runtime as of the kernel's last update: a cut in
// the middle of an increment counts on-CPU time only up to where that increment starts,
// whichever arrives first; switches and waits still count up to the cut itself.
TEST(CounterWindow, OnCpuTimeAtACutStopsAtTheKernelsLastUpdate) {
  CounterWindow w;
  w.cuts.push_back({100, {}});
  w.cuts.push_back({300, {}});
  w.NoteAccounted(60, 150);  // spans the first cut
  w.AddSegment(Microstate::kUser, 0, 200);
  w.AddSwitch(200, false);
  w.AddSegment(Microstate::kWaitCpuPreempted, 200, 250);
  w.AddSegment(Microstate::kSys, 250, 400);
  w.NoteAccounted(250, 350);  // arrives after the segment: no effect on what is counted
  EXPECT_EQ(w.Before(100).on_cpu_ns, 60);
  EXPECT_EQ(w.Before(300).on_cpu_ns, 200 + 50);
  EXPECT_EQ(w.Before(300).wait_cpu_ns, 50);
  EXPECT_EQ(w.Before(300).involuntary, 1u);
  EXPECT_EQ(w.total.on_cpu_ns, 350);
}

// Steal while the thread ran: on-CPU time the kernel's exec runtime leaves out, at every
// cut after it and in the whole window; a cut inside it sees the part before the cut.
TEST(CounterWindow, StolenTimeIsLeftOutOfOnCpuAtTheCutsAfterIt) {
  CounterWindow w;
  w.cuts.push_back({100, {}});
  w.cuts.push_back({150, {}});
  w.cuts.push_back({300, {}});
  w.AddSegment(Microstate::kUser, 0, 400);
  w.AddStolen(120, 200);
  EXPECT_EQ(w.Before(100).on_cpu_ns, 100);
  EXPECT_EQ(w.Before(150).on_cpu_ns, 150 - 30);
  EXPECT_EQ(w.Before(150).stolen_ns, 30);
  EXPECT_EQ(w.Before(300).on_cpu_ns, 300 - 80);
  EXPECT_EQ(w.total.on_cpu_ns, 400 - 80);
  EXPECT_EQ((w.Before(300) - w.Before(100)).stolen_ns, 80);
}

// Steal after the exit record's instant is neither in the record nor counted twice: the
// part after the exit cut leaves the after-exit totals as it leaves the whole.
TEST(CounterWindow, StolenTimeAcrossTheExitCutLeavesBothSides) {
  CounterWindow w;
  w.exit_ts = 100;
  w.AddSegment(Microstate::kUser, 0, 200);
  w.AddStolen(80, 150);
  EXPECT_EQ(w.total.on_cpu_ns, 200 - 70);
  EXPECT_EQ(w.after_exit.on_cpu_ns, 100 - 50);
  EXPECT_EQ((w.total - w.after_exit).on_cpu_ns, 100 - 20);
}

// An increment that does not span a cut (it ends before, or starts after) leaves it as is.
TEST(CounterWindow, IncrementsBesideACutLeaveItAlone) {
  CounterWindow w;
  w.cuts.push_back({100, {}});
  w.NoteAccounted(20, 100);   // ends at the cut: the update is at the cut
  w.NoteAccounted(100, 180);  // starts at the cut
  w.AddSegment(Microstate::kUser, 0, 200);
  EXPECT_EQ(w.Before(100).on_cpu_ns, 100);
}

// The kernel adds run delay when the waiting thread gets the CPU: a wait the trace's end
// cut short (its segments end at the end) had not been counted at a cut after that.
TEST(CounterWindow, WaitInProgressAtTheEndIsNotCountedAtALaterCut) {
  CounterWindow w;
  w.cuts.push_back({1'000, {}});
  w.AddSegment(Microstate::kWaitCpuWakeup, 0, 100, {10});  // an ended wait
  w.AddSegment(Microstate::kUser, 100, 400);
  w.AddSegment(Microstate::kWaitCpuPreempted, 400, 450);  // one wait, two segments
  w.AddSegment(Microstate::kWaitCpuPreempted, 450, 900);
  EnqueueLag lag;
  w.EndTrace(900, lag);
  EXPECT_EQ(w.Before(1'000).wait_cpu_ns, 100);
  EXPECT_EQ(w.Before(1'000).QueuedWaitNs(), 90);
  EXPECT_EQ(w.total.wait_cpu_ns, 600);  // the thread's own totals keep it
  w.EndTrace(900, lag);                 // once only
  EXPECT_EQ(w.Before(1'000).wait_cpu_ns, 100);
}

// Moving a queued thread to another CPU dequeues it, which adds its run delay so far:
// a cut between the move and the switch-in sees the wait up to the move (its part before
// the enqueue left out, as at a switch-in), and so does a cut after the trace's end cut
// the wait short. A move in an earlier wait splits no later one.
TEST(CounterWindow, AMoveWhileQueuedCountsTheWaitSoFar) {
  CounterWindow w;
  EnqueueLag lag;
  w.cuts.push_back({500, {}});
  w.cuts.push_back({2'000, {}});
  w.NoteQueuedMove(50, 0);  // during an earlier wait
  w.AddSegment(Microstate::kWaitCpuPreempted, 0, 100);
  w.AddSegment(Microstate::kUser, 100, 200);
  w.NoteEnqueued(200, 210);
  w.NoteQueuedMove(300, 200);
  w.NoteQueuedMove(400, 200);
  w.PushSegment(Microstate::kWaitCpuWakeup, 200, 700, lag);
  w.PushSegment(Microstate::kUser, 700, 800, lag);
  EXPECT_EQ(w.Before(500).wait_cpu_ns, 100 + 200);  // the earlier wait, this one to 400
  EXPECT_EQ(w.Before(500).QueuedWaitNs(), 100 + 190);
  EXPECT_EQ(w.Before(2'000).QueuedWaitNs(), 100 + 490);
  // Cut short by the trace's end: counted up to its last move only.
  w.NoteQueuedMove(1'100, 1'000);
  w.AddSegment(Microstate::kWaitCpuPreempted, 1'000, 1'500);
  w.EndTrace(1'500, lag);
  EXPECT_EQ(w.Before(2'000).QueuedWaitNs(), 100 + 490 + 100);
  EXPECT_EQ(w.total.wait_cpu_ns, 100 + 500 + 500);
}

// A wait for a CPU released in pieces (a preemption's, at the increments that date it)
// counts as one: at a cut inside it, only up to its last move before the cut, in
// whichever piece that move falls, whether the wait then ended by a switch-in or was cut
// short by the trace's end.
TEST(CounterWindow, AWaitInPiecesCountsAsOneAtACutInsideIt) {
  for (const bool cut_short : {false, true}) {
    for (const int64_t move : {int64_t{-1}, int64_t{420}, int64_t{500}}) {
      SCOPED_TRACE(::testing::Message() << "cut short " << cut_short << ", move " << move);
      CounterWindow w;
      EnqueueLag lag;
      w.cuts.push_back({700, {}});
      w.cuts.push_back({2'000, {}});
      if (move >= 0) w.NoteQueuedMove(move, 400);
      w.AddSegment(Microstate::kWaitCpuPreempted, 400, 450);
      w.AddSegment(Microstate::kWaitCpuPreempted, 450, 900);
      if (!cut_short) w.AddSegment(Microstate::kUser, 900, 1'000);
      w.EndTrace(cut_short ? 900 : 1'000, lag);
      EXPECT_EQ(w.Before(700).wait_cpu_ns, move < 0 ? 0 : move - 400);
      EXPECT_EQ(w.Before(2'000).wait_cpu_ns, cut_short ? (move < 0 ? 0 : move - 400) : 500);
    }
  }
}

// A preempted wait the kernel does not count up to its first move (a preemption on the
// way to sleep), released in pieces: each piece leaves out its part before the move, a
// cut inside the wait sees the part from the move to its last move before the cut, and
// the preempted wait after it (not noted) counts whole.
TEST(CounterWindow, APreemptionOnTheWayToSleepCountsFromItsFirstMoveInEveryPiece) {
  CounterWindow w;
  EnqueueLag lag;
  w.cuts.push_back({700, {}});
  w.cuts.push_back({2'000, {}});
  w.NotePreemptedAsleep(400);
  w.NoteQueuedMove(500, 400);
  w.NoteQueuedMove(600, 400);
  w.PushSegment(Microstate::kWaitCpuPreempted, 400, 450, lag);
  w.PushSegment(Microstate::kWaitCpuPreempted, 450, 900, lag);
  w.PushSegment(Microstate::kUser, 900, 1'000, lag);
  w.PushSegment(Microstate::kWaitCpuPreempted, 1'000, 1'100, lag);
  w.PushSegment(Microstate::kUser, 1'100, 1'200, lag);
  w.EndTrace(1'200, lag);
  EXPECT_EQ(w.Before(700).wait_cpu_ns, 600 - 400);
  EXPECT_EQ(w.Before(700).QueuedWaitNs(), 600 - 500);
  EXPECT_EQ(w.Before(2'000).QueuedWaitNs(), (900 - 500) + 100);
  EXPECT_EQ(w.total.wait_preempted_asleep_ns, 500 - 400);
  EXPECT_EQ(w.total.QueuedWaitNs(), (900 - 500) + 100);
}

// A load balancer's batch left the thread between two runqueues for a span of its wait
// (widened while the batch went on): the kernel's run delay leaves out that span, in
// whichever pieces of the wait it falls, and only in the wait it is in.
TEST(CounterWindow, TheSpanBetweenRunqueuesIsLeftOutOfTheRunDelay) {
  CounterWindow w;
  EnqueueLag lag;
  w.NoteBetweenRunqueues(300, 305);
  w.NoteBetweenRunqueues(300, 312);  // the batch went on
  w.PushSegment(Microstate::kWaitCpuPreempted, 100, 310, lag);
  w.PushSegment(Microstate::kWaitCpuPreempted, 310, 400, lag);
  w.PushSegment(Microstate::kUser, 400, 500, lag);
  w.PushSegment(Microstate::kWaitCpuPreempted, 500, 600, lag);  // a later wait: all of it
  w.PushSegment(Microstate::kUser, 600, 700, lag);
  w.EndTrace(700, lag);
  EXPECT_EQ(w.total.wait_cpu_ns, 300 + 100);
  EXPECT_EQ(w.total.wait_between_runqueues_ns, 312 - 300);
  EXPECT_EQ(w.total.QueuedWaitNs(), 300 + 100 - 12);
}

// A dying thread's final wait (preempted in do_exit(), after the exit record) is out of
// the window with what the kernel would not have counted of it: the window's run delay
// is the same whether the wait was moved in a batch or not.
TEST(CounterWindow, AWaitAfterTheExitRecordLeavesTheWindowWithItsAdjustments) {
  for (const bool moved : {false, true}) {
    SCOPED_TRACE(moved);
    CounterWindow w;
    EnqueueLag lag;
    w.exit_ts = 200;
    w.PushSegment(Microstate::kWaitCpuPreempted, 0, 100, lag);
    w.PushSegment(Microstate::kUser, 100, 250, lag);
    if (moved) w.NoteBetweenRunqueues(300, 340);
    w.PushSegment(Microstate::kWaitCpuPreempted, 250, 400, lag);
    w.PushSegment(Microstate::kUser, 400, 450, lag);
    w.EndTrace(450, lag);
    const WindowTotals window = w.total - w.after_exit;
    EXPECT_EQ(window.QueuedWaitNs(), 100);
    EXPECT_EQ(window.wait_between_runqueues_ns, 0);
    EXPECT_EQ(w.after_exit.wait_between_runqueues_ns, moved ? 40 : 0);
  }
}

// The state machine may release one wait for a CPU in pieces (at the increments that date
// them). The kernel adds the whole wait at the switch-in, and where the wait ends tells
// how its enqueue was dated: a piece ending at the sched_wakeup is not a switch-in there.
TEST(CounterWindow, AWaitPushedInPiecesCountsAsOneAtItsEnd) {
  CounterWindow w;
  EnqueueLag lag;
  lag.Add(1'500);  // median 1'550
  w.cuts.push_back({15'000, {}});
  w.cuts.push_back({100'000, {}});
  w.NoteEnqueued(0, 10'000, {.at_event = true, .flushes_traced = true});
  w.PushSegment(Microstate::kWaitCpuWakeup, 0, 10'000, lag);  // up to the event
  w.PushSegment(Microstate::kWaitCpuWakeup, 10'000, 30'000, lag);
  w.PushSegment(Microstate::kUser, 30'000, 40'000, lag);
  EXPECT_EQ(w.total.wait_cpu_ns, 30'000);
  EXPECT_EQ(w.total.QueuedWaitNs(), 20'000 + 1'550);  // went on past the event: moved back
  EXPECT_EQ(lag.count(), 1u);                         // and measured no lag
  EXPECT_EQ(w.Before(15'000).wait_cpu_ns, 0);         // not ended at the cut
  EXPECT_EQ(w.total.on_cpu_ns, 10'000);
  // Still open at the end of the trace: closed there, and not counted at a later cut.
  w.PushSegment(Microstate::kWaitCpuWakeup, 40'000, 45'000, lag);
  w.PushSegment(Microstate::kWaitCpuWakeup, 45'000, 50'000, lag);
  w.EndTrace(50'000, lag);
  EXPECT_EQ(w.total.wait_cpu_ns, 40'000);
  EXPECT_EQ(w.Before(100'000).wait_cpu_ns, 30'000);
}

// A sample with a read bracket cuts at its instant and at the read's end, once each, and
// keeps the switches inside the read in time order whatever order they arrive in; the
// counts may have missed the last 0, 1, ... of them.
TEST(CounterWindow, SwitchesDuringAReadAreKeptInTimeOrder) {
  CounterWindow w;
  w.AddSample(500, 400, 450);
  w.AddSample(500, 400, 450);  // the same sample again adds nothing
  w.AddSample(900, 900, 900);  // no bracket: the instant only
  ASSERT_EQ(w.cuts.size(), 3u);
  ASSERT_EQ(w.reads.size(), 1u);
  w.AddSwitch(430, false);
  w.AddSwitch(400, true);  // at the read's start: before it, certainly counted
  w.AddSwitch(410, true);
  w.AddSwitch(450, false);
  w.AddSwitch(451, false);  // after the read's end
  const SwitchesDuringRead* r = w.Read(450);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(w.Read(500), nullptr);
  using P = std::pair<int64_t, bool>;
  EXPECT_EQ(r->switches, (std::vector<P>{{410, true}, {430, false}, {450, false}}));
  using C = std::pair<int64_t, int64_t>;
  EXPECT_EQ(r->MissedCounts(), (std::vector<C>{{0, 0}, {0, 1}, {0, 2}, {1, 2}}));
  EXPECT_EQ(w.Before(450).voluntary, 2u);
  EXPECT_EQ(w.Before(450).involuntary, 2u);
  EXPECT_EQ(w.Before(500).involuntary, 3u);
}

// A read of no length before the sample's instant still cuts where it ended.
TEST(CounterWindow, AReadOfNoLengthCutsAtItsInstant) {
  CounterWindow w;
  w.AddSample(500, 450, 450);
  EXPECT_EQ(w.cuts.size(), 2u);
  EXPECT_TRUE(w.reads.empty());
  w.AddSwitch(450, true);
  w.AddSwitch(460, true);
  EXPECT_EQ(w.Before(450).voluntary, 1u);
  EXPECT_EQ(w.Before(500).voluntary, 2u);
}

}  // namespace
}  // namespace cstool
