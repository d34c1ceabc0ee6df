#include "kernel/running_event_formats.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "base/read_file.h"

namespace cstool {
namespace {

constexpr const char* kSwitchFormat = "/sys/kernel/tracing/events/sched/sched_switch/format";

TEST(RunningEventFormats, OnlyTheKernelsOwnTextMatches) {
  const std::optional<std::string> text = ReadWholeFile(kSwitchFormat);
  if (!text) GTEST_SKIP() << "cannot read " << kSwitchFormat << " (no tracefs, or not root)";
  EXPECT_TRUE(IsRunningKernelFormat("sched", "sched_switch", *text));
  EXPECT_FALSE(IsRunningKernelFormat("sched", "sched_switch", *text + " "));
  std::string changed = *text;
  changed[changed.find("prev_pid")] = 'P';
  EXPECT_FALSE(IsRunningKernelFormat("sched", "sched_switch", changed));
  EXPECT_FALSE(IsRunningKernelFormat("sched", "sched_wakeup", *text));  // another event's
  EXPECT_FALSE(IsRunningKernelFormat("sched", "no_such_event_here", *text));
}

// The names come from a file: one that would leave the events folder is no match.
TEST(RunningEventFormats, NamesThatAreNotEventNamesNeverMatch) {
  const std::optional<std::string> text = ReadWholeFile(kSwitchFormat);
  if (!text) GTEST_SKIP() << "cannot read " << kSwitchFormat << " (no tracefs, or not root)";
  EXPECT_FALSE(IsRunningKernelFormat("../events/sched", "sched_switch", *text));
  EXPECT_FALSE(IsRunningKernelFormat("sched", "../sched/sched_switch", *text));
  EXPECT_FALSE(IsRunningKernelFormat("", "sched_switch", *text));
  EXPECT_FALSE(IsRunningKernelFormat("sched", "", *text));
}

}  // namespace
}  // namespace cstool
