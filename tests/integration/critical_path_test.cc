// A real wakeup chain with known answers (cstool_workload chain): chain-a wakes chain-b
// through a pipe, chain-b wakes chain-c through a futex, chain-c spins 20 ms and wakes
// chain-b, which wakes chain-a. The critical path of chain-a names chain-b and chain-c
// and its segments sum to chain-a's wall time; chain-a's "woken by" names chain-b with
// the time it slept in read.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/run_command.h"

namespace cstool::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int64_t kSpinNs = 20'000'000;

class CriticalPathTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!TracefsUnavailableReason().empty()) return;
    dir_ = fs::temp_directory_path() / ("cstool_chain_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    file_ = (dir_ / "chain.dat").string();
    CommandResult rec =
        RunCommand({CSTOOL_BINARY, "record", "-o", file_, "--",
                    std::string(CSTOOL_WORKLOAD_DIR) + "/cstool_workload", "chain", "1", "20"});
    ASSERT_EQ(rec.status, 0) << rec.err;
    CommandResult rep = RunCommand({CSTOOL_BINARY, "report", file_, "--format", "json"});
    ASSERT_EQ(rep.status, 0) << rep.err;
    report_ = json::parse(rep.out);
  }
  static void TearDownTestSuite() {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  void SetUp() override {
    std::string why = TracefsUnavailableReason();
    if (!why.empty()) GTEST_SKIP() << "skipping tracefs test: " << why;
    ASSERT_TRUE(report_.is_object()) << "recording failed";
  }
  static const json& Thread(const std::string& comm) {
    for (const json& t : report_.at("threads"))
      if (t.at("comm") == comm) return t;
    throw std::runtime_error("no thread " + comm);
  }
  static int64_t Tid(const std::string& comm) { return Thread(comm).at("tid"); }

  static inline fs::path dir_;
  static inline std::string file_;
  static inline json report_;
};

