// How a flight window's buffer grows: in steps, so that the kernel's allocation never
// holds the recorder's CPU for long (recording/kernel_window.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "recording/kernel_window.h"

namespace cstool {
namespace {

using Steps = std::vector<size_t>;

// As few equal steps as keep each within the step size: no last step of a few KiB (a
// whole write, with its sleep in the kernel, for nothing).
TEST(ResizeSteps, AGrowGoesUpInEqualStepsAndEndsAtTheTarget) {
  EXPECT_EQ(ResizeSteps(64, 10'000, 4096), (Steps{3376, 6688, 10'000}));  // 3312 each
  EXPECT_EQ(ResizeSteps(64, 8256, 4096), (Steps{4160, 8256}));
  EXPECT_EQ(ResizeSteps(64, 8257, 4096), (Steps{2795, 5526, 8257}));  // not 4096, 4096, 1
  EXPECT_EQ(ResizeSteps(64, 4000, 4096), (Steps{4000}));              // within one step
  for (const auto& [from, to] : {std::pair<size_t, size_t>{64, 100'000}, {1, 4097}, {7, 40'000}}) {
    const Steps steps = ResizeSteps(from, to, 4096);
    size_t before = from;
    for (const size_t kb : steps) {
      EXPECT_GT(kb, before) << from << " -> " << to;
      EXPECT_LE(kb - before, 4096u) << from << " -> " << to;
      before = kb;
    }
    EXPECT_EQ(before, to);
  }
}

// Whatever the limits, every step goes up and the last is the target.
TEST(ResizeSteps, NoStepSizeOrNoStepCountStillReachesTheTarget) {
  for (const auto& [step_kb, max_steps] :
       {std::pair<size_t, size_t>{0, 32}, {1, 32}, {4096, 0}, {4096, 1}, {3, 7}}) {
    const Steps steps = ResizeSteps(64, 100, step_kb, max_steps);
    ASSERT_FALSE(steps.empty());
    EXPECT_LE(steps.size(), std::max<size_t>(max_steps, 1)) << step_kb << " " << max_steps;
    EXPECT_TRUE(std::is_sorted(steps.begin(), steps.end())) << step_kb << " " << max_steps;
    EXPECT_GT(steps.front(), 64u) << step_kb << " " << max_steps;
    EXPECT_EQ(steps.back(), 100u) << step_kb << " " << max_steps;
  }
}

TEST(ResizeSteps, AShrinkIsOneWriteAndNoChangeNone) {
  EXPECT_EQ(ResizeSteps(10'000, 64, 4096), (Steps{64}));
  EXPECT_TRUE(ResizeSteps(4096, 4096, 4096).empty());
}

// Each write also waits in the kernel: a grow far beyond the step size takes the
// most writes allowed, in equal larger steps.
TEST(ResizeSteps, ALargeGrowTakesAtMostTheMostStepsAllowed) {
  const Steps steps = ResizeSteps(64, 512 * 1024, 4096, 32);
  ASSERT_EQ(steps.size(), 32u);
  EXPECT_EQ(steps.back(), 512u * 1024);
  for (size_t i = 1; i < steps.size(); ++i) EXPECT_LE(steps[i] - steps[i - 1], 16384u) << i;
  EXPECT_EQ(steps.front(), 64u + 16382);  // ceil((524288 - 64) / 32)
  EXPECT_EQ(steps[1] - steps[0], 16382u);
}

TEST(ResizeSteps, TheDefaultStepIsKResizeStepKb) {
  const Steps steps = ResizeSteps(64, 64 + 3 * kResizeStepKb);
  EXPECT_EQ(steps, (Steps{64 + kResizeStepKb, 64 + 2 * kResizeStepKb, 64 + 3 * kResizeStepKb}));
}

// A grow's steps are fixed when its target is set: every write is one of them, however
// many ticks the grow takes, so a grow takes at most kMaxResizeSteps writes.
TEST(BufferGrowth, AGrowTakesTheStepsSetWithItsTarget) {
  BufferGrowth g(4096);
  ASSERT_TRUE(g.Raise(512 * 1024));
  size_t writes = 0;
  size_t first_step = 0;
  while (g.growing()) {
    const size_t kb = g.NextKb();
    if (writes == 0) first_step = kb - g.kb();
    EXPECT_LE(kb - g.kb(), first_step) << writes;
    g.Took(kb);
    ++writes;
  }
  EXPECT_EQ(g.kb(), 512u * 1024);
  EXPECT_EQ(writes, kMaxResizeSteps);
}

// While a grow is under way its buffer holds less than a window, so what it measures
// does not raise the target; nor does a want within an eighth of it.
TEST(BufferGrowth, NoRaiseWhileGrowingOrForLittle) {
  BufferGrowth g(64);
  EXPECT_FALSE(g.Raise(64 + 8));  // within an eighth
  ASSERT_TRUE(g.Raise(10'000));
  g.Took(g.NextKb());
  EXPECT_FALSE(g.Raise(50'000));
  EXPECT_EQ(g.target_kb(), 10'000u);
  while (g.growing()) g.Took(g.NextKb());
  EXPECT_TRUE(g.Raise(50'000));
  EXPECT_EQ(g.NextKb() - g.kb(), 4000u);  // 40 000 KiB in 10 equal steps
}

// A dump's new instance starts small and grows back to the target the old one had; a
// failed write ends the grow where it stands.
TEST(BufferGrowth, ARestartGrowsBackAndAFailureStops) {
  BufferGrowth g(64);
  ASSERT_TRUE(g.Raise(20'000));
  while (g.growing()) g.Took(g.NextKb());
  g.Restart(64);
  EXPECT_EQ(g.kb(), 64u);
  EXPECT_EQ(g.target_kb(), 20'000u);
  g.Took(g.NextKb());
  g.GiveUp();
  EXPECT_FALSE(g.growing());
  EXPECT_EQ(g.target_kb(), g.kb());
  BufferGrowth small(64);
  small.Restart(64);
  EXPECT_FALSE(small.growing());
}

}  // namespace
}  // namespace cstool
