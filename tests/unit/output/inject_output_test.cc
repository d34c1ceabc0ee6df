// The first line of `cstool nmi-inject`: how long it runs, as the user asked for it.
#include "output/inject_output.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace cstool {
namespace {

std::string FirstLine(double duration_s) {
  std::ostringstream os;
  InjectOutput out(os);
  out.Header({.source = "timer", .cpu = 1, .rate_hz = 5000, .duration_s = duration_s});
  const std::string text = os.str();
  return text.substr(0, text.find('\n'));
}

TEST(InjectOutput, TheHeaderSaysForHowLongOrUntilCtrlC) {
  EXPECT_EQ(FirstLine(2), "cstool nmi-inject: timer interrupts on CPU 1 at 5000/s for 2 s");
  EXPECT_EQ(FirstLine(0), "cstool nmi-inject: timer interrupts on CPU 1 at 5000/s until Ctrl-C");
}

}  // namespace
}  // namespace cstool
