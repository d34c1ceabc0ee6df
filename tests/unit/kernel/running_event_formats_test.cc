#include "kernel/running_event_formats.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "base/read_file.h"

namespace cstool {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSwitch = "name: sched_switch\nID: 372\nformat:\n\tfield:int x;\n";

// A folder laid out as tracefs serves formats, with sched:sched_switch's.
class RunningEventFormatsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(root_ / "events/sched/sched_switch");
    std::ofstream(root_ / "events/sched/sched_switch/format") << kSwitch;
  }
  void TearDown() override { fs::remove_all(root_); }

  bool Matches(std::string_view system, std::string_view name, std::string_view text) {
    return IsRunningKernelFormat(system, name, text, root_.string());
  }

  fs::path root_ = fs::temp_directory_path() / ("cstool-formats-" + std::to_string(::getpid()));
};

TEST_F(RunningEventFormatsTest, OnlyTheSameBytesMatch) {
  EXPECT_TRUE(Matches("sched", "sched_switch", kSwitch));
  EXPECT_FALSE(Matches("sched", "sched_switch", std::string(kSwitch) + " "));
  std::string changed = kSwitch;
  changed[changed.find("int x")] = 'u';
  EXPECT_FALSE(Matches("sched", "sched_switch", changed));
  EXPECT_FALSE(Matches("sched", "sched_switch", ""));
  EXPECT_FALSE(Matches("sched", "sched_wakeup", kSwitch));  // no such file there
}

// The names come from a file: one that would leave the events folder is no match, even
// where the path it makes holds the same text.
TEST_F(RunningEventFormatsTest, NamesThatAreNotEventNamesNeverMatch) {
  fs::create_directories(root_ / "x");
  std::ofstream(root_ / "x/format") << kSwitch;
  EXPECT_FALSE(Matches("..", "x", kSwitch));  // events/../x/format exists
  EXPECT_FALSE(Matches("sched/../..", "x", kSwitch));
  EXPECT_FALSE(Matches("sched", "../../x", kSwitch));
  EXPECT_FALSE(Matches("", "sched_switch", kSwitch));
  EXPECT_FALSE(Matches("sched", "", kSwitch));
}

// This machine's tracefs, where it can be read: its own text matches itself.
TEST(RunningEventFormats, TheRunningKernelsOwnTextMatches) {
  const std::string path = std::string(kTracefsRoot) + "/events/sched/sched_switch/format";
  const std::optional<std::string> text = ReadWholeFile(path);
  if (!text) GTEST_SKIP() << "cannot read " << path << " (no tracefs, or not root)";
  EXPECT_TRUE(IsRunningKernelFormat("sched", "sched_switch", *text));
  EXPECT_FALSE(IsRunningKernelFormat("sched", "sched_switch", *text + " "));
}

}  // namespace
}  // namespace cstool
