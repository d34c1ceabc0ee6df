// How a flight window's buffer grows: in steps, so that the kernel's allocation never
// holds the recorder's CPU for long (recording/kernel_window.h).
#include <gtest/gtest.h>

#include <vector>

#include "recording/kernel_window.h"

namespace cstool {
namespace {

using Steps = std::vector<size_t>;

TEST(ResizeSteps, AGrowGoesUpInStepsAndEndsAtTheTarget) {
  EXPECT_EQ(ResizeSteps(64, 10'000, 4096), (Steps{4160, 8256, 10'000}));
  EXPECT_EQ(ResizeSteps(64, 8256, 4096), (Steps{4160, 8256}));  // the last step exact
  EXPECT_EQ(ResizeSteps(64, 4000, 4096), (Steps{4000}));        // within one step
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
}

TEST(ResizeSteps, TheDefaultStepIsKResizeStepKb) {
  const Steps steps = ResizeSteps(64, 64 + 3 * kResizeStepKb);
  EXPECT_EQ(steps, (Steps{64 + kResizeStepKb, 64 + 2 * kResizeStepKb, 64 + 3 * kResizeStepKb}));
}

}  // namespace
}  // namespace cstool
