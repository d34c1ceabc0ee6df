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
  w.EndTrace(900);
  EXPECT_EQ(w.Before(1'000).wait_cpu_ns, 100);
  EXPECT_EQ(w.Before(1'000).QueuedWaitNs(), 90);
  EXPECT_EQ(w.total.wait_cpu_ns, 600);  // the thread's own totals keep it
  w.EndTrace(900);                      // once only
  EXPECT_EQ(w.Before(1'000).wait_cpu_ns, 100);
}

}  // namespace
}  // namespace cstool
