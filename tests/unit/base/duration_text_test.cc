// Durations as typed and trace times as printed.
#include "base/duration_text.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace cstool {
namespace {

TEST(ParseDurationNs, NumbersWithAUnit) {
  EXPECT_EQ(ParseDurationNs("100ms"), 100'000'000);
  EXPECT_EQ(ParseDurationNs("1.5s"), 1'500'000'000);
  EXPECT_EQ(ParseDurationNs("200 us"), 200'000);
  EXPECT_EQ(ParseDurationNs("50000ns"), 50'000);
  EXPECT_EQ(ParseDurationNs("100"), std::nullopt);
  EXPECT_EQ(ParseDurationNs("-5ms"), std::nullopt);
  EXPECT_EQ(ParseDurationNs("ms"), std::nullopt);
}

TEST(TraceTimeText, SecondsAndNineDigits) {
  EXPECT_EQ(TraceTimeText(int64_t{0}), "0.000000000");
  EXPECT_EQ(TraceTimeText(int64_t{1234'000'056'789}), "1234.000056789");
  EXPECT_EQ(TraceTimeText(int64_t{-1'500'000'000}), "-1.500000000");
  EXPECT_EQ(TraceTimeText(int64_t{-5}), "-0.000000005");
  EXPECT_EQ(TraceTimeText(std::numeric_limits<int64_t>::min()), "-9223372036.854775808");
  // A damaged page header's time, past int64.
  EXPECT_EQ(TraceTimeText(std::numeric_limits<uint64_t>::max()), "18446744073.709551615");
}

}  // namespace
}  // namespace cstool
