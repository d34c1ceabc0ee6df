#include "interrupts/injection_tally.h"

#include <gtest/gtest.h>

namespace cstool {
namespace {

constexpr int kAchieved = 0;  // the perf hrtimer's expiry
constexpr int kContext = 1;   // a local timer interrupt
constexpr int64_t kStart = 5000000000;
constexpr int64_t kMs = 1000000;

TEST(InjectionTally, OneExpiryPerInterruptRepeatsNothing) {
  InjectionTally t(kStart, kAchieved, kContext, /*achieved_in_context=*/true);
  for (int64_t i = 0; i < 3; ++i) {
    t.Push(kContext, kStart + i * kMs);
    t.Push(kAchieved, kStart + i * kMs + 1000);
  }
  EXPECT_EQ(t.total().achieved, 3u);
  EXPECT_EQ(t.total().context, 3u);
  EXPECT_EQ(t.total().repeated, 0u);
}

// A late interrupt runs the timer twice; a tick with no expiry is context alone.
TEST(InjectionTally, SecondExpiryInOneInterruptIsRepeated) {
  InjectionTally t(kStart, kAchieved, kContext, true);
  t.Push(kContext, kStart + 1 * kMs);
  t.Push(kAchieved, kStart + 1 * kMs + 1000);
  t.Push(kAchieved, kStart + 1 * kMs + 9000);
  t.Push(kAchieved, kStart + 1 * kMs + 12000);
  t.Push(kContext, kStart + 2 * kMs);  // the tick
  t.Push(kContext, kStart + 3 * kMs);
  t.Push(kAchieved, kStart + 3 * kMs + 1000);
  const InjectInterval& total = t.total();
  EXPECT_EQ(total.achieved, 4u);
  EXPECT_EQ(total.repeated, 2u);
  EXPECT_EQ(total.context, 3u);
  // The interrupts that ran the timer: 2 of the 3.
  EXPECT_EQ(total.achieved - total.repeated, 2u);
}

// The IPI source's context is another vector: its achieved events are never repeats.
TEST(InjectionTally, UnrelatedContextRepeatsNothing) {
  InjectionTally t(kStart, kAchieved, kContext, /*achieved_in_context=*/false);
  t.Push(kAchieved, kStart + 1000);
  t.Push(kAchieved, kStart + 2000);
  EXPECT_EQ(t.total().achieved, 2u);
  EXPECT_EQ(t.total().repeated, 0u);
}

// Events outside [start, end) are not counted, but what ran before the window still
// decides whether its first expiry is a repeat.
TEST(InjectionTally, WindowCountsOnlyItsEventsButKeepsTheInterruptBefore) {
  InjectionTally t(kStart, kAchieved, kContext, true);
  t.SetEnd(kStart + 10 * kMs);
  t.Push(kContext, kStart - 2000);
  t.Push(kAchieved, kStart - 1000);
  t.Push(kAchieved, kStart + 1000);  // same interrupt, inside the window
  t.Push(kContext, kStart + 2 * kMs);
  t.Push(kAchieved, kStart + 2 * kMs + 1000);
  t.Push(kContext, kStart + 10 * kMs);  // at the end: out
  t.Push(kAchieved, kStart + 10 * kMs + 1000);
  const InjectInterval& total = t.total();
  EXPECT_EQ(total.achieved, 2u);
  EXPECT_EQ(total.repeated, 1u);
  EXPECT_EQ(total.context, 1u);
}

TEST(InjectionTally, SecondsAreCountedFromTheStart) {
  InjectionTally t(kStart, kAchieved, kContext, true);
  t.Push(kContext, kStart + 999 * kMs);
  t.Push(kAchieved, kStart + 1000 * kMs);  // second 1, its interrupt in second 0
  t.Push(kAchieved, kStart + 2500 * kMs);
  ASSERT_EQ(t.seconds().size(), 3u);
  EXPECT_EQ(t.Second(0).context, 1u);
  EXPECT_EQ(t.Second(0).achieved, 0u);
  EXPECT_EQ(t.Second(1).achieved, 1u);
  EXPECT_EQ(t.Second(1).repeated, 0u);
  EXPECT_EQ(t.Second(2).achieved, 1u);
  EXPECT_EQ(t.Second(2).repeated, 1u);
  EXPECT_EQ(t.Second(7).achieved, 0u);  // past the last counted second
  EXPECT_EQ(t.total().achieved, 2u);
}

// Events of neither watch (another event in the CPU's buffer) change nothing.
TEST(InjectionTally, OtherEventsAreIgnored) {
  InjectionTally t(kStart, kAchieved, kContext, true);
  t.Push(kContext, kStart + 1000);
  t.Push(kAchieved, kStart + 2000);
  t.Push(7, kStart + 3000);
  t.Push(kAchieved, kStart + 4000);
  EXPECT_EQ(t.total().repeated, 1u);
  EXPECT_EQ(t.total().achieved, 2u);
  EXPECT_EQ(t.total().context, 1u);
  EXPECT_EQ(t.seconds().size(), 1u);
}

}  // namespace
}  // namespace cstool
