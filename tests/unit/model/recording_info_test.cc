#include "model/recording_info.h"

#include <gtest/gtest.h>

namespace cstool {
namespace {

TEST(RecordingInfo, JsonRoundTripKeepsEveryField) {
  RecordingInfo r;
  r.tool_version = "0.1.0";
  r.command = {"sleep", "1"};
  r.target_pids = {42};
  r.trace_clock = "mono";
  r.start_ts = 10;
  r.end_ts = 20;
  r.cpus = {{0, 5, 1, 100, 3, 1, 7, 2}};
  r.threads = {{43, 42, "worker"}};
  r.missing_events = {"nmi:nmi_handler"};
  r.child = {42, true, 0, 1, 2, 30, 40, 5, 6};
  r.steal = {{0, 100, 130}, {1, 50, 50}};
  r.steal_step_ns = 10;
  RecordingInfo back = nlohmann::json(r).get<RecordingInfo>();
  EXPECT_EQ(nlohmann::json(back), nlohmann::json(r));
  EXPECT_EQ(back.cpus[0].overrun, 7u);
  EXPECT_EQ(back.child.exit_nivcsw, 40u);
  EXPECT_EQ(back.TotalLostEvents(), 7u + 2u);  // max(lost 3, overrun 7) + dropped 2
  EXPECT_EQ(back.TotalStolenNs(), 30);
  EXPECT_EQ(back.steal_step_ns, 10);
}

// A damaged file's readings (negative, going back, summing past int64) count as no steal
// or saturate; they never overflow.
TEST(RecordingInfo, DamagedStealReadingsDoNotOverflow) {
  RecordingInfo r;
  r.steal = {{0, -5, 10}, {1, 50, 40}, {2, 0, INT64_MAX}, {3, 0, INT64_MAX}};
  EXPECT_EQ(r.steal[0].Stolen(), 0);
  EXPECT_EQ(r.steal[1].Stolen(), 0);
  EXPECT_EQ(r.TotalStolenNs(), INT64_MAX);
}

TEST(RecordingInfo, AFileWithoutStealReadsAsNotSampled) {
  RecordingInfo back = nlohmann::json{{"tool_version", "0.1.0"}}.get<RecordingInfo>();
  EXPECT_TRUE(back.steal.empty());
  EXPECT_EQ(back.TotalStolenNs(), 0);
}

}  // namespace
}  // namespace cstool
