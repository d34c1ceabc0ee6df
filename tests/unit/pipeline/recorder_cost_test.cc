// The note on what recording cost the recorded threads: the switches to cstool's own
// threads and the time their waits for a CPU spent behind them, over the recorded threads
// only.
#include "pipeline/recorder_cost.h"

#include <gtest/gtest.h>

#include <deque>

namespace cstool {
namespace {

TEST(RecorderCostNote, SwitchesToAndWaitsBehindTheRecordersThreads) {
  std::deque<Thread> threads(4);
  Thread& worker = threads[0];
  worker.id = 0;
  worker.tracked = true;
  Thread& recorder = threads[1];
  recorder.id = 1;
  recorder.recorder = true;
  Thread& other = threads[2];  // another recorded thread that waited behind worker
  other.id = 2;
  other.tracked = true;
  Thread& outside = threads[3];  // not recorded: none of its numbers count
  outside.id = 3;

  ReportModel model;
  EXPECT_EQ(RecorderCostNote(model), "");
  ThreadReport& w = model.For(worker);
  w.involuntary = 8;
  w.microstates[static_cast<size_t>(Microstate::kWaitCpuWakeup)] = 3'000'000;
  w.microstates[static_cast<size_t>(Microstate::kWaitCpuPreempted)] = 1'000'000;
  w.waited_behind = {{{&recorder, {}}, 500'000}, {{nullptr, kPartyIdle}, 250'000}};
  ThreadReport& o = model.For(other);
  o.involuntary = 2;
  o.microstates[static_cast<size_t>(Microstate::kWaitCpuWakeup)] = 1'000'000;
  o.waited_behind = {{{&worker, {}}, 1'000'000}};
  ThreadReport& x = model.For(outside);
  x.involuntary = 100;
  x.involuntary_to_recorder = 100;
  x.microstates[static_cast<size_t>(Microstate::kWaitCpuWakeup)] = 9'000'000;
  x.waited_behind = {{{&recorder, {}}, 9'000'000}};
  model.For(recorder);
  // Waits behind a recorder thread with no switch to one (a woken thread queued behind
  // the reading loop) are a cost too; the switches, none of which were to it, go unsaid.
  EXPECT_EQ(RecorderCostNote(model),
            "0.500 ms of all the recorded threads' 5.000 ms waiting for a CPU (10.0 %) was "
            "behind cstool's own threads (its loop that reads the buffers every 10 ms, "
            "mostly): what recording cost them, counted in LATW and LATP as the kernel counts "
            "them (WAITED BEHIND names the threads)");
  w.involuntary_to_recorder = 1;
  EXPECT_EQ(RecorderCostNote(model),
            "1 of all the recorded threads' 10 involuntary switches (10.0 %) were to cstool's "
            "own threads (its loop that reads the buffers every 10 ms, mostly), and 0.500 ms "
            "of their 5.000 ms waiting for a CPU (10.0 %) was behind them: what recording cost "
            "them, counted in ICX, LATW and LATP as the kernel counts them (WAITED BEHIND names "
            "the threads; JSON switches.involuntary_to_recorder)");
  w.waited_behind.clear();
  EXPECT_EQ(RecorderCostNote(model),
            "1 of all the recorded threads' 10 involuntary switches (10.0 %) were to cstool's "
            "own threads (its loop that reads the buffers every 10 ms, mostly): what recording "
            "cost them, counted in ICX as the kernel counts it (JSON "
            "switches.involuntary_to_recorder)");
  w.involuntary_to_recorder = 0;
  EXPECT_EQ(RecorderCostNote(model), "");
}

}  // namespace
}  // namespace cstool
