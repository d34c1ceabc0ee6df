// SaturatingAdd: a process's sum of its threads' spans holds at the int64 limits.
#include "base/saturating_add.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace cstool {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(SaturatingAdd, AddsWhatFits) {
  EXPECT_EQ(SaturatingAdd(3, 4), 7);
  EXPECT_EQ(SaturatingAdd(-3, 4), 1);
  EXPECT_EQ(SaturatingAdd(kMax - 1, 1), kMax);
  EXPECT_EQ(SaturatingAdd(kMin + 1, -1), kMin);
}

// The spans of a damaged file that the fuzzer found (two threads of one process).
TEST(SaturatingAdd, HoldsAtTheLimitsRatherThanWrapping) {
  EXPECT_EQ(SaturatingAdd(4611686018431009953, 4611686018428112885), kMax);
  EXPECT_EQ(SaturatingAdd(kMax, kMax), kMax);
  EXPECT_EQ(SaturatingAdd(kMin, -1), kMin);
  EXPECT_EQ(SaturatingAdd(kMax, kMin), -1);
}

}  // namespace
}  // namespace cstool
