// `cstool record --flight` (the flight recorder) and `--max-size`, for real
// on this kernel: each test records a workload and checks the files with
// `cstool report --format json`. Skips (with the reason) when tracefs cannot be used.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/errors.h"
#include "kernel/proc_threads.h"
#include "tests/support/files.h"
#include "tests/support/recording_fixture.h"
#include "tests/support/report_json.h"
#include "tests/support/run_command.h"
#include "tracefs/tracefs_session.h"

namespace cstool {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::CstoolInstances;
using testing::OrphanedCstoolInstances;
using testing::RunCommand;
using testing::ThreadNamed;
const std::string kCstool = CSTOOL_BINARY;
const std::string kWorkload = std::string(CSTOOL_WORKLOAD_DIR) + "/cstool_workload";

class FlightTest : public testing::RecordingFixture {
 protected:
  FlightTest() : RecordingFixture("cstool-flight-test") {}

  static nlohmann::json ReportJson(const fs::path& file) {
    CommandResult r = RunCommand({kCstool, "report", file.string(), "--format", "json"});
    EXPECT_EQ(r.status, 0) << r.err;
    return nlohmann::json::parse(r.out, nullptr, false);
  }

  // The files in the test directory whose names start with `prefix`, sorted.
  std::vector<std::string> FilesStartingWith(const std::string& prefix) const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_))
      if (e.path().filename().string().rfind(prefix, 0) == 0)
        out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

  // Starts `cstool record ARGS` in the background; returns its pid once its tracefs
  // instance exists (tracing is being set up; SIGUSR1 is handled from before then).
  pid_t StartRecorder(const std::vector<std::string>& args) {
    pid_t pid = ::fork();
    if (pid == 0) {
      std::vector<std::string> argv = {kCstool, "record"};
      argv.insert(argv.end(), args.begin(), args.end());
      std::vector<char*> cargs;
      for (auto& a : argv) cargs.push_back(a.data());
      cargs.push_back(nullptr);
      const std::string log = (dir_ / "recorder.log").string();
      if (FILE* f = std::freopen(log.c_str(), "w", stderr); f == nullptr) _exit(126);
      ::execv(cargs[0], cargs.data());
      _exit(127);
    }
    const std::string instance = "cstool-" + std::to_string(pid);
    for (;;) {
      std::vector<std::string> names = CstoolInstances();
      if (std::find(names.begin(), names.end(), instance) != names.end()) break;
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        ADD_FAILURE() << "the recorder ended before tracing: "
                      << testing::ReadWholeFile(dir_ / "recorder.log");
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return pid;
  }

  // Starts `cstool_workload bursty 2 MS` (two workers, the main thread in pthread_join)
  // and returns its pid once its three threads exist.
  static pid_t StartBursty(const std::string& ms) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::execl(kWorkload.c_str(), kWorkload.c_str(), "bursty", "2", ms.c_str(), nullptr);
      _exit(127);
    }
    const fs::path tasks = fs::path("/proc") / std::to_string(pid) / "task";
    for (int i = 0; pid > 0 && i < 500; ++i) {
      std::error_code ec;
      const auto n = std::distance(fs::directory_iterator(tasks, ec), fs::directory_iterator{});
      if (!ec && n >= 3) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return pid;
  }

  static int Wait(pid_t pid) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
};