TEST_F(CriticalPathTest, ThePathOfAThroughBAndCExplainsItsWallTime) {
  const json& a = Thread("chain-a");
  CommandResult r = RunCommand({CSTOOL_BINARY, "report", file_, "--format", "json",
                                "--critical-path", std::to_string(Tid("chain-a"))});
  ASSERT_EQ(r.status, 0) << r.err;
  const json path = json::parse(r.out).at("critical_path");
  EXPECT_EQ(path.at("tid"), a.at("tid"));
  const int64_t wall = a.at("lifetime_ns");
  int64_t sum = 0;
  std::map<std::string, int64_t> by_comm;
  for (const json& s : path.at("segments")) {
    sum += s.at("dur_ns").get<int64_t>();
    by_comm[s.at("comm")] += s.at("dur_ns").get<int64_t>();
  }
  const int64_t tolerance = std::max<int64_t>(200'000, wall / 100);
  EXPECT_NEAR(sum, wall, tolerance) << r.out;
  EXPECT_NEAR(path.at("wall_ns").get<int64_t>(), wall, tolerance);
  ASSERT_TRUE(by_comm.count("chain-b")) << r.out;
  ASSERT_TRUE(by_comm.count("chain-c")) << r.out;
  // The path gives chain-b's futex sleep to chain-c, which ended it: chain-c's first run
  // on the path is exactly that sleep. (chain-c can come back later for a few us: the
  // main thread's join may wait for its exit.)
  const json& b = Thread("chain-b");
  int64_t b_slept_for_c = 0;
  for (const json& w : b.at("woken_by"))
    if (w.contains("tid") && w.at("tid") == Tid("chain-c"))
      b_slept_for_c += w.at("blocked_ns").get<int64_t>();
  int64_t c_run = 0;
  int64_t b_preempted = 0;
  bool c_seen = false;
  for (const json& s : path.at("segments")) {
    const bool is_c = s.at("comm") == "chain-c";
    if (c_seen && !is_c) break;
    c_seen = c_seen || is_c;
    if (is_c) c_run += s.at("dur_ns").get<int64_t>();
    if (s.at("comm") == "chain-b" && s.at("state") == "wait_cpu_preempted")
      b_preempted += s.at("dur_ns").get<int64_t>();
  }
  EXPECT_EQ(c_run, b_slept_for_c) << r.out;
  // chain-c's 20-ms spin is on the path whole (on a CPU, or preempted while spinning:
  // the spin is timed, so a busy machine turns part of it into wait). Where chain-b was
  // preempted after waking chain-c and before it slept (a busy CPU 0), the spin's start
  // runs beside chain-b's wait, and that wait is the path's.
  EXPECT_GE(c_run + b_preempted, kSpinNs - tolerance) << r.out;
  // The per-thread totals are the segments' sums.
  int64_t totals = 0;
  for (const json& t : path.at("threads")) totals += t.at("time_ns").get<int64_t>();
  EXPECT_EQ(totals, sum);
}

TEST_F(CriticalPathTest, AIsWokenByBWithTheTimeItSleptInRead) {
  const json& a = Thread("chain-a");
  const int64_t b_tid = Tid("chain-b");
  const json* by_b = nullptr;
  for (const json& w : a.at("woken_by"))
    if (w.contains("tid") && w.at("tid") == b_tid) by_b = &w;
  ASSERT_NE(by_b, nullptr) << a.dump(2);
  EXPECT_EQ(by_b->at("wakeups"), 1);
  // The round trip's sleep: at least chain-c's spin, and all of chain-a's sleep in read
  // (the other sleep, the 5-ms usleep, ends by a timer).
  const int64_t blocked = by_b->at("blocked_ns");
  EXPECT_GE(blocked, kSpinNs);
  EXPECT_LE(blocked, a.at("microstates_ns").at("sleep").get<int64_t>());
  // chain-b was woken by chain-a (pipe) and by chain-c (futex).
  const json& b = Thread("chain-b");
  std::map<int64_t, int64_t> b_wakers;
  for (const json& w : b.at("woken_by"))
    if (w.contains("tid")) b_wakers[w.at("tid")] += w.at("wakeups").get<int64_t>();
  EXPECT_EQ(b_wakers[Tid("chain-a")], 1) << b.dump(2);
  EXPECT_EQ(b_wakers[Tid("chain-c")], 1) << b.dump(2);
  // The parts of the wait sum to the wait_cpu microstates.
  const json& m = a.at("microstates_ns");
  const json& w = a.at("wait_cpu_ns");
  EXPECT_EQ(w.at("wakeup").get<int64_t>() + w.at("preempted").get<int64_t>() +
                w.at("before_migration").get<int64_t>(),
            m.at("wait_cpu_wakeup").get<int64_t>() + m.at("wait_cpu_preempted").get<int64_t>());
}

// The timeline gets the path as a track of its own.
TEST_F(CriticalPathTest, TheTimelineShowsThePath) {
  const fs::path timeline = dir_ / "t.json";
  CommandResult r = RunCommand({CSTOOL_BINARY, "report", file_, "--critical-path",
                                std::to_string(Tid("chain-a")), "--timeline", timeline.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("CRITICAL PATH of"), std::string::npos) << r.out;
  std::ifstream in(timeline);
  const json doc = json::parse(in);
  constexpr int64_t kPathPid = 1'000'000'000 - 1;  // TimelineObserver::kPathPid
  size_t slices = 0;
  for (const json& e : doc.at("traceEvents"))
    if (e.at("ph") == "X" && e.at("pid") == kPathPid) ++slices;
  EXPECT_GE(slices, 5u);
}

// An interval outside the thread's life is a usage error that names the life, not an
// empty path (--from past its end) or a complaint about a --from not given (--to before
// its start).
TEST_F(CriticalPathTest, AnIntervalOutsideTheThreadsLifeSaysWhere) {
  const std::string tid = std::to_string(Tid("chain-a"));
  CommandResult late =
      RunCommand({CSTOOL_BINARY, "report", file_, "--critical-path", tid, "--from", "1000"});
  EXPECT_EQ(late.status, 2) << late.out;
  EXPECT_NE(late.err.find("--critical-path " + tid +
                          ": --from 1000.000000 s is not before the thread's last event at "),
            std::string::npos)
      << late.err;
  EXPECT_EQ(late.out, "");
  CommandResult early =
      RunCommand({CSTOOL_BINARY, "report", file_, "--critical-path", tid, "--to", "0.000001"});
  EXPECT_EQ(early.status, 2) << early.out;
  EXPECT_NE(early.err.find("--critical-path " + tid +
                           ": --to 0.000001 s is not after the thread's first event at "),
            std::string::npos)
      << early.err;
}

}  // namespace
}  // namespace cstool::testing
