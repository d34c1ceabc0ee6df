// The steal a recording met, as the report names it: at the resolution of its source.
#include "model/host_steal_text.h"

#include <gtest/gtest.h>

namespace cstool {
namespace {

TEST(HostStealText, TicksAreWholeMsAndTheRunqueueClocksAreToTheNs) {
  RecordingInfo ticks;
  ticks.steal_step_ns = 10'000'000;
  ticks.steal_source = "/proc/stat";
  EXPECT_EQ(StealMsText(ticks, 20'000'000), "20 ms");
  EXPECT_EQ(StealSourceText(ticks),
            "steal time, /proc/stat, in 10 ms steps, each CPU's within a step");
  RecordingInfo older = ticks;  // written before the source was named
  older.steal_source.clear();
  EXPECT_EQ(StealSourceText(older), StealSourceText(ticks));

  RecordingInfo clocks;
  clocks.steal_step_ns = 1;
  clocks.steal_source = "runqueue clocks";
  EXPECT_EQ(StealMsText(clocks, 412'345), "0.412 ms");
  EXPECT_EQ(StealSourceText(clocks), "steal time, the runqueue clocks, to the ns");
}

}  // namespace
}  // namespace cstool
