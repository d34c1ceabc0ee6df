// `cstool diff` on real recordings: three runs of 50 x nanosleep(1 ms) against three of
// 50 x nanosleep(2 ms). The sleep microstate of the sleeping thread must be the top
// finding, flagged significant, its change about +50 ms; the run-to-run noise of the
// other rows must not be flagged merely for being there.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/run_command.h"

namespace cstool::testing {
namespace {

const std::string kWorkload = std::string(CSTOOL_WORKLOAD_DIR) + "/cstool_workload";
constexpr double kMs = 1e6;

class DiffRecordings : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const std::string& f : files_) std::remove(f.c_str());
  }
  // Records `cstool_workload nanosleep 50 US` and returns the file.
  std::string RecordSleeps(long us) {
    const std::string file = "/tmp/cstool_diff_" + std::to_string(getpid()) + "_" +
                             std::to_string(files_.size()) + ".dat";
    files_.push_back(file);
    CommandResult rec = RunCommand({CSTOOL_BINARY, "record", "-o", file, "--", kWorkload,
                                    "nanosleep", "50", std::to_string(us)});
    EXPECT_EQ(rec.status, 0) << rec.err;
    return file;
  }
  std::vector<std::string> files_;
};

// This process's timer slack, which the recorded workload inherits.
double TimerSlackNs() {
  std::ifstream in("/proc/self/timerslack_ns");
  double ns = 50'000;  // the kernel's default
  in >> ns;
  return ns;
}

TEST_F(DiffRecordings, LongerSleepsAreTheTopFinding) {
  std::string why = TracefsUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << "skipping tracefs test: " << why;
  std::vector<std::string> args = {CSTOOL_BINARY, "diff", "--format", "json"};
  for (int i = 0; i < 3; ++i) args.push_back(RecordSleeps(1000));
  args.push_back("--");
  for (int i = 0; i < 3; ++i) args.push_back(RecordSleeps(2000));
  CommandResult r = RunCommand(args);
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["changes"].empty());
  const nlohmann::json& top = j["changes"][0];
  EXPECT_EQ(top["level"], "thread") << top.dump(2);
  EXPECT_EQ(top["subject"], "cstool_workload (main)") << top.dump(2);
  EXPECT_EQ(top["kind"], "microstate") << top.dump(2);
  EXPECT_EQ(top["name"], "sleep") << top.dump(2);
  EXPECT_EQ(top["significant"], true) << top.dump(2);
  // 50 more ms of requested sleep. On top, each sleep ends anywhere within its timer's
  // slack (the kernel coalesces timers that far): the two sides' 50 sleeps each may land
  // differently in it, by up to 50 slacks, beside the runs' own spreads (the timer
  // interrupt's latency on a busy machine). Measured: 1 ms sleeps overshot by 73 us,
  // 2 ms ones by 88 us, on a haltpoll VM whose idle CPUs wake late.
  const nlohmann::json& time = top["measures"]["time_ns"];
  const double change = time["change"].get<double>();
  const double spreads = time["base"]["max"].get<double>() - time["base"]["min"].get<double>() +
                         time["new"]["max"].get<double>() - time["new"]["min"].get<double>();
  EXPECT_LE(std::fabs(change - 50 * kMs), spreads + 50 * TimerSlackNs()) << time.dump(2);
  EXPECT_EQ(time["base"]["runs"], 3);
  EXPECT_EQ(time["new"]["runs"], 3);
  // The thread is matched in all six recordings, nothing is on one side only.
  ASSERT_EQ(j["threads"]["matched"].size(), 1u) << j["threads"].dump(2);
  EXPECT_TRUE(j["threads"]["base_only"].empty());
  EXPECT_TRUE(j["threads"]["new_only"].empty());
  // The switch cause counts the sleeps: 50 on each side, so no change there.
  for (const auto& row : j["changes"])
    if (row["level"] == "thread" && row["kind"] == "switch_cause" &&
        row["name"] == "sleep:clock_nanosleep") {
      EXPECT_EQ(row["measures"]["count"]["base"]["mean"], 50.0) << row.dump(2);
      EXPECT_EQ(row["change"], 0.0) << row.dump(2);
      EXPECT_EQ(row["significant"], false) << row.dump(2);
    }
  // The table leads with the same row, flagged.
  args.erase(args.begin() + 2, args.begin() + 4);  // --format json
  CommandResult table = RunCommand(args);
  ASSERT_EQ(table.status, 0) << table.err;
  const std::string head =
      "MICROSTATES BY THREAD (time in ms, then its share in % of the thread's lifetime)\n";
  const size_t at = table.out.find(head);
  ASSERT_NE(at, std::string::npos) << table.out;
  const size_t row = table.out.find('\n', at + head.size()) + 1;  // after the column header
  EXPECT_EQ(table.out.substr(row, 2), "* ") << table.out;
  EXPECT_NE(table.out.find("cstool_workload (main)", row), std::string::npos);
}

