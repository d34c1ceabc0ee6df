// EvictionChoice: which way the hand-over's buffers go, decided by timing both.
#include "base/cache_lines.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

namespace cstool {
namespace {

using Decision = EvictionChoice::Decision;
// Buffers before the decision: it is made as the next one goes back.
constexpr int kTrial =
    EvictionChoice::kWarmup + 2 * EvictionChoice::kRound * EvictionChoice::kRoundsEach;

// A clock that advances, at each call of Evict, by what the previous buffer cost: `kept`
// after a buffer that was kept, `evicted` after one evicted.
struct FakeCycle {
  int64_t kept = 100;
  int64_t evicted = 100;
  int64_t now = 0;
  bool last_evicted = false;
  std::vector<bool> choices;

  void Run(int buffers) {
    EvictionChoice choice([this] { return now; });
    for (int i = 0; i < buffers; ++i) {
      last_evicted = choice.Evict();
      choices.push_back(last_evicted);
      now += last_evicted ? evicted : kept;
      if (i == kTrial - 1) {
        EXPECT_EQ(choice.decision(), Decision::kTrying) << i;
      }
    }
    decision = choice.decision();
  }
  Decision decision = Decision::kTrying;
};

TEST(EvictionChoice, WarmUpKeepsThenRoundsAlternateKeptFirst) {
  FakeCycle c;
  c.Run(kTrial);
  for (int i = 0; i < EvictionChoice::kWarmup; ++i) EXPECT_FALSE(c.choices[i]) << i;
  for (int i = EvictionChoice::kWarmup; i < kTrial; ++i) {
    const int round = (i - EvictionChoice::kWarmup) / EvictionChoice::kRound;
    EXPECT_EQ(c.choices[i], round % 2 == 1) << i;
  }
}

TEST(EvictionChoice, KeepsWhenKeepingIsFaster) {
  FakeCycle c{.kept = 90, .evicted = 110};
  c.Run(kTrial + 100);
  EXPECT_EQ(c.decision, Decision::kKeep);
  for (int i = kTrial; i < kTrial + 100; ++i) EXPECT_FALSE(c.choices[i]) << i;
}

TEST(EvictionChoice, EvictsWhenEvictingIsFaster) {
  FakeCycle c{.kept = 110, .evicted = 90};
  c.Run(kTrial + 100);
  EXPECT_EQ(c.decision, Decision::kEvict);
  for (int i = kTrial; i < kTrial + 100; ++i) EXPECT_TRUE(c.choices[i]) << i;
}

// A median: one slow round of the faster way (a preemption, say) does not turn it.
TEST(EvictionChoice, OneSlowRoundDoesNotDecide) {
  std::array<int64_t, 2> cost{90, 110};  // kept, evicted
  int64_t now = 0;
  EvictionChoice choice([&] { return now; });
  for (int i = 0; i <= kTrial; ++i) {
    const bool evicted = choice.Evict();
    // The first kept round, stalled for 50 ms.
    const bool stall = i == EvictionChoice::kWarmup;
    now += (evicted ? cost[1] : cost[0]) + (stall ? 50'000'000 : 0);
  }
  EXPECT_EQ(choice.decision(), Decision::kKeep);
}

// A tie keeps the buffers as they are (evicting is the extra work).
TEST(EvictionChoice, ATieKeeps) {
  FakeCycle c;
  c.Run(kTrial + 1);
  EXPECT_EQ(c.decision, Decision::kKeep);
}

// Eviction changes no byte of the buffer.
TEST(EvictCacheLines, LeavesTheDataAsTheyAre) {
  std::vector<unsigned char> bytes(4096 + 7);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 7);
  EvictCacheLines(bytes.data() + 3, bytes.size() - 3);
  for (size_t i = 0; i < bytes.size(); ++i)
    ASSERT_EQ(bytes[i], static_cast<unsigned char>(i * 7)) << i;
}

}  // namespace
}  // namespace cstool
