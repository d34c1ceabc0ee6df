// Two decodings of one file (two readers, one thread or two) must count alike.
#pragma once

#include <gtest/gtest.h>

#include "decode/decode_trace.h"

namespace cstool::testing {

inline void ExpectSameDecodeStats(const DecodeStats& a, const DecodeStats& b) {
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.events_per_cpu, b.events_per_cpu);
  EXPECT_EQ(a.events_per_type, b.events_per_type);
  EXPECT_EQ(a.first_ts, b.first_ts);
  EXPECT_EQ(a.last_ts, b.last_ts);
  EXPECT_EQ(a.lost_per_cpu, b.lost_per_cpu);
  EXPECT_EQ(a.lost_gaps_per_cpu, b.lost_gaps_per_cpu);
  EXPECT_EQ(a.lost_events, b.lost_events);
  EXPECT_EQ(a.lost_gaps_unknown, b.lost_gaps_unknown);
  EXPECT_EQ(a.unfiltered_runtime_events, b.unfiltered_runtime_events);
  EXPECT_EQ(a.unfiltered_other_events, b.unfiltered_other_events);
  EXPECT_EQ(a.unfiltered_runtime_lost, b.unfiltered_runtime_lost);
  EXPECT_EQ(a.anomalies, b.anomalies);
  EXPECT_EQ(a.missing_events, b.missing_events);
}

}  // namespace cstool::testing