// Recordings of different programs share no thread: the diff says why it compares
// nothing; recordings of one program do not get that warning.
TEST_F(DiffRecordings, DifferentCommandsAreToldTheyShareNothing) {
  std::string why = TracefsUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << "skipping tracefs test: " << why;
  const std::string sleeps = RecordSleeps(100);
  const std::string other = "/tmp/cstool_diff_" + std::to_string(getpid()) + "_true.dat";
  files_.push_back(other);
  CommandResult rec = RunCommand({CSTOOL_BINARY, "record", "-o", other, "--", "true"});
  ASSERT_EQ(rec.status, 0) << rec.err;
  CommandResult apart = RunCommand({CSTOOL_BINARY, "diff", sleeps, "--", other});
  EXPECT_EQ(apart.status, 0) << apart.err;
  EXPECT_NE(apart.err.find("cstool diff: warning: no thread or process is on both sides"),
            std::string::npos)
      << apart.err;
  CommandResult same = RunCommand({CSTOOL_BINARY, "diff", sleeps, "--", sleeps});
  EXPECT_EQ(same.status, 0) << same.err;
  EXPECT_EQ(same.err.find("on both sides"), std::string::npos) << same.err;
}

// A recording cut short holds part of its run: beside a whole one, its times read as a
// change; the diff says so, naming why.
TEST_F(DiffRecordings, ARecordingCutShortIsSaidToHoldPartOfItsRun) {
  std::string why = TracefsUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << "skipping tracefs test: " << why;
  const std::string whole = RecordSleeps(100);
  const std::string cut = "/tmp/cstool_diff_" + std::to_string(getpid()) + "_cut.dat";
  files_.push_back(cut);
  CommandResult rec = RunCommand({CSTOOL_BINARY, "record", "--max-size", "2M", "-o", cut, "--",
                                  kWorkload, "pingpong", "2000000"});
  ASSERT_EQ(rec.status, 124) << rec.err;  // stopped by --max-size
  CommandResult d = RunCommand({CSTOOL_BINARY, "diff", whole, "--", cut});
  EXPECT_EQ(d.status, 0) << d.err;
  EXPECT_NE(d.err.find("cstool diff: warning: " + cut +
                       " (new) holds only part of its run (cut short: --max-size 2.0 MiB "
                       "reached): its times and counts differ"),
            std::string::npos)
      << d.err;
  EXPECT_EQ(d.err.find(whole + " (base) holds only part"), std::string::npos) << d.err;
  // Two whole runs: nothing said.
  CommandResult w = RunCommand({CSTOOL_BINARY, "diff", whole, "--", whole});
  EXPECT_EQ(w.err.find("holds only part"), std::string::npos) << w.err;
}

// One side recorded without the syscall and interrupt events: its zero syscall times
// would read as a change; the diff says the files were recorded differently.
TEST_F(DiffRecordings, SidesRecordedWithDifferentEventsAreSaid) {
  std::string why = TracefsUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << "skipping tracefs test: " << why;
  const std::string full = "/tmp/cstool_diff_" + std::to_string(getpid()) + "_full.dat";
  const std::string sched = "/tmp/cstool_diff_" + std::to_string(getpid()) + "_sched.dat";
  files_.push_back(full);
  files_.push_back(sched);
  ASSERT_EQ(RunCommand({CSTOOL_BINARY, "record", "-o", full, "--", "true"}).status, 0);
  ASSERT_EQ(RunCommand({CSTOOL_BINARY, "record", "--no-defaults", "-e", "sched", "-o", sched, "--",
                        "true"})
                .status,
            0);
  CommandResult apart = RunCommand({CSTOOL_BINARY, "diff", full, "--", sched});
  EXPECT_EQ(apart.status, 0) << apart.err;
  EXPECT_NE(apart.err.find(full + " (base) and " + sched +
                           " (new) were recorded with different events (" + full + " lacks none; " +
                           sched + " lacks "),
            std::string::npos)
      << apart.err;
  EXPECT_NE(apart.err.find("raw_syscalls:sys_enter"), std::string::npos) << apart.err;
}

}  // namespace
}  // namespace cstool::testing
