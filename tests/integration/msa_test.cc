// `cstool msa` for real: attach to a workload with known phases and check the
// interval numbers against the phases and against the kernel's own switch counters.
// Skips (with the reason) only when tracefs cannot be used (not root, no tracefs).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "kernel/proc_threads.h"
#include "model/microstate.h"
#include "tests/support/files.h"
#include "tests/support/run_command.h"

namespace cstool {
namespace {

using testing::OrphanedCstoolInstances;
namespace fs = std::filesystem;
using nlohmann::json;
const std::string kCstool = CSTOOL_BINARY;
const std::string kWorkload = std::string(CSTOOL_WORKLOAD_DIR) + "/cstool_workload";

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Starts the workload with stdout/stderr discarded and returns once it runs the
// workload binary (not the forked test process any more).
pid_t StartWorkload(const std::vector<std::string>& args) {
  pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> argv{const_cast<char*>(kWorkload.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(126);
  }
  while (ReadFirstLine("/proc/" + std::to_string(pid) + "/comm") != "cstool_workload")
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return pid;
}

struct Counters {
  uint64_t nvcsw = 0;
  uint64_t nivcsw = 0;
};

std::vector<json> JsonLines(const std::string& text) {
  std::vector<json> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

// The microstate with the largest share of a row, leaving out the two waits for a
// CPU: how long a runnable thread waits depends on what else the (shared, 2-CPU)
// machine runs, not on the workload's phase.
std::string Dominant(const json& row) {
  std::string best;
  double best_share = -1;
  for (auto& [key, v] : row["shares"].items()) {
    if (key == "wait_cpu_wakeup" || key == "wait_cpu_preempted") continue;
    if (v.get<double>() > best_share) {
      best_share = v.get<double>();
      best = key;
    }
  }
  return best;
}

const json* RowOf(const json& frame, int tid) {
  for (const json& r : frame["threads"])
    if (r["tid"] == tid) return &r;
  return nullptr;
}

std::map<int, Counters> KernelSnapshot(const json& k) {
  std::map<int, Counters> out;
  for (const json& t : k["threads"])
    out[t["tid"].get<int>()] = {t["nvcsw"].get<uint64_t>(), t["nivcsw"].get<uint64_t>()};
  return out;
}

class MsaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason = testing::TracefsUnavailableReason();
    if (!reason.empty()) GTEST_SKIP() << reason;
  }
  void TearDown() override {
    if (workload_ > 0) {
      ::kill(workload_, SIGKILL);
      ::waitpid(workload_, nullptr, 0);
    }
    if (!IsSkipped()) {
      EXPECT_EQ(OrphanedCstoolInstances(), std::vector<std::string>{});
    }
  }
  // Reaps the workload; returns its rusage.
  rusage Reap() {
    int status = 0;
    rusage ru{};
    ::wait4(workload_, &status, 0, &ru);
    workload_ = -1;
    return ru;
  }
  pid_t workload_ = -1;
};

TEST_F(MsaTest, FollowsPhasesAndMatchesKernelCounters) {
  workload_ = StartWorkload({"phases", "1500"});
  const auto before = ReadContextSwitches(workload_);
  ASSERT_TRUE(before);
  testing::CommandResult r = testing::RunCommand(
      {kCstool, "msa", std::to_string(workload_), "-T", "0.5", "-n", "5", "--format", "json"});
  const auto after = ReadContextSwitches(workload_);  // nullopt if it exited meanwhile
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<json> frames = JsonLines(r.out);
  ASSERT_FALSE(frames.empty()) << r.err;

  std::vector<json> intervals;
  const json* total = nullptr;
  for (const json& f : frames) {
    if (f["type"] == "interval") intervals.push_back(f);
    if (f["type"] == "total") total = &f;
  }
  ASSERT_FALSE(intervals.empty());
  ASSERT_TRUE(intervals.front().contains("kernel_attach"));

  // Every row's shares add up to 100 (2-decimal rounding of 14 values).
  for (const json& f : intervals) {
    for (const json& row : f["threads"]) {
      if (row["accounted_ns"] == 0) continue;
      double sum = 0;
      for (auto& [k, v] : row["shares"].items()) sum += v.get<double>();
      EXPECT_NEAR(sum, 100.0, 0.5) << row.dump();
    }
  }

  // Phases: the main thread sleeps first (usleep(1000) loop), then spins in user mode.
  const json* first = RowOf(intervals.front(), workload_);
  ASSERT_NE(first, nullptr) << intervals.front().dump();
  const std::string early = Dominant(*first);
  EXPECT_TRUE(early == "sleep" || early == "sleep_futex" || early == "sleep_poll")
      << intervals.front().dump();
  // The last interval that lies wholly in the CPU-bound phase: the last complete one.
  const json& last =
      intervals.size() >= 2 && total ? intervals[intervals.size() - 2] : intervals.back();
  const json* late = RowOf(last, workload_);
  ASSERT_NE(late, nullptr) << last.dump();
  EXPECT_EQ(Dominant(*late), "user") << last.dump();

  // Switch counts. The window of the kernel counters is exact: msa reads them at
  // attach and at the end of the last interval and places each snapshot at a trace
  // time on whose sides it counts switches (see commands/msa_command.h), so per thread the sum of
  // VCX/ICX over the intervals equals the difference of the two snapshots.
  std::map<int, Counters> traced;
  for (const json& f : intervals)
    for (const json& row : f["threads"]) {
      traced[row["tid"].get<int>()].nvcsw += row["switches"]["voluntary"].get<uint64_t>();
      traced[row["tid"].get<int>()].nivcsw += row["switches"]["involuntary"].get<uint64_t>();
    }
  const json& attach = intervals.front()["kernel_attach"];
  ASSERT_TRUE(attach["exact"].get<bool>()) << attach.dump();
  std::map<int, Counters> k0 = KernelSnapshot(attach);
  ASSERT_EQ(k0.count(workload_), 1u);
  // Our own reads bracket msa's.
  EXPECT_LE(before->voluntary, k0[workload_].nvcsw);
  EXPECT_LE(before->involuntary, k0[workload_].nivcsw);

  if (intervals.back().contains("kernel_end")) {
    ASSERT_EQ(intervals.size(), 5u);
    EXPECT_EQ(total, nullptr) << "-n runs print no totals";
    const json& end = intervals.back()["kernel_end"];
    ASSERT_TRUE(end["exact"].get<bool>()) << end.dump();
    std::map<int, Counters> k1 = KernelSnapshot(end);
    for (const auto& [tid, c1] : k1) {
      Counters c0 = k0.count(tid) ? k0[tid] : Counters{};  // a new thread starts at 0
      EXPECT_EQ(traced[tid].nvcsw, c1.nvcsw - c0.nvcsw) << "voluntary, tid " << tid;
      EXPECT_EQ(traced[tid].nivcsw, c1.nivcsw - c0.nivcsw) << "involuntary, tid " << tid;
    }
    if (after) {
      EXPECT_LE(k1[workload_].nvcsw, after->voluntary);
      EXPECT_LE(k1[workload_].nivcsw, after->involuntary);
    }
    EXPECT_GT(traced[workload_].nvcsw, 0u) << "the sleep phase switches voluntarily";
  } else {
    // The machine was too slow to attach early: the workload exited before the fifth
    // interval. Then msa printed the totals, and the kernel's final numbers come from
    // wait4(): the one final switch of the exiting thread may or may not be counted
    // there when the parent reaps it (it happens after the parent can be woken), so
    // the traced totals may be one short.
    ASSERT_NE(total, nullptr) << r.out;
    EXPECT_EQ((*total)["end_reason"], "exited");
    rusage ru = Reap();
    uint64_t v = 0, iv = 0;
    for (const json& row : (*total)["threads"]) {
      v += row["switches"]["voluntary"].get<uint64_t>();
      iv += row["switches"]["involuntary"].get<uint64_t>();
    }
    const uint64_t dv = static_cast<uint64_t>(ru.ru_nvcsw) - k0[workload_].nvcsw;
    const uint64_t div = static_cast<uint64_t>(ru.ru_nivcsw) - k0[workload_].nivcsw;
    EXPECT_TRUE(v == dv || v + 1 == dv) << v << " vs " << dv;
    EXPECT_EQ(iv, div);
  }
}

TEST_F(MsaTest, EndsWhenTheProcessExitsAndPrintsTotals) {
  workload_ = StartWorkload({"phases", "200"});
  testing::CommandResult r = testing::RunCommand(
      {kCstool, "msa", std::to_string(workload_), "-T", "0.1", "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("exited"), std::string::npos) << r.err;
  std::vector<json> frames = JsonLines(r.out);
  ASSERT_FALSE(frames.empty());
  const json& total = frames.back();
  EXPECT_EQ(total["type"], "total");
  EXPECT_EQ(total["end_reason"], "exited");
  const json* row = RowOf(total, workload_);
  ASSERT_NE(row, nullptr) << total.dump();
  EXPECT_GT((*row)["microstates_ns"]["user"].get<int64_t>(), 0);
  EXPECT_GT((*row)["switches"]["voluntary"].get<uint64_t>(), 0u);
}

TEST_F(MsaTest, TableOnAPipeAndProcessRows) {
  workload_ = StartWorkload({"phases", "1000"});
  testing::CommandResult r = testing::RunCommand(
      {kCstool, "msa", std::to_string(workload_), "-T", "0.2", "-n", "2", "-A"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.find("\033["), std::string::npos) << "no escapes when piped";
  EXPECT_NE(r.out.find("interval 1 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("interval 2 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NLWP"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cstool_workload"), std::string::npos) << r.out;
}

// A shell asleep in wait over two sleeping children: msa alone shows the shell's row and
// names --children; with it, each process of the tree has its row (asleep), and the
// kernel's counters at attach cover all of their threads.
TEST_F(MsaTest, ChildrenTakesTheExistingDescendants) {
  workload_ =
      testing::Spawn({"/bin/sh", "-c", "sleep 5 & sleep 5 & wait"}, "/dev/null", "/dev/null");
  for (int i = 0; i < 500 && DescendantsOf(workload_).size() < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const std::vector<int> sleeps = DescendantsOf(workload_);
  ASSERT_EQ(sleeps.size(), 2u);
  auto msa = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = {
        kCstool, "msa", std::to_string(workload_), "-T", "200ms", "-n", "1", "--format", "json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return testing::RunCommand(argv);
  };
  const testing::CommandResult alone = msa({});
  const testing::CommandResult tree = msa({"--children"});
  for (int pid : sleeps) ::kill(pid, SIGKILL);

  ASSERT_EQ(alone.status, 0) << alone.err;
  EXPECT_NE(alone.err.find("add --children to include them"), std::string::npos) << alone.err;
  std::vector<json> frames = JsonLines(alone.out);
  ASSERT_EQ(frames.size(), 1u) << alone.out;
  EXPECT_EQ(frames[0]["threads"].size(), 1u) << alone.out;
  ASSERT_NE(RowOf(frames[0], workload_), nullptr) << alone.out;
  // -T takes a unit as -N does. The last interval ends where the kernel's counters were
  // read, just after its 200 ms.
  EXPECT_GE(frames[0]["duration_ns"].get<int64_t>(), 200'000'000) << alone.out;
  EXPECT_LT(frames[0]["duration_ns"].get<int64_t>(), 2'000'000'000) << alone.out;

  ASSERT_EQ(tree.status, 0) << tree.err;
  EXPECT_EQ(tree.err.find("--children"), std::string::npos) << tree.err;
  frames = JsonLines(tree.out);
  ASSERT_EQ(frames.size(), 1u) << tree.out;
  EXPECT_EQ(frames[0]["threads"].size(), 3u) << tree.out;
  const std::map<int, Counters> attach = KernelSnapshot(frames[0]["kernel_attach"]);
  for (int pid : std::vector<int>{workload_, sleeps[0], sleeps[1]}) {
    const json* row = RowOf(frames[0], pid);
    ASSERT_NE(row, nullptr) << pid << " " << tree.out;
    EXPECT_EQ(Dominant(*row), "sleep") << row->dump();
    EXPECT_EQ(attach.count(pid), 1u) << frames[0]["kernel_attach"].dump();
  }
}

// msa -o saves the threads' states read at attach: the file's report starts in them, as
// msa did (it showed a process asleep throughout as unknown).
TEST_F(MsaTest, SavedTraceStartsInTheStatesMsaAttachedIn) {
  workload_ = testing::Spawn({"/bin/sleep", "5"}, "/dev/null", "/dev/null");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // asleep by now
  const fs::path file =
      fs::temp_directory_path() / ("cstool-msa-seeds-" + std::to_string(::getpid()) + ".dat");
  const testing::CommandResult msa =
      testing::RunCommand({kCstool, "msa", std::to_string(workload_), "-T", "0.2", "-n", "1",
                           "--format", "json", "-o", file.string()});
  ASSERT_EQ(msa.status, 0) << msa.err;
  const testing::CommandResult report =
      testing::RunCommand({kCstool, "report", file.string(), "--format", "json"});
  fs::remove(file);
  ASSERT_EQ(report.status, 0) << report.err;
  const json rep = json::parse(report.out);
  const json* row = nullptr;
  for (const json& t : rep["threads"])
    if (t["tid"] == workload_) row = &t;
  ASSERT_NE(row, nullptr) << report.out.substr(0, 2000);
  EXPECT_EQ((*row)["microstates_ns"]["unknown"].get<int64_t>(), 0) << row->dump();
  EXPECT_GT((*row)["microstates_ns"]["sleep"].get<int64_t>(), 150000000) << row->dump();
}

// msa -o treats the file there as record -o does: a file that is no recording (a database,
// a page) is refused before the attach and left as it was; a recording is kept as
// FILE.old. (msa wrote over either.)
TEST_F(MsaTest, OutputKeepsAnEarlierRecordingAndRefusesAnyOtherFile) {
  workload_ = testing::Spawn({"/bin/sleep", "5"}, "/dev/null", "/dev/null");
  const fs::path dir =
      fs::temp_directory_path() / ("cstool-msa-output-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto msa = [&](const fs::path& out) {
    return testing::RunCommand({kCstool, "msa", std::to_string(workload_), "-T", "0.1", "-n", "1",
                                "--format", "json", "-o", out.string()});
  };
  const fs::path other = dir / "fleet.db";
  std::ofstream(other) << "SQLite format 3";
  const testing::CommandResult refused = msa(other);
  EXPECT_EQ(refused.status, 2) << refused.err;
  EXPECT_NE(refused.err.find("no recording"), std::string::npos) << refused.err;
  EXPECT_EQ(testing::ReadWholeFile(other), "SQLite format 3");

  const fs::path trace = dir / "msa.dat";
  ASSERT_EQ(msa(trace).status, 0);
  const std::string first = testing::ReadWholeFile(trace);
  const testing::CommandResult again = msa(trace);
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_NE(again.err.find("kept as"), std::string::npos) << again.err;
  EXPECT_EQ(testing::ReadWholeFile(trace.string() + ".old"), first);
  EXPECT_NE(testing::ReadWholeFile(trace), first);
  fs::remove_all(dir);
}

// `msa PID | head`: once the reader went away nothing more can be shown, so msa stops
// tracing at its next frame (before, it traced on until the process exited, and said
// only then that it could not write), removes its instance and says why, exit status 1.
TEST_F(MsaTest, StopsWhenItsReaderGoesAway) {
  workload_ = StartWorkload({"nanosleep", "100000", "1000"});  // 100 s
  const fs::path err = fs::temp_directory_path() / ("cstool-msa-err-" + std::to_string(::getpid()));
  testing::CommandResult r =
      testing::RunCommand({"/bin/bash", "-c",
                           kCstool + " msa " + std::to_string(workload_) + " -T 0.05 2>" +
                               err.string() + " | head -c 1 >/dev/null; echo ${PIPESTATUS[0]}"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "1\n");
  EXPECT_EQ(::waitpid(workload_, nullptr, WNOHANG), 0) << "msa ran until the process exited";
  std::ifstream in(err);
  const std::string said((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::remove(err);
  EXPECT_NE(said.find("cannot write to standard output"), std::string::npos) << said;
  EXPECT_EQ(said.find("exited"), std::string::npos) << said;
}

TEST_F(MsaTest, NonexistentPidIsAUsageError) {
  pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  testing::CommandResult r = testing::RunCommand({kCstool, "msa", std::to_string(gone)});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no such process"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_F(MsaTest, SigtermEndsWithTotalsAndSavesAReportableTrace) {
  workload_ = StartWorkload({"nanosleep", "100000", "1000"});
  fs::path file = fs::temp_directory_path() / ("cstool-msa-test-" + std::to_string(::getpid()));
  fs::path out = file.string() + ".out";
  pid_t msa = ::fork();
  if (msa == 0) {
    FILE* f = std::freopen(out.c_str(), "w", stdout);
    (void)f;
    ::execl(kCstool.c_str(), kCstool.c_str(), "msa", std::to_string(workload_).c_str(), "-T", "0.1",
            "--format", "json", "-o", file.c_str(), static_cast<char*>(nullptr));
    ::_exit(126);
  }
  // Wait for the first interval, then stop msa like a service manager would.
  while (true) {
    std::ifstream in(out);
    std::string line;
    if (std::getline(in, line) && !line.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(msa, SIGTERM);
  int status = 0;
  ::waitpid(msa, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  std::vector<json> frames = JsonLines(ss.str());
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames.back()["type"], "total");
  EXPECT_EQ(frames.back()["end_reason"], "signal");

  testing::CommandResult report =
      testing::RunCommand({kCstool, "report", file.string(), "--format", "json"});
  ASSERT_EQ(report.status, 0) << report.err;
  json rep = json::parse(report.out);
  bool found = false;
  for (const json& t : rep["threads"]) found = found || t["tid"] == workload_;
  EXPECT_TRUE(found) << report.out.substr(0, 2000);
  fs::remove(file);
  fs::remove(out);
  for (int cpu = 0; cpu < 8; ++cpu)
    EXPECT_FALSE(fs::exists(file.string() + ".cpu" + std::to_string(cpu) + ".tmp"));
}

}  // namespace
}  // namespace cstool