// One stall (a thread asleep 200 ms between two 1.5 s busy phases) and a trigger on
// sleeps over 100 ms: exactly one dump, and its window holds the whole stall.
TEST_F(FlightTest, TriggerDumpsTheOneStall) {
  const fs::path out = dir_ / "f.dat";
  CommandResult r = RunCommand({kCstool, "record", "--flight", "1", "--trigger", "sleep>100ms",
                                "-o", out.string(), "--", kWorkload, "stall", "1500", "200"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(FilesStartingWith("f.dat"), std::vector<std::string>{"f.dat.1"}) << r.err;
  EXPECT_NE(r.err.find("flight recorder: 1 dump"), std::string::npos) << r.err;

  nlohmann::json report = ReportJson(dir_ / "f.dat.1");
  ASSERT_FALSE(report.is_discarded());
  const nlohmann::json& trace = report["trace"];
  ASSERT_TRUE(trace.contains("flight_dump")) << trace.dump();
  const int64_t start = trace["flight_dump"]["window_start_ts"];
  const int64_t end = trace["flight_dump"]["window_end_ts"];
  const int64_t asked = trace["flight_dump"]["trigger_ts"];
  EXPECT_EQ(asked - start, 1000000000);  // --flight's 1 s before the trigger
  EXPECT_GE(end, asked);                 // and what came after, until the dump
  // And the report is of the window: the records of its first pages from before are not.
  EXPECT_GE(trace["first_ts"].get<int64_t>(), start);
  EXPECT_LE(trace["duration_ns"].get<int64_t>(), end - start);
  EXPECT_NE(trace["flight_dump"]["trigger"].get<std::string>().find("sleep>100ms: tid "),
            std::string::npos);
  // The window is history given up, not lost events.
  EXPECT_EQ(trace["lost_events_total"], 0);
  bool names_window = false;
  for (const auto& note : trace["notes"])
    names_window |= note.get<std::string>().find("kept window starts at") != std::string::npos;
  EXPECT_TRUE(names_window) << trace["notes"].dump();

  const nlohmann::json* staller = ThreadNamed(report, "staller");
  ASSERT_NE(staller, nullptr) << report.dump();
  // The whole 200 ms sleep is in the window (nanosleep: interruptible sleep).
  EXPECT_GE((*staller)["microstates_ns"]["sleep"].get<int64_t>(), 200000000);
  // Its stretch of sleep is the whole 200 ms, not cut at the window's start.
  EXPECT_LT((*staller)["microstates_ns"]["sleep"].get<int64_t>(), 1000000000);
}

// The condition holding within a loop tick of the command's end (`stall 1 200`: the
// 200 ms sleep ends 1 ms before the exit) still dumps, once: the records the last tick
// had not fed the trigger are fed at the end (before, "no dump ... (nothing written)").
// With --dump-at-end the hit's dump is the end's: no second copy of the same window.
TEST_F(FlightTest, AConditionMetAsTheCommandEndsStillDumps) {
  for (const bool dump_at_end : {false, true}) {
    SCOPED_TRACE(dump_at_end);
    const std::string name = dump_at_end ? "ee.dat" : "e.dat";
    std::vector<std::string> args = {
        kCstool,     "record",      "--flight", "1",
        "--trigger", "sleep>100ms", "-o",       (dir_ / name).string()};
    if (dump_at_end) args.push_back("--dump-at-end");
    for (const char* a : {"--", kWorkload.c_str(), "stall", "1", "200"}) args.emplace_back(a);
    CommandResult r = RunCommand(args);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(FilesStartingWith(name), std::vector<std::string>{name + ".1"}) << r.err;
    EXPECT_NE(r.err.find("flight recorder: 1 dump"), std::string::npos) << r.err;
    nlohmann::json report = ReportJson(dir_ / (name + ".1"));
    ASSERT_FALSE(report.is_discarded());
    EXPECT_NE(
        report["trace"]["flight_dump"]["trigger"].get<std::string>().find("sleep>100ms: tid "),
        std::string::npos);
    const nlohmann::json* staller = ThreadNamed(report, "staller");
    ASSERT_NE(staller, nullptr) << report.dump();
    EXPECT_GE((*staller)["microstates_ns"]["sleep"].get<int64_t>(), 200000000);
  }
}

// A dump the machine's load delays still holds what asked for it: the window before the
// trigger's time, not before the dump's. Here the recorder is stopped from just after the
// command began (600 ms before its sleep ends: room for a loaded machine) until 2.5 s
// later (past the 1 s window), so it feeds the trigger only then. (A loaded CI run once
// dumped a window that had moved past its 200 ms sleep: the staller's row, no sleep.)
TEST_F(FlightTest, ADelayedDumpStillHoldsWhatAskedForIt) {
  const fs::path out = dir_ / "d.dat";
  const pid_t recorder = StartRecorder({"--flight", "1", "--trigger", "sleep>100ms", "-o",
                                        out.string(), "--", kWorkload, "stall", "1", "600"});
  ASSERT_GT(recorder, 0);
  // Until the command runs as "staller" (its sleep ends some 600 ms later).
  const std::string children = fmt::format("/proc/{}/task/{}/children", recorder, recorder);
  bool running = false;
  for (int i = 0; i < 5000 && !running; ++i) {
    std::istringstream pids(testing::ReadWholeFile(children));
    for (pid_t c = 0; pids >> c && !running;)
      running = testing::ReadWholeFile(fmt::format("/proc/{}/comm", c)) == "staller\n";
    if (!running) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(running) << testing::ReadWholeFile(dir_ / "recorder.log");
  ASSERT_EQ(::kill(recorder, SIGSTOP), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  ASSERT_EQ(::kill(recorder, SIGCONT), 0);
  ASSERT_EQ(Wait(recorder), 0) << testing::ReadWholeFile(dir_ / "recorder.log");
  ASSERT_EQ(FilesStartingWith("d.dat"), std::vector<std::string>{"d.dat.1"})
      << testing::ReadWholeFile(dir_ / "recorder.log");
  nlohmann::json report = ReportJson(dir_ / "d.dat.1");
  ASSERT_FALSE(report.is_discarded());
  const nlohmann::json& dump = report["trace"]["flight_dump"];
  const int64_t asked = dump["trigger_ts"];
  EXPECT_GT(dump["window_end_ts"].get<int64_t>() - asked, 1000000000)
      << "the dump came within the window of its trigger: the recorder was stopped too late";
  const nlohmann::json* staller = ThreadNamed(report, "staller");
  ASSERT_NE(staller, nullptr) << report.dump();
  EXPECT_GE((*staller)["microstates_ns"]["sleep"].get<int64_t>(), 600000000) << staller->dump();
}

// -p of a running process: its threads from before tracing (no fork in the trace says
// whose they are) are the trigger's too. bursty's workers sleep 19 ms between 1 ms runs,
// its main thread in pthread_join throughout (which holds once it is longer than the
// 0.5 s window): one of them fires `sleep>10ms` (before, none did: "no dump").
TEST_F(FlightTest, TriggerWatchesTheThreadsOfAnAttachedProcess) {
  const pid_t workload = StartBursty("4000");
  ASSERT_GT(workload, 0);
  const fs::path out = dir_ / "p.dat";
  CommandResult r =
      RunCommand({kCstool, "record", "--flight", "0.5", "--trigger", "sleep>10ms", "--max-dumps",
                  "1", "-N", "3", "-p", std::to_string(workload), "-o", out.string()});
  ::kill(workload, SIGKILL);
  ::waitpid(workload, nullptr, 0);
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(FilesStartingWith("p.dat"), std::vector<std::string>{"p.dat.1"}) << r.err;
  nlohmann::json report = ReportJson(dir_ / "p.dat.1");
  ASSERT_FALSE(report.is_discarded());
  const std::string trigger = report["trace"]["flight_dump"]["trigger"];
  std::smatch m;
  ASSERT_TRUE(std::regex_search(trigger, m, std::regex("^sleep>10ms: tid ([0-9]+) "))) << trigger;
  bool its_thread = false;
  for (const auto& t : report["threads"])
    its_thread |= t["tid"] == std::stoi(m[1].str()) && t["pid"] == workload;
  EXPECT_TRUE(its_thread) << trigger << "\n" << report["threads"].dump();
}

// -p of a process whose main thread was asleep in pthread_join (a futex) before tracing
// began and stays so: the trigger starts it in that state, as the report does, and fires
// while the sleep goes on, once it is longer than the window (it never ends: before, no
// dump).
TEST_F(FlightTest, TriggerFiresForASleepGoingOnSinceBeforeTheAttach) {
  const pid_t workload = StartBursty("6000");
  ASSERT_GT(workload, 0);
  const fs::path out = dir_ / "s.dat";
  CommandResult r = RunCommand({kCstool, "record", "--flight", "0.5", "--trigger",
                                "sleep:futex>300ms", "--max-dumps", "1", "-N", "3", "-p",
                                std::to_string(workload), "-o", out.string()});
  ::kill(workload, SIGKILL);
  ::waitpid(workload, nullptr, 0);
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(FilesStartingWith("s.dat"), std::vector<std::string>{"s.dat.1"}) << r.err;
  nlohmann::json report = ReportJson(dir_ / "s.dat.1");
  ASSERT_FALSE(report.is_discarded());
  const std::string trigger = report["trace"]["flight_dump"]["trigger"];
  EXPECT_NE(trigger.find("sleep:futex>300ms: tid " + std::to_string(workload) + " "),
            std::string::npos)
      << trigger;
  EXPECT_NE(trigger.find(" ms so far, still at "), std::string::npos) << trigger;
}

// A dump of a -p process whose main thread sleeps in pthread_join throughout (bursty):
// no event of it is in the window, yet it has its row, asleep on the futex for the whole
// window, and every thread's lifetime is the window (they ended at the last event and
// began at their first, and the main thread was missing: "0.989 s", two rows).
TEST_F(FlightTest, ATargetThreadWithoutEventsInTheWindowHasItsRow) {
  const pid_t workload = StartBursty("6000");
  ASSERT_GT(workload, 0);
  const fs::path out = dir_ / "w.dat";
  pid_t recorder =
      StartRecorder({"--flight", "0.5", "-p", std::to_string(workload), "-o", out.string()});
  ASSERT_GT(recorder, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ASSERT_EQ(::kill(recorder, SIGUSR1), 0);
  for (int i = 0; i < 500 && FilesStartingWith("w.dat").empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ::kill(recorder, SIGINT);
  const int recorder_status = Wait(recorder);
  ::kill(workload, SIGKILL);
  ::waitpid(workload, nullptr, 0);
  ASSERT_EQ(recorder_status, 0) << testing::ReadWholeFile(dir_ / "recorder.log");
  ASSERT_EQ(FilesStartingWith("w.dat"), std::vector<std::string>{"w.dat.1"});

  nlohmann::json report = ReportJson(dir_ / "w.dat.1");
  ASSERT_FALSE(report.is_discarded());
  const nlohmann::json& trace = report["trace"];
  const int64_t start = trace["flight_dump"]["window_start_ts"];
  const int64_t end = trace["flight_dump"]["window_end_ts"];
  EXPECT_EQ(trace["flight_dump"]["trigger_ts"].get<int64_t>() - start, 500000000);
  EXPECT_EQ(trace["first_ts"].get<int64_t>(), start);
  EXPECT_EQ(trace["duration_ns"].get<int64_t>(), end - start);
  int rows = 0;
  for (const auto& t : report["threads"]) {
    if (t["pid"] != workload) continue;
    ++rows;
    EXPECT_EQ(t["lifetime_ns"].get<int64_t>(), end - start) << t.dump();
    if (t["tid"] == workload) {
      EXPECT_EQ(t["microstates_ns"]["sleep_futex"].get<int64_t>(), end - start) << t.dump();
    }
  }
  EXPECT_EQ(rows, 3) << report["threads"].dump();
}

// --dump-at-end: the window held when the command ends is written too (it was given up:
// "no dump (nothing written)"), and only then, with no trigger or signal.
TEST_F(FlightTest, DumpAtEndWritesTheLastWindow) {
  const fs::path out = dir_ / "e.dat";
  CommandResult r = RunCommand({kCstool, "record", "--flight", "0.5", "--dump-at-end", "-o",
                                out.string(), "--", kWorkload, "stall", "700", "0"});
  ASSERT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(FilesStartingWith("e.dat"), std::vector<std::string>{"e.dat.1"}) << r.err;
  EXPECT_NE(r.err.find("(end of the recording)"), std::string::npos) << r.err;
  nlohmann::json report = ReportJson(dir_ / "e.dat.1");
  ASSERT_FALSE(report.is_discarded());
  const nlohmann::json& dump = report["trace"]["flight_dump"];
  EXPECT_EQ(dump["trigger"], "end of the recording");
  EXPECT_EQ(dump["trigger_ts"].get<int64_t>() - dump["window_start_ts"].get<int64_t>(), 500000000);
  EXPECT_GE(dump["window_end_ts"].get<int64_t>(), dump["trigger_ts"].get<int64_t>());
  // The window ends after the command did: its exit is in it.
  const nlohmann::json* staller = ThreadNamed(report, "staller");
  ASSERT_NE(staller, nullptr) << report.dump();
  EXPECT_TRUE((*staller)["exited"].get<bool>()) << staller->dump();

  // Without it, nothing is written, and the status line says what takes a dump.
  CommandResult none = RunCommand(
      {kCstool, "record", "--flight", "0.5", "-o", (dir_ / "n.dat").string(), "--", "true"});
  ASSERT_EQ(none.status, 0) << none.err;
  EXPECT_EQ(FilesStartingWith("n.dat"), std::vector<std::string>{}) << none.err;
  EXPECT_NE(none.err.find("(nothing written: dumps are taken when --trigger holds, on `cstool "
                          "record --dump`, and at the end with --dump-at-end)"),
            std::string::npos)
      << none.err;

  // Without a flight recorder there is no window to dump.
  CommandResult usage = RunCommand(
      {kCstool, "record", "--dump-at-end", "-o", (dir_ / "u.dat").string(), "--", "true"});
  EXPECT_EQ(usage.status, 2) << usage.err;
  EXPECT_NE(usage.err.find("go with --flight"), std::string::npos) << usage.err;
}

// A process the command started before the window (no fork of it in the window) is the
// report's too: its threads' rows were missing, even when its thread was the trigger's;
// so is one that exited before the dump (`sleep`, ending inside the window). And the span
// is the window whole, whether or not the workload is alive at its end.
TEST_F(FlightTest, AProcessTheCommandStartedBeforeTheWindowIsReported) {
  const fs::path out = dir_ / "c.dat";
  CommandResult r =
      RunCommand({kCstool, "record", "--flight", "1", "--dump-at-end", "-N", "2", "-o",
                  out.string(), "--", "sh", "-c", kWorkload + " bursty 2 5000 & sleep 1.5; wait"});
  ASSERT_EQ(FilesStartingWith("c.dat"), std::vector<std::string>{"c.dat.1"}) << r.err;
  nlohmann::json report = ReportJson(dir_ / "c.dat.1");
  ASSERT_FALSE(report.is_discarded());
  const nlohmann::json& trace = report["trace"];
  EXPECT_EQ(trace["flight_dump"]["trigger_ts"].get<int64_t>() -
                trace["flight_dump"]["window_start_ts"].get<int64_t>(),
            1000000000);
  EXPECT_EQ(trace["duration_ns"].get<int64_t>(),
            trace["flight_dump"]["window_end_ts"].get<int64_t>() -
                trace["flight_dump"]["window_start_ts"].get<int64_t>());
  EXPECT_EQ(trace["target_pids"].size(), 3u) << trace["target_pids"].dump();
  const nlohmann::json* sh = ThreadNamed(report, "sh");
  const nlohmann::json* sleep = ThreadNamed(report, "sleep");
  ASSERT_NE(sh, nullptr) << report["threads"].dump();
  ASSERT_NE(sleep, nullptr) << report["threads"].dump();
  EXPECT_TRUE((*sleep)["exited"].get<bool>()) << sleep->dump();
  int workload_rows = 0;  // bursty: main and two workers, alive all along
  for (const auto& t : report["threads"])
    if (t["pid"] != (*sh)["pid"] && t["pid"] != (*sleep)["pid"]) {
      ++workload_rows;
      EXPECT_EQ(t["lifetime_ns"].get<int64_t>(), trace["duration_ns"].get<int64_t>()) << t.dump();
    }
  EXPECT_EQ(workload_rows, 3) << report["threads"].dump();
}

// A -p target's processes are the dump's too: one it started after tracing began (followed:
// its fork was before the window) has its rows, as a command's does; one it had already
// started (not followed without --children) has none, nor is it a target.
TEST_F(FlightTest, AProcessAnAttachedTargetStartedIsReported) {
  const fs::path go = dir_ / "go";
  const std::string script = fmt::format(
      "{0} bursty 2 8000 & while [ ! -e {1} ]; do sleep 0.02; done; {0} bursty 2 8000 & wait",
      kWorkload, go.string());
  const pid_t sh = ::fork();
  if (sh == 0) {
    ::execl("/bin/sh", "sh", "-c", script.c_str(), nullptr);
    _exit(127);
  }
  ASSERT_GT(sh, 0);
  auto bursty_children = [sh] {
    std::vector<int> out;
    for (int pid : DescendantsOf(sh))
      if (testing::ReadWholeFile(fs::path("/proc") / std::to_string(pid) / "comm") ==
          "cstool_workload\n")
        out.push_back(pid);
    return out;
  };
  for (int i = 0; i < 500 && bursty_children().empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const std::vector<int> before = bursty_children();
  ASSERT_EQ(before.size(), 1u);
  const fs::path out = dir_ / "a.dat";
  pid_t recorder = StartRecorder(
      {"--flight", "0.5", "--dump-at-end", "-p", std::to_string(sh), "-o", out.string()});
  ASSERT_GT(recorder, 0);
  ASSERT_TRUE(testing::WaitUntilFollowing(recorder, sh))
      << testing::ReadWholeFile(dir_ / "recorder.log");
  { std::ofstream(go.string()) << ""; }
  for (int i = 0; i < 500 && bursty_children().size() < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::vector<int> after = bursty_children();
  ASSERT_EQ(after.size(), 2u);
  const int later = after[0] == before[0] ? after[1] : after[0];
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // its fork: before the window
  ::kill(recorder, SIGINT);
  const int recorder_status = Wait(recorder);
  for (int pid : after) ::kill(pid, SIGKILL);
  ::kill(sh, SIGKILL);
  ::waitpid(sh, nullptr, 0);
  ASSERT_EQ(recorder_status, 0) << testing::ReadWholeFile(dir_ / "recorder.log");
  ASSERT_EQ(FilesStartingWith("a.dat"), std::vector<std::string>{"a.dat.1"});

  nlohmann::json report = ReportJson(dir_ / "a.dat.1");
  ASSERT_FALSE(report.is_discarded());
  const nlohmann::json& trace = report["trace"];
  const std::vector<int> targets = trace["target_pids"].get<std::vector<int>>();
  EXPECT_NE(std::find(targets.begin(), targets.end(), later), targets.end()) << trace.dump();
  EXPECT_EQ(std::find(targets.begin(), targets.end(), before[0]), targets.end()) << trace.dump();
  EXPECT_EQ(trace["flight_dump"]["trigger_ts"].get<int64_t>() -
                trace["flight_dump"]["window_start_ts"].get<int64_t>(),
            500000000);
  int later_rows = 0, before_rows = 0;
  for (const auto& t : report["threads"]) {
    if (t["pid"] == later) {
      ++later_rows;  // the whole window
      EXPECT_EQ(t["lifetime_ns"].get<int64_t>(), trace["duration_ns"].get<int64_t>()) << t.dump();
    }
    before_rows += t["pid"] == before[0];
  }
  EXPECT_EQ(later_rows, 3) << report["threads"].dump();
  EXPECT_EQ(before_rows, 0) << report["threads"].dump();
}

// --max-dumps ends the recording as -N does: the command gets SIGTERM, and the summary
// says so (it said nothing, and cstool's 143 was a puzzle); the exit status is
// timeout(1)'s.
TEST_F(FlightTest, MaxDumpsEndsTheCommandAndSaysSo) {
  const fs::path out = dir_ / "m.dat";
  CommandResult r =
      RunCommand({kCstool, "record", "--flight", "0.3", "--trigger", "sleep>10ms", "--max-dumps",
                  "1", "-o", out.string(), "--", kWorkload, "bursty", "2", "5000"});
  EXPECT_EQ(r.status, 124) << r.err;
  EXPECT_EQ(FilesStartingWith("m.dat"), std::vector<std::string>{"m.dat.1"}) << r.err;
  EXPECT_NE(r.err.find("the command was still running at the end: sent SIGTERM"), std::string::npos)
      << r.err;
}

// SIGUSR1 to the recorder dumps the window, and the recording goes on.
TEST_F(FlightTest, Sigusr1Dumps) {
  const fs::path out = dir_ / "s.dat";
  pid_t pid =
      StartRecorder({"--flight", "1", "-o", out.string(), "--", kWorkload, "stall", "1000", "0"});
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGUSR1), 0);
  EXPECT_EQ(Wait(pid), 0) << testing::ReadWholeFile(dir_ / "recorder.log");
  EXPECT_EQ(FilesStartingWith("s.dat"), std::vector<std::string>{"s.dat.1"})
      << testing::ReadWholeFile(dir_ / "recorder.log");
  nlohmann::json report = ReportJson(dir_ / "s.dat.1");
  ASSERT_FALSE(report.is_discarded());
  EXPECT_EQ(report["trace"]["flight_dump"]["trigger"], "SIGUSR1 (record --dump)");
  EXPECT_EQ(report["trace"]["lost_events_total"], 0);
}

// `record --dump` from another shell finds the running flight recorder and dumps.
TEST_F(FlightTest, DumpCommandDumps) {
  const fs::path out = dir_ / "d.dat";
  pid_t pid =
      StartRecorder({"--flight", "1", "-o", out.string(), "--", kWorkload, "stall", "1000", "0"});
  ASSERT_GT(pid, 0);
  CommandResult dump = RunCommand({kCstool, "record", "--dump", std::to_string(pid)});
  EXPECT_EQ(dump.status, 0) << dump.err;
  EXPECT_NE(dump.err.find("cstool pid " + std::to_string(pid)), std::string::npos) << dump.err;
  EXPECT_EQ(Wait(pid), 0) << testing::ReadWholeFile(dir_ / "recorder.log");
  EXPECT_EQ(FilesStartingWith("d.dat"), std::vector<std::string>{"d.dat.1"});
  nlohmann::json report = ReportJson(dir_ / "d.dat.1");
  ASSERT_FALSE(report.is_discarded());
  EXPECT_TRUE(report["trace"].contains("flight_dump"));
}

// Waits (up to a minute) until the recorder `pid` has said what its window's buffers
// grow to and each CPU it named has reached that size. How long the grow takes is the
// machine's (each step allocates pages, and a loaded host starves the recorder), so a
// test of what a grown window holds waits for it instead of sleeping a fixed time.
bool WaitForGrownWindow(pid_t pid, const fs::path& log_path) {
  static const std::regex kGrow(R"(CPU (\d+) \d+ -> (\d+) KiB)");
  const fs::path per_cpu =
      testing::kTracefsInstances / ("cstool-" + std::to_string(pid)) / "per_cpu";
  for (int i = 0; i < 6000; ++i) {
    const std::string log = testing::ReadWholeFile(log_path);
    bool named = false, grown = true;
    for (std::sregex_iterator m(log.begin(), log.end(), kGrow), end; m != end; ++m) {
      named = true;
      const std::string size =
          testing::ReadWholeFile(per_cpu / ("cpu" + (*m)[1].str()) / "buffer_size_kb");
      if (size.empty() || std::stoull(size) < std::stoull((*m)[2].str())) grown = false;
    }
    if (named && grown) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// The window lives in the kernel's ring buffers in overwrite mode. Started at 64 KiB
// per CPU under a ping-pong, they grow until --flight's 0.3 s fit; a dump once they have
// grown and had the time to fill holds the whole 0.3 s, and the older events the kernel
// overwrote meanwhile are history, not lost events.
TEST_F(FlightTest, OverwrittenHistoryIsNotLost) {
  const fs::path out = dir_ / "o.dat";
  pid_t pid = StartRecorder({"--flight", "0.3", "-b", "64", "--max-dumps", "1", "-o", out.string(),
                             "--", kWorkload, "pingpong", "100000000"});
  ASSERT_GT(pid, 0);
  const bool grown = WaitForGrownWindow(pid, dir_ / "recorder.log");
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  ASSERT_EQ(::kill(pid, SIGUSR1), 0);
  EXPECT_EQ(Wait(pid), 124);  // --max-dumps ended the ping-pong (timeout(1)'s status)
  EXPECT_TRUE(grown) << testing::ReadWholeFile(dir_ / "recorder.log");
  const std::string log = testing::ReadWholeFile(dir_ / "recorder.log");
  EXPECT_NE(log.find("flight window buffers growing to hold 0.3 s: CPU "), std::string::npos)
      << log;
  EXPECT_NE(log.find("older events overwritten"), std::string::npos) << log;
  ASSERT_EQ(FilesStartingWith("o.dat"), std::vector<std::string>{"o.dat.1"}) << log;

  nlohmann::json report = ReportJson(dir_ / "o.dat.1");
  ASSERT_FALSE(report.is_discarded());
  const nlohmann::json& trace = report["trace"];
  EXPECT_EQ(trace["lost_events_total"], 0) << log;
  // The grown buffers hold a whole window. (Where it starts against the signal depends on
  // how long the dump took: the kernel overwrites on meanwhile, at a ping-pong's rate.)
  const int64_t start = trace["flight_dump"]["window_start_ts"];
  EXPECT_GE(trace["flight_dump"]["window_end_ts"].get<int64_t>() - start, 300000000) << log;
  // Both ping-pong threads ran through the whole window.
  int busy = 0;
  for (const auto& t : report["threads"])
    if (t.value("comm", "") == "cstool_workload" && t["switches"]["voluntary"].get<int>() > 1000)
      ++busy;
  EXPECT_EQ(busy, 2) << report["threads"].dump();
}

// A flight recorder killed outright leaves its window's and its trigger's instances;
// the next recording removes both.
TEST_F(FlightTest, KilledFlightRecorderInstancesAreReaped) {
  const fs::path out = dir_ / "k.dat";
  pid_t pid = StartRecorder({"--flight", "1", "--trigger", "sleep>10s", "-o", out.string(), "--",
                             kWorkload, "stall", "300", "0"});
  ASSERT_GT(pid, 0);
  const std::string trigger_instance = "cstool-" + std::to_string(pid) + "-trigger";
  // Set-up order: the window's instance is configured (tracing off), then the trigger's
  // is created and configured; tracing goes on in the window's last. A new instance
  // starts with tracing on, so only the window's tracing_on after the trigger's instance
  // exists says that both are configured.
  const fs::path window_dir = testing::kTracefsInstances / ("cstool-" + std::to_string(pid));
  const fs::path trigger_dir = testing::kTracefsInstances / trigger_instance;
  bool ready = false;
  for (int i = 0; i < 2000 && !ready; ++i) {
    std::error_code ec;
    ready =
        fs::exists(trigger_dir, ec) && testing::ReadWholeFile(window_dir / "tracing_on") == "1\n";
    if (ready) break;
    int status = 0;
    ASSERT_NE(::waitpid(pid, &status, WNOHANG), pid)
        << "the recorder ended: " << testing::ReadWholeFile(dir_ / "recorder.log");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(ready) << testing::ReadWholeFile(dir_ / "recorder.log");
  // 'sleep>10s' is decided by the scheduler events: the trigger records no others.
  const std::string events = testing::ReadWholeFile(trigger_dir / "set_event");
  EXPECT_EQ(testing::ReadWholeFile(trigger_dir / "tracing_on"), "1\n");
  EXPECT_NE(events.find("sched:sched_switch"), std::string::npos) << events;
  EXPECT_EQ(events.find("raw_syscalls"), std::string::npos) << events;
  EXPECT_EQ(events.find("irq:"), std::string::npos) << events;
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  EXPECT_EQ(Wait(pid), 128 + SIGKILL);
  CommandResult r =
      RunCommand({kCstool, "record", "-o", (dir_ / "next.dat").string(), "--", "true"});
  EXPECT_EQ(r.status, 0) << r.err;
  for (const std::string& name : CstoolInstances())
    EXPECT_NE(name.rfind("cstool-" + std::to_string(pid), 0), 0u) << name;
  // The command, orphaned by the kill, ends on its own (stall 300 0: 0.6 s).
}

// --max-size: the recording stops cleanly with a file no bigger, which reads and says
// it ends early.
TEST_F(FlightTest, MaxSizeStopsCleanly) {
  const fs::path out = dir_ / "m.dat";
  // 1 MiB on two CPUs; the room kept for each CPU's last pages (64 KiB) grows with more.
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  const uint64_t limit_kib = 1024 + 64 * static_cast<uint64_t>(std::max(cpus - 2, 0L));
  const uint64_t kLimit = limit_kib * 1024;
  CommandResult r = RunCommand({kCstool, "record", "--max-size", std::to_string(limit_kib) + "K",
                                "-o", out.string(), "--", kWorkload, "pingpong", "2000000"});
  EXPECT_NE(r.err.find("the recording stopped early: --max-size "), std::string::npos) << r.err;
  // "Reached" of a file that comes out well below the limit says what the limit counted.
  EXPECT_NE(r.err.find("(the room it leaves for events after the header and the "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(" kept for the recording's end, which the file uses only as far as it "),
            std::string::npos)
      << r.err;
  ASSERT_TRUE(fs::exists(out)) << r.err;
  EXPECT_LE(fs::file_size(out), kLimit);
  EXPECT_EQ(FilesStartingWith("m.dat"), std::vector<std::string>{"m.dat"});
  nlohmann::json report = ReportJson(out);
  ASSERT_FALSE(report.is_discarded());
  const std::string ended = report["trace"].value("ended_early", "");
  EXPECT_NE(ended.find("--max-size"), std::string::npos);
  EXPECT_GT(report["trace"]["events"].get<uint64_t>(), 0u);
  // The report ends where every CPU's events are still in the file (the quiet CPU's last
  // page, read at the stop, is written from the stop reserve or cuts the rest).
  double complete_s = 0, recorded_s = 0;
  const size_t at = ended.find("for the first ");
  ASSERT_NE(at, std::string::npos) << ended;
  ASSERT_EQ(
      std::sscanf(ended.c_str() + at, "for the first %lf s of %lf s", &complete_s, &recorded_s), 2)
      << ended;
  EXPECT_LE(complete_s, recorded_s);
  // Its kernel counters, taken at the end, cover more than the file: nothing is checked.
  CommandResult check = RunCommand({kCstool, "report", out.string(), "--check"});
  EXPECT_EQ(check.status, 1) << check.out << check.err;
  EXPECT_NE(check.out.find("kernel check: NOT CHECKED"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("the recording ended early"), std::string::npos) << check.out;
}

// A --max-size that leaves no room for events is refused before the command runs (it
// recorded nothing and killed the command).
TEST_F(FlightTest, MaxSizeWithoutRoomForEventsIsRefused) {
  const fs::path out = dir_ / "small.dat";
  const fs::path ran = dir_ / "ran";
  CommandResult r = RunCommand(
      {kCstool, "record", "--max-size", "100K", "-o", out.string(), "--", "touch", ran.string()});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("cstool record: --max-size 100.0 KiB leaves no room for events"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(": the recording needs "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("; give at least "), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(ran));
  EXPECT_TRUE(FilesStartingWith("small.dat").empty());
  for (const std::string& name : CstoolInstances()) ADD_FAILURE() << "left " << name;
}

}  // namespace
}  // namespace cstool
