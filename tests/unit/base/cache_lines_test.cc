// EvictionChoice: which way the hand-over's buffers go, decided by timing both ways'
// refills (not the waits between them), and decided again every kHold buffers.
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

// A thread's cycle on a clock of its own: each buffer's refill costs `kept` or `evicted`
// (between Evict and Refilled), then the thread waits for the next buffer `wait_kept` or
// `wait_evicted` (the other thread's pace).
struct FakeCycle {
  int64_t kept = 100;
  int64_t evicted = 100;
  int64_t wait_kept = 0;
  int64_t wait_evicted = 0;
  int64_t now = 0;
  std::vector<bool> choices;

  void Run(int buffers) {
    EvictionChoice choice([this] { return now; });
    for (int i = 0; i < buffers; ++i) {
      const bool evict = choice.Evict();
      choices.push_back(evict);
      now += evict ? evicted : kept;
      choice.Refilled();
      now += evict ? wait_evicted : wait_kept;
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
    choice.Refilled();
  }
  EXPECT_EQ(choice.decision(), Decision::kKeep);
}

// The waits for the other thread are not the refill's: keeping is faster here although
// the kept rounds' whole cycles (work and wait) are the longer.
TEST(EvictionChoice, WaitsForTheOtherThreadDoNotDecide) {
  FakeCycle c{.kept = 90, .evicted = 110, .wait_kept = 100, .wait_evicted = 0};
  c.Run(kTrial + 1);
  EXPECT_EQ(c.decision, Decision::kKeep);
  FakeCycle d{.kept = 110, .evicted = 90, .wait_kept = 0, .wait_evicted = 100};
  d.Run(kTrial + 1);
  EXPECT_EQ(d.decision, Decision::kEvict);
}

// A buffer whose refill never ended (the thread's last) counts nothing.
TEST(EvictionChoice, ARefillThatNeverEndedCountsNothing) {
  int64_t now = 0;
  EvictionChoice choice([&] { return now; });
  for (int i = 0; i <= kTrial; ++i) {
    const bool evicted = choice.Evict();
    now += evicted ? 90 : 110;
    // The first refill of each evicted round never ends: were the wait behind it counted,
    // keeping would look faster.
    const int in_trial = i - EvictionChoice::kWarmup;
    if (!evicted || in_trial % EvictionChoice::kRound != 0) choice.Refilled();
    now += 1'000'000;
  }
  EXPECT_EQ(choice.decision(), Decision::kEvict);
}

// A decision holds for kHold buffers; then both ways are tried again, with no warm-up,
// and the way that pays now is taken: here keeping paid at first, evicting later.
TEST(EvictionChoice, TriesAgainAfterHoldingADecision) {
  constexpr int kRetrial = 2 * EvictionChoice::kRound * EvictionChoice::kRoundsEach;
  constexpr int kChanged = kTrial + EvictionChoice::kHold;  // the second trial's first buffer
  int64_t now = 0;
  EvictionChoice choice([&] { return now; });
  std::vector<bool> evicted;
  std::vector<Decision> decisions;
  for (int i = 0; i < kChanged + kRetrial + 100; ++i) {
    const bool evict = choice.Evict();
    evicted.push_back(evict);
    const bool later = i >= kChanged;
    now += evict == later ? 90 : 110;
    choice.Refilled();
    decisions.push_back(choice.decision());
  }
  for (int i = kTrial; i < kChanged; ++i) {
    EXPECT_FALSE(evicted[i]) << i;
    EXPECT_EQ(decisions[i], Decision::kKeep) << i;
  }
  for (int i = kChanged; i < kChanged + kRetrial; ++i) {
    const int round = (i - kChanged) / EvictionChoice::kRound;
    EXPECT_EQ(evicted[i], round % 2 == 1) << i;
    EXPECT_EQ(decisions[i], Decision::kTrying) << i;
  }
  for (size_t i = kChanged + kRetrial; i < evicted.size(); ++i) {
    EXPECT_TRUE(evicted[i]) << i;
    EXPECT_EQ(decisions[i], Decision::kEvict) << i;
  }
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
