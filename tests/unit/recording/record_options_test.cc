#include "recording/record_options.h"

#include <gtest/gtest.h>

#include "base/errors.h"
#include "kernel/child_process.h"

namespace cstool {
namespace {

TEST(RecordOptions, DefaultsAreSensible) {
  RecordOptions o;
  EXPECT_EQ(o.output, "cstool.dat");
  EXPECT_EQ(o.buffer_kb, kDefaultBufferKb);
  EXPECT_FALSE(o.system_wide);
}

ExitCode CodeOf(const RecordOptions& o) {
  try {
    ValidateRecordOptions(o);
  } catch (const Error& e) {
    return e.code();
  }
  return ExitCode::kOk;
}

TEST(RecordOptions, NeedsSomethingToRecord) {
  RecordOptions o;
  EXPECT_EQ(CodeOf(o), ExitCode::kUsage);
  o.system_wide = true;
  EXPECT_EQ(CodeOf(o), ExitCode::kOk);
  o.system_wide = false;
  o.command = {"true"};
  EXPECT_EQ(CodeOf(o), ExitCode::kOk);
  o.command.clear();
  o.pids = {1};
  EXPECT_EQ(CodeOf(o), ExitCode::kOk);
}

TEST(RecordOptions, ChildrenGoWithAttach) {
  RecordOptions o;
  o.command = {"true"};
  o.children = true;
  EXPECT_EQ(CodeOf(o), ExitCode::kUsage);
  o.command.clear();
  o.pids = {1};
  EXPECT_EQ(CodeOf(o), ExitCode::kOk);
}

TEST(RecordOptions, RejectsBadValues) {
  RecordOptions o;
  o.system_wide = true;
  o.buffer_kb = 0;
  EXPECT_EQ(CodeOf(o), ExitCode::kUsage);
  o.buffer_kb = 16;
  o.duration_s = -1;
  EXPECT_EQ(CodeOf(o), ExitCode::kUsage);
  o.duration_s = 0.5;
  o.pids = {0};
  EXPECT_EQ(CodeOf(o), ExitCode::kUsage);
  o.pids = {};
  o.output = "";
  EXPECT_EQ(CodeOf(o), ExitCode::kUsage);
  o.output = "x.dat";
  o.no_defaults = true;  // needs -e events
  EXPECT_EQ(CodeOf(o), ExitCode::kUsage);
  o.events = {"sched:sched_switch"};
  EXPECT_EQ(CodeOf(o), ExitCode::kOk);
}

// A flight recorder's dumps carry no counters: counting or sampling into them is refused
// (counted, they were read and never written).
TEST(RecordOptions, CountersGoWithANormalRecording) {
  RecordOptions o;
  o.command = {"true"};
  o.counters = "page-faults:ebs=100,task-clock";
  EXPECT_EQ(CodeOf(o), ExitCode::kOk);
  o.flight_s = 5;
  EXPECT_EQ(CodeOf(o), ExitCode::kUsage);
  o.counters = "page-faults,task-clock";
  EXPECT_EQ(CodeOf(o), ExitCode::kUsage);
  o.counters.clear();
  o.virtual_counters = "read-bytes";
  EXPECT_EQ(CodeOf(o), ExitCode::kUsage);
  o.virtual_counters.clear();
  EXPECT_EQ(CodeOf(o), ExitCode::kOk);
}

TEST(ResolveCommand, FindsCommandsLikeAShell) {
  EXPECT_EQ(ResolveCommand("/bin/sh"), "/bin/sh");
  EXPECT_FALSE(ResolveCommand("sh").empty());
  for (const char* missing : {"cstool-no-such-command-xyz", "/nonexistent/cmd", ""}) {
    try {
      ResolveCommand(missing);
      ADD_FAILURE() << "resolved '" << missing << "'";
    } catch (const Error& e) {
      EXPECT_EQ(static_cast<int>(e.code()), kCommandNotFoundExit);
    }
  }
}

}  // namespace
}  // namespace cstool
