// `cstool record` for real, on this kernel: every test runs the binary, then checks the
// file with the real `trace-cmd report` and the RecordingInfo stored in the file.
// Tests skip (with the reason) only when tracefs cannot be used (not root, no tracefs).
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/errors.h"
#include "decode/decode_trace.h"
#include "format/trace_file_format.h"
#include "format/trace_file_reader.h"
#include "kernel/kallsyms.h"
#include "model/recording_info.h"
#include "model/syscall_table.h"
#include "pipeline/analyze_trace.h"
#include "tests/support/child_faults.h"
#include "tests/support/files.h"
#include "tests/support/kernel_agreement.h"
#include "tests/support/recording_fixture.h"
#include "tests/support/report_json.h"
#include "tests/support/run_command.h"
#include "tracefs/tracefs_session.h"

namespace cstool {
namespace {

using testing::kTracefsInstances;
using testing::OrphanedCstoolInstances;
using testing::ReadWholeFile;
namespace fs = std::filesystem;
using testing::Spawn;
using testing::WaitUntilFollowing;
const std::string kCstool = CSTOOL_BINARY;
const std::string kWorkload = std::string(CSTOOL_WORKLOAD_DIR) + "/cstool_workload";

struct Result {
  int status = -1;  // exit code, or 128 + signal
  std::string out;
  std::string err;
};

int DecodeStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// The processes that have `pid` as their parent.
std::vector<pid_t> ChildrenOf(pid_t pid) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    const size_t paren = stat.rfind(')');
    if (paren != std::string::npos && paren + 4 < stat.size() &&
        std::atoi(stat.c_str() + paren + 4) == pid)
      out.push_back(std::stoi(name));
  }
  return out;
}

class RecordTest : public testing::RecordingFixture {
 protected:
  RecordTest() : RecordingFixture("cstool-record-test") {}

  Result Run(const std::vector<std::string>& argv) {
    static int n = 0;
    fs::path out = dir_ / ("run" + std::to_string(++n) + ".out");
    fs::path err = dir_ / ("run" + std::to_string(n) + ".err");
    pid_t pid = Spawn(argv, out, err);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return {DecodeStatus(status), ReadWholeFile(out), ReadWholeFile(err)};
  }

  Result Record(std::vector<std::string> args) {
    args.insert(args.begin(), {kCstool, "record"});
    return Run(args);
  }

  Result Report(const fs::path& file) { return Run({TraceCmd(), "report", "-i", file.string()}); }

  static std::string TraceCmd() {
    for (const char* p : {"/usr/bin/trace-cmd", "/usr/local/bin/trace-cmd"})
      if (::access(p, X_OK) == 0) return p;
    return "/usr/bin/trace-cmd";
  }

  static RecordingInfo Info(const fs::path& file) {
    auto info = OpenTraceFile(file.string())->recording_info();
    if (!info) throw std::runtime_error("no RecordingInfo in " + file.string());
    return *info;
  }

  static uint64_t TotalEvents(const RecordingInfo& info) {
    uint64_t n = 0;
    for (const auto& c : info.cpus) n += c.events;
    return n;
  }

  struct Line {
    std::string comm;
    int pid;
    std::string event;
  };
  // Event lines of `trace-cmd report` (not the "cpus=" header nor "CPU:N [.. DROPPED]").
  static std::vector<Line> EventLines(const std::string& report) {
    static const std::regex re(R"(^\s*(.*)-(\d+)\s+\[\d+\]\s+\d+\.\d+:\s+(\w+):)");
    std::vector<Line> lines;
    std::istringstream in(report);
    for (std::string l; std::getline(in, l);) {
      std::smatch m;
      if (std::regex_search(l, m, re)) lines.push_back({m[1], std::stoi(m[2]), m[3]});
    }
    return lines;
  }
  // The increments in the unfiltered run-time buffer, decoded on their own: all of them,
  // and those done in another task's context than the accounted one's.
  struct UnfilteredIncrements : EventSink {
    uint64_t all = 0, other_context = 0;
    std::set<int> contexts;  // the tasks current where they were written
    void PushSchedStatRuntime(const SchedStatRuntime& e) override {
      ++all;
      other_context += e.c.pid != e.pid ? 1 : 0;
      contexts.insert(e.c.pid);
    }
    // And the wakelist flushes recorded beside them (csd_function_entry).
    uint64_t flushes = 0;
    std::set<uint64_t> functions;
    void PushCsdFunctionEntry(const CsdFunctionEntry& e, int /*type_id*/) override {
      ++flushes;
      functions.insert(e.func);
      contexts.insert(e.c.pid);
    }
  };
  static UnfilteredIncrements UnfilteredRuntime(const fs::path& file) {
    auto reader =
        OpenTraceFile(file.string(), {.buffer = std::string(tracefile::kUnfilteredRuntimeBuffer)});
    UnfilteredIncrements sink;
    DecodeTrace(*reader, sink);
    return sink;
  }
};

TEST_F(RecordTest, ExitStatusIsTheChilds) {
  fs::path out = dir_ / "exit.dat";
  Result r = Record({"-o", out, "--", "/bin/sh", "-c", "exit 7"});
  EXPECT_EQ(r.status, 7) << r.err;
  EXPECT_TRUE(fs::exists(out));
  RecordingInfo info = Info(out);
  EXPECT_TRUE(info.child.reaped);
  EXPECT_EQ(WEXITSTATUS(info.child.wait_status), 7);
  EXPECT_NE(r.err.find("cstool record: the command exited with status 7\n"), std::string::npos)
      << r.err;

  r = Record({"-o", out, "--", "/bin/sh", "-c", "kill -TERM $$"});
  EXPECT_EQ(r.status, 128 + SIGTERM) << r.err;
  EXPECT_NE(r.err.find("cstool record: the command was ended by signal 15 (Terminated)\n"),
            std::string::npos)
      << r.err;

  r = Record({"-o", out, "--", "/bin/true"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("the command"), std::string::npos) << r.err;
}

// The command is found on PATH before the fork: its one execve() is the trace's, not one
// per directory tried before the one that has it (execvp() in the child: `record -- sleep
// 1` showed execve 10, nine failing, in the program's syscall table). A file with no #!
// line still runs as a shell script, as execvp() runs it.
TEST_F(RecordTest, TheCommandsPathSearchIsNotInItsSyscalls) {
  const fs::path out = dir_ / "path.dat";
  Result r = Run({"/usr/bin/env", "PATH=/nonexistent-a:/nonexistent-b:/usr/bin:/bin", kCstool,
                  "record", "-o", out.string(), "--", "true"});
  ASSERT_EQ(r.status, 0) << r.err;
  Result json = Run({kCstool, "report", out.string(), "--format", "json"});
  ASSERT_EQ(json.status, 0) << json.err;
  const nlohmann::json report = nlohmann::json::parse(json.out);
  const nlohmann::json* run = testing::ThreadNamed(report, "true");
  ASSERT_NE(run, nullptr) << json.out;
  EXPECT_EQ(run->at("syscalls").at("execve").at("calls").get<uint64_t>(), 1u) << run->dump();

  const fs::path script = dir_ / "no-shebang";
  std::ofstream(script) << "echo \"from the script: $1\"\n";
  fs::permissions(script, fs::perms::owner_all);
  r = Record({"-o", (dir_ / "script.dat").string(), "--", script.string(), "an-argument"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "from the script: an-argument\n");
}

// A second recording under the same name keeps the first as NAME.old (it was silently
// overwritten), as perf record does. Not a device: the file is renamed over the output,
// and `-o /dev/null` made /dev/null a regular file (it is refused).
TEST_F(RecordTest, ARecordingAlreadyThereIsKeptAsOld) {
  const fs::path out = dir_ / "same.dat";
  Result r = Record({"-o", out, "--", "/bin/sh", "-c", "exit 3"});
  ASSERT_EQ(r.status, 3) << r.err;
  EXPECT_FALSE(fs::exists(out.string() + ".old"));
  r = Record({"-o", out, "--", "/bin/true"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("the previous " + out.string() + " is kept as " + out.string() + ".old"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(WEXITSTATUS(Info(out.string() + ".old").child.wait_status), 3);
  EXPECT_EQ(WEXITSTATUS(Info(out).child.wait_status), 0);

  r = Record({"-o", "/dev/null", "--", "/bin/true"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("output '/dev/null' is not a regular file"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  EXPECT_FALSE(fs::exists("/dev/null.old"));
}

// Only recordings are moved aside: a mistyped `-o main.c`, or a FILE.old that is no
// recording, is refused before the command runs, and both files stay as they were.
TEST_F(RecordTest, AFileThatIsNoRecordingIsNeitherMovedNorReplaced) {
  const fs::path source = dir_ / "main.c";
  { std::ofstream(source) << "int main() {}\n"; }
  const fs::path ran = dir_ / "ran";
  Result r = Record({"-o", source, "--", "/bin/touch", ran});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("-o " + source.string() +
                       ": that file exists and is no recording, so it stays as it is (only an "
                       "earlier recording is moved aside, to " +
                       source.string() + ".old)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(ReadWholeFile(source), "int main() {}\n");
  EXPECT_FALSE(fs::exists(source.string() + ".old"));
  EXPECT_FALSE(fs::exists(ran)) << "the command must not run";

  const fs::path out = dir_ / "kept.dat";
  ASSERT_EQ(Record({"-o", out, "--", "/bin/true"}).status, 0);
  { std::ofstream(out.string() + ".old") << "my backup\n"; }
  r = Record({"-o", out, "--", "/bin/touch", ran});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find(out.string() + ".old is no recording"), std::string::npos) << r.err;
  EXPECT_EQ(ReadWholeFile(out.string() + ".old"), "my backup\n");
  EXPECT_FALSE(fs::exists(ran));
  EXPECT_EQ(Report(out).status, 0);
}

TEST_F(RecordTest, TraceCmdReportShowsEveryRecordedEvent) {
  fs::path out = dir_ / "pp.dat";
  Result r = Record({"-o", out, "--", kWorkload, "pingpong", "2000"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("total"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("lost"), std::string::npos) << r.err;

  RecordingInfo info = Info(out);
  EXPECT_EQ(info.command.size(), 3u);
  EXPECT_GT(info.child.pid, 0);
  EXPECT_EQ(info.target_pids, std::vector<int32_t>{info.child.pid});
  EXPECT_TRUE(info.child.reaped);
  EXPECT_GE(info.child.exit_nvcsw, info.child.baseline_nvcsw);
  EXPECT_LT(info.start_ts, info.end_ts);
  EXPECT_FALSE(info.trace_clock.empty());
  EXPECT_FALSE(info.cpus.empty());

  Result rep = Report(out);
  ASSERT_EQ(rep.status, 0) << rep.err;
  EXPECT_EQ(rep.err, "");
  auto lines = EventLines(rep.out);
  EXPECT_EQ(lines.size(), TotalEvents(info));
  // Beside the pid-filtered trace, for cstool's readers: every task's run-time increments.
  const UnfilteredIncrements unfiltered = UnfilteredRuntime(out);
  EXPECT_GT(unfiltered.all, 0u) << "the recorder's own threads ran at least";
  Result json = Run({kCstool, "report", out.string(), "--format", "json"});
  ASSERT_EQ(json.status, 0) << json.err;
  const auto summary = nlohmann::json::parse(json.out)["trace"]["unfiltered_runtime"];
  EXPECT_EQ(summary["other_context_increments"], unfiltered.other_context);
  EXPECT_LE(summary["increments_used"], unfiltered.other_context);
  // Only sched_ttwu_pending's calls, where the kernel has the event and shows the address.
  const std::optional<uint64_t> wakelist = KernelSymbolAddress("sched_ttwu_pending");
  if (wakelist && TracefsSession::HasEvent({"csd", "csd_function_entry"})) {
    EXPECT_EQ(info.wakelist_function, *wakelist);
    for (uint64_t f : unfiltered.functions) EXPECT_EQ(f, *wakelist);
    const nlohmann::json flushes = nlohmann::json::parse(json.out)["trace"]["wakelist_flushes"];
    EXPECT_EQ(flushes["flushes"], unfiltered.flushes) << flushes.dump();
  } else {
    EXPECT_EQ(info.wakelist_function, 0u);
    EXPECT_EQ(unfiltered.flushes, 0u);
  }
  // Every CPU recorded: with nothing lost, every increment is in the file.
  EXPECT_EQ(summary["all_increments"], summary["lost_events"] == 0 && info.TotalLostEvents() == 0)
      << summary.dump();

  int workload_switches = 0;
  std::set<int> workload_tids;
  for (const auto& l : lines) {
    if (l.event == "sched_switch" && l.comm == "cstool_workload") ++workload_switches;
    if (l.comm == "cstool_workload") workload_tids.insert(l.pid);
  }
  EXPECT_GT(workload_switches, 0);
  EXPECT_EQ(workload_tids.size(), 2u) << "event-fork must follow the ping-pong thread";
  // The unfiltered buffer leaves out what the trace has: the followed tasks' contexts.
  for (int tid : workload_tids) EXPECT_EQ(unfiltered.contexts.count(tid), 0u) << tid;
  EXPECT_NE(rep.out.find("==> cstool_workload:"), std::string::npos);
  // The child's identity travels in the file.
  bool child_known = false;
  for (const auto& t : info.threads) child_known |= t.tid == info.child.pid && t.tgid == t.tid;
  EXPECT_TRUE(child_known);
}

// A file recorded on this kernel holds its formats byte for byte: a report parses them
// without the trial child, which cost a quarter of a small file's report. (A damaged
// format still gets one: BadFile.FormatThatCrashesLibtraceeventIsAnError.)
TEST_F(RecordTest, ReportOfAFileRecordedHereForksNoTrialParser) {
  const fs::path out = dir_ / "here.dat";
  Result r = Record({"-o", out, "--", kWorkload, "pingpong", "100"});
  ASSERT_EQ(r.status, 0) << r.err;
  SyscallTable syscalls;
  const long before = testing::ChildMinorFaults();
  auto here = AnalyzeTrace(out.string(), syscalls);
  EXPECT_EQ(testing::ChildMinorFaults(), before);
  EXPECT_GT(here->model.trace.events, 0u);
}

// --compress (the default: zstd) writes v7 with chunks compressed while recording: trace-cmd reads
// every event, cstool's reader and libtracecmd give the same report, and the kernel agrees.
TEST_F(RecordTest, CompressedRecordingIsV7ThatTraceCmdReads) {
  for (const char* algorithm : {"zstd", "zlib"}) {
    SCOPED_TRACE(algorithm);
    fs::path out = dir_ / fmt::format("pp-{}.dat", algorithm);
    Result r = Record(
        {fmt::format("--compress={}", algorithm), "-o", out, "--", kWorkload, "pingpong", "2000"});
    ASSERT_EQ(r.status, 0) << r.err;
    // (The host may steal the VM's CPUs while it records, a sixth of their time for long
    // spells on a busy day: the kernel counts that in no time; the trace holds it.)
    Result check = Run({kCstool, "report", out.string(), "--check", "--format", "json"});
    ASSERT_EQ(check.err, "");
    const nlohmann::json report = nlohmann::json::parse(check.out);
    EXPECT_EQ(report.at("check").at("compared").get<int>(), 2) << report.at("check").dump(2);
    testing::ExpectCheckPasses(report);
    auto reader = OpenTraceFile(out.string());
    EXPECT_EQ(reader->file_version(), 7);
    EXPECT_STREQ(reader->backend_name(), "fast-v7");
    RecordingInfo info = Info(out);
    EXPECT_EQ(info.cpus.size(), static_cast<size_t>(reader->cpus()));
    // 48 bytes per event uncompressed; the chunks are several times smaller.
    EXPECT_LT(fs::file_size(out) * 3, TotalEvents(info) * 48);
    if (std::string(algorithm) != "zstd") continue;  // Debian's libtracecmd has no zlib
    Result rep = Report(out);
    ASSERT_EQ(rep.status, 0) << rep.err;
    EXPECT_EQ(EventLines(rep.out).size(), TotalEvents(info));
    Result fast = Run({kCstool, "report", out.string(), "--format", "json", "--reader", "fast"});
    Result lib =
        Run({kCstool, "report", out.string(), "--format", "json", "--reader", "libtracecmd"});
    ASSERT_EQ(fast.status, 0) << fast.err;
    EXPECT_EQ(fast.out, lib.out);
  }
  // zstd is the default; none writes v6 with the raw pages.
  Result plain = Record({"-o", dir_ / "default.dat", "--", "/bin/true"});
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(OpenTraceFile((dir_ / "default.dat").string())->file_version(), 7);
  Result v6 = Record({"--compress=none", "-o", dir_ / "v6.dat", "--", "/bin/true"});
  ASSERT_EQ(v6.status, 0) << v6.err;
  EXPECT_STREQ(OpenTraceFile((dir_ / "v6.dat").string())->backend_name(), "fast-v6");
  Result bad = Record({"--compress=lzo", "-o", dir_ / "x.dat", "--", "/bin/true"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--compress takes zstd, zlib or none"), std::string::npos) << bad.err;
}

TEST_F(RecordTest, ConcurrentRecordingsSeeOnlyTheirOwnWorkload) {
  fs::path a = dir_ / "a.dat", b = dir_ / "b.dat";
  pid_t pa = Spawn({kCstool, "record", "-o", a, "--", kWorkload, "nanosleep", "300", "1000"},
                   dir_ / "a.out", dir_ / "a.err");
  pid_t pb = Spawn({kCstool, "record", "-o", b, "--", kWorkload, "yield", "3000"}, dir_ / "b.out",
                   dir_ / "b.err");
  int sa = 0, sb = 0;
  ::waitpid(pa, &sa, 0);
  ::waitpid(pb, &sb, 0);
  ASSERT_EQ(DecodeStatus(sa), 0) << ReadWholeFile(dir_ / "a.err");
  ASSERT_EQ(DecodeStatus(sb), 0) << ReadWholeFile(dir_ / "b.err");

  RecordingInfo ia = Info(a), ib = Info(b);
  ASSERT_NE(ia.child.pid, ib.child.pid);
  std::set<int> b_tids;
  for (const auto& t : ib.threads) b_tids.insert(t.tid);
  b_tids.insert(ib.child.pid);

  // Syscall events are recorded only for tasks in the pid filter.
  auto syscall_pids = [&](const fs::path& f) {
    std::set<int> pids;
    for (const auto& l : EventLines(Report(f).out))
      if (l.event == "sys_enter" || l.event == "sys_exit") pids.insert(l.pid);
    return pids;
  };
  std::set<int> pids_a = syscall_pids(a);
  EXPECT_EQ(pids_a, std::set<int>{ia.child.pid}) << "nanosleep is single-threaded";
  std::set<int> pids_b = syscall_pids(b);
  EXPECT_TRUE(pids_b.count(ib.child.pid));
  EXPECT_EQ(pids_b.size(), 3u) << "yield: main thread + two yielders";
  EXPECT_FALSE(pids_b.count(ia.child.pid));
  for (int p : pids_a) EXPECT_FALSE(b_tids.count(p));
}

// SIGINT (Ctrl-C sent with kill) and SIGHUP (a closed terminal, a dropped ssh session).
TEST_F(RecordTest, StopSignalsLeaveAReadableFileAndNoInstance) {
  for (int sig : {SIGINT, SIGHUP}) {
    SCOPED_TRACE(sig);
    fs::path out = dir_ / fmt::format("signal{}.dat", sig);
    pid_t pid = Spawn(
        {kCstool, "record", "-o", out, "-N", "30", "--", kWorkload, "nanosleep", "100000", "1000"},
        dir_ / "s.out", dir_ / "s.err");
    // Wait until the recording is live (the instance exists and the workload runs).
    fs::path instance = kTracefsInstances / ("cstool-" + std::to_string(pid));
    for (int i = 0; i < 500 && !fs::exists(instance); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(fs::exists(instance));
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const fs::path unfiltered = instance.string() + "-runtime";
    EXPECT_TRUE(fs::exists(unfiltered));
    ::kill(pid, sig);
    int status = 0;
    ::waitpid(pid, &status, 0);
    std::string err = ReadWholeFile(dir_ / "s.err");
    EXPECT_EQ(DecodeStatus(status), 128 + sig) << err;  // the child got the signal too
    EXPECT_FALSE(fs::exists(instance));
    EXPECT_FALSE(fs::exists(unfiltered));
    ASSERT_TRUE(fs::exists(out)) << err;
    Result rep = Report(out);
    EXPECT_EQ(rep.status, 0) << rep.err;
    RecordingInfo info = Info(out);
    EXPECT_EQ(EventLines(rep.out).size(), TotalEvents(info));
    EXPECT_GT(TotalEvents(info), 0u);
    EXPECT_TRUE(info.child.reaped);
    EXPECT_NE(::kill(info.child.pid, 0), 0) << "the workload must not outlive the recording";
  }
}

TEST_F(RecordTest, TinyBufferReportsLostEvents) {
  fs::path out = dir_ / "tiny.dat";
  Result r = Record({"-b", "4", "-o", out, "--", kWorkload, "pingpong", "20000"});
  ASSERT_EQ(r.status, 0) << r.err;
  RecordingInfo info = Info(out);
  uint64_t lost = 0;
  for (const auto& c : info.cpus) lost += c.lost_events + c.lost_pages + c.overrun + c.dropped;
  EXPECT_GT(lost, 0u) << r.err;
  EXPECT_NE(r.err.find("events were lost"), std::string::npos) << r.err;
  EXPECT_EQ(Report(out).status, 0);
  // --explain-anomalies lists each gap with the events it counts: they add up to the
  // ANOMALIES count (a listing of gaps beside a count of events read as a contradiction).
  Result json = Run({kCstool, "report", out.string(), "--explain-anomalies", "--format", "json"});
  ASSERT_EQ(json.status, 0) << json.err;
  const nlohmann::json trace = nlohmann::json::parse(json.out).at("trace");
  ASSERT_TRUE(trace.at("anomalies").contains("lost_events")) << trace.dump(2);
  uint64_t listed = 0;
  static const std::regex gap(R"( lost_events(?:=(\d+))?$)");
  for (const nlohmann::json& d : trace.at("anomaly_details")) {
    std::smatch m;
    const std::string line = d.get<std::string>();
    if (std::regex_search(line, m, gap)) listed += m[1].matched ? std::stoull(m[1]) : 1;
  }
  EXPECT_EQ(listed, trace.at("anomalies").at("lost_events").get<uint64_t>()) << trace.dump(2);
}

TEST_F(RecordTest, UnknownEventIsAUsageError) {
  fs::path out = dir_ / "bad.dat";
  Result r = Record({"-e", "sched:no_such_event", "-o", out, "--", "/bin/true"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unknown event 'sched:no_such_event'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(RecordTest, ExtraEventIsRecorded) {
  fs::path out = dir_ / "extra.dat";
  Result r =
      Record({"-e", "signal:signal_generate", "-o", out, "--", "/bin/sh", "-c", "kill -USR1 $$"});
  EXPECT_EQ(r.status, 128 + SIGUSR1) << r.err;
  Result rep = Report(out);
  EXPECT_NE(rep.out.find("signal_generate:"), std::string::npos);
}

// An event's bare name, as trace-cmd takes it: the one system that has it.
TEST_F(RecordTest, AnEventsBareNameIsItsSystems) {
  fs::path out = dir_ / "bare.dat";
  Result r = Record({"-e", "signal_generate", "-o", out, "--", "/bin/sh", "-c", "kill -USR1 $$"});
  EXPECT_EQ(r.status, 128 + SIGUSR1) << r.err;
  EXPECT_NE(Report(out).out.find("signal_generate:"), std::string::npos);
  Result bad = Record({"-e", "no_such_event", "-o", dir_ / "bad.dat", "--", "/bin/true"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("unknown event 'no_such_event': neither an event system nor an "
                         "event's name"),
            std::string::npos)
      << bad.err;
  EXPECT_NE(bad.err.find("-e takes SYSTEM:EVENT, SYSTEM or EVENT"), std::string::npos) << bad.err;
  Result bad_system = Record({"-e", "no_such_system:*", "-o", dir_ / "bad.dat", "--", "/bin/true"});
  EXPECT_EQ(bad_system.status, 2);
  EXPECT_NE(bad_system.err.find("unknown event system 'no_such_system'"), std::string::npos)
      << bad_system.err;
  // The option checks that look for an event know it by its bare name too.
  Result stacks = Record({"--stacks", "--no-defaults", "-e", "sched_switch", "-o",
                          dir_ / "stacks.dat", "--", "/bin/true"});
  EXPECT_EQ(stacks.status, 0) << stacks.err;
  Result no_switch =
      Record({"--stacks", "--no-defaults", "-e", "irq", "-o", dir_ / "irq.dat", "--", "/bin/true"});
  EXPECT_EQ(no_switch.status, 2);
  EXPECT_NE(no_switch.err.find("--stacks needs sched:sched_switch"), std::string::npos)
      << no_switch.err;
}

TEST_F(RecordTest, UnwritableOutputIsAClearError) {
  fs::path out = dir_ / "missing-dir" / "out.dat";
  Result r = Record({"-o", out, "--", "/bin/true"});
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find((dir_ / "missing-dir").string()), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(dir_ / "missing-dir"));
}

TEST_F(RecordTest, CommandNotFoundExits127) {
  fs::path out = dir_ / "nf.dat";
  Result r = Record({"-o", out, "--", "cstool-no-such-command-xyz"});
  EXPECT_EQ(r.status, 127);
  EXPECT_NE(r.err.find("command not found"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().rfind("run", 0), 0u) << "left behind: " << e.path();
}

TEST_F(RecordTest, StaleInstancesAreReaped) {
  fs::path stale = kTracefsInstances / "cstool-999999";
  ASSERT_FALSE(::kill(999999, 0) == 0) << "pid 999999 exists; cannot test";
  fs::create_directory(stale);
  ASSERT_TRUE(fs::exists(stale));
  fs::path out = dir_ / "reap.dat";
  Result r = Record({"-o", out, "--", "/bin/true"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(fs::exists(stale));
  if (fs::exists(stale)) ::rmdir(stale.c_str());
}

// `sh -c SCRIPT` started as pid `pid` (clone3's set_tid, which root may ask for); -1
// with errno when that pid cannot be had.
pid_t SpawnShellAs(pid_t pid, const char* script) {
  clone_args args{};
  args.exit_signal = SIGCHLD;
  args.set_tid = reinterpret_cast<uint64_t>(&pid);
  args.set_tid_size = 1;
  const long child = ::syscall(SYS_clone3, &args, sizeof(args));
  if (child == 0) {
    ::execl("/bin/sh", "sh", "-c", script, nullptr);
    ::_exit(126);
  }
  return static_cast<pid_t>(child);
}

// A process a test started and the cstool-PID instance named for it: both gone at the
// end of the scope, whatever the test's outcome.
struct InstanceOfProcess {
  InstanceOfProcess() = default;
  InstanceOfProcess(const InstanceOfProcess&) = delete;
  InstanceOfProcess& operator=(const InstanceOfProcess&) = delete;
  ~InstanceOfProcess() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    if (!instance.empty()) ::rmdir(instance.c_str());
  }
  fs::path instance;
  pid_t pid = -1;
};

// An instance cstool-PID made before the process PID starts: a recorder that died and
// gave its pid back, or a live one whose instance the wall clock, set forward since,
// makes look older. `script` ($1: the instance) runs as that process. Returns the error
// (errno) when no pid could be had.
int StartAfterItsInstance(const char* script, InstanceOfProcess& out) {
  std::ifstream pid_max_file("/proc/sys/kernel/pid_max");
  pid_t pid_max = 0;
  pid_max_file >> pid_max;
  pid_t pid = pid_max - 1000;  // mostly far from where the kernel is giving pids now
  int error = EEXIST;
  for (int attempt = 0; attempt < 100 && error == EEXIST && pid > 1000; ++attempt) {
    pid -= 7;
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;
    const fs::path instance = kTracefsInstances / fmt::format("cstool-{}", pid);
    if (!fs::create_directory(instance)) continue;
    // Process start times count clock ticks (10 ms): start well after the instance.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const std::string line = fmt::format("set -- {}; {}", instance.string(), script);
    const pid_t started = SpawnShellAs(pid, line.c_str());
    error = started == pid ? 0 : errno;
    if (error == 0) {
      out.instance = instance;
      out.pid = started;
      return 0;
    }
    ::rmdir(instance.c_str());  // EEXIST: taken meanwhile, another pid
  }
  return error;
}

// A recorder whose binary is not called cstool (a copy, an installed cstool-1.2) is as
// alive as any: the next recording removed its instance, and its recording died
// ("cannot read tracefs file 'cstool-PID/per_cpu/cpu0/stats'"). Here the owner is a live
// process that started before its instance was made, under another name.
TEST_F(RecordTest, ALiveOwnersInstanceIsKeptWhateverItsProgramIsCalled) {
  InstanceOfProcess owner;
  owner.pid = Spawn({"/bin/sleep", "30"}, dir_ / "s.out", dir_ / "s.err");
  ASSERT_GT(owner.pid, 0);
  owner.instance = kTracefsInstances / fmt::format("cstool-{}", owner.pid);
  ASSERT_TRUE(fs::create_directory(owner.instance));
  Result r = Record({"-o", dir_ / "keep.dat", "--", "/bin/true"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(owner.instance));
}

// The other way round: the instance's pid now belongs to a process started after the
// instance was made, so its recorder died and the pid was given again.
TEST_F(RecordTest, AnInstanceWhosePidWasGivenAgainIsReaped) {
  InstanceOfProcess later;
  const int error = StartAfterItsInstance("exec sleep 30", later);
  ASSERT_EQ(error, 0) << "cannot start a process as a chosen pid: " << std::strerror(error);
  Result r = Record({"-o", dir_ / "reap.dat", "--", "/bin/true"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(fs::exists(later.instance));
}

// Whatever the clocks say, a process reading the instance's buffers is its owner.
TEST_F(RecordTest, AnInstanceItsPidHasOpenIsKept) {
  InstanceOfProcess later;
  const int error = StartAfterItsInstance("exec 3< \"$1/trace\"; exec sleep 30", later);
  ASSERT_EQ(error, 0) << "cannot start a process as a chosen pid: " << std::strerror(error);
  // Until the shell has the file open.
  const fs::path fd = fmt::format("/proc/{}/fd/3", later.pid);
  for (int i = 0; i < 200 && !fs::exists(fd); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(fs::exists(fd));
  Result r = Record({"-o", dir_ / "keep.dat", "--", "/bin/true"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(later.instance));
  // Not even tried (the kernel refuses while a file is open, and the warning called
  // the live instance stale).
  EXPECT_EQ(r.err.find("stale"), std::string::npos) << r.err;
}

TEST_F(RecordTest, AttachToRunningProcessFollowsItsThreads) {
  pid_t target = Spawn({kWorkload, "yield", "2000000"}, dir_ / "w.out", dir_ / "w.err");
  // Wait for its two yielding threads.
  for (int i = 0; i < 500; ++i) {
    if (fs::exists("/proc/" + std::to_string(target) + "/task") &&
        std::distance(fs::directory_iterator("/proc/" + std::to_string(target) + "/task"),
                      fs::directory_iterator{}) == 3)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  fs::path out = dir_ / "attach.dat";
  Result r = Record({"-p", std::to_string(target), "-N", "0.3", "-o", out});
  ::kill(target, SIGKILL);
  ::waitpid(target, nullptr, 0);
  ASSERT_EQ(r.status, 0) << r.err;
  RecordingInfo info = Info(out);
  EXPECT_EQ(info.target_pids, std::vector<int32_t>{target});
  EXPECT_EQ(info.child.pid, 0);
  std::set<int> known;
  for (const auto& t : info.threads) {
    EXPECT_EQ(t.tgid, target);
    known.insert(t.tid);
  }
  EXPECT_EQ(known.size(), 3u);
  std::set<int> seen;
  for (const auto& l : EventLines(Report(out).out))
    if (l.event == "sys_enter") seen.insert(l.pid);
  EXPECT_FALSE(seen.empty());
  for (int p : seen) EXPECT_TRUE(known.count(p)) << p;
}

// Moves done in a context the pid filter leaves out are the followed thread's too: a
// spinning thread, pinned to one CPU at a time, is moved N times by another process's
// sched_setaffinity (done by the CPU's stopper thread, or by this process when it is
// queued, never in its own context). Each change of CPU is exactly one move, and with
// one allowed CPU at a time the balancer makes none: the report counts N, as the
// kernel does (se.nr_migrations, where /proc shows it). Before the unfiltered buffer took
// the moves, it counted none of them.
TEST_F(RecordTest, MovesDoneByAnotherTaskAreCounted) {
  cpu_set_t allowed;
  ASSERT_EQ(::sched_getaffinity(0, sizeof allowed, &allowed), 0);
  if (!CPU_ISSET(0, &allowed) || !CPU_ISSET(1, &allowed))
    GTEST_SKIP() << "needs CPUs 0 and 1 (this test may run on: " << CPU_COUNT(&allowed) << " CPUs)";
  const pid_t spinner =
      Spawn({kWorkload, "spin", "1000000", "0"}, dir_ / "spin.out", dir_ / "spin.err");
  const fs::path sched = fs::path("/proc") / std::to_string(spinner) / "sched";
  auto kernel_migrations = [&]() -> int64_t {
    std::ifstream in(sched);
    for (std::string l; std::getline(in, l);)
      if (l.rfind("se.nr_migrations", 0) == 0) return std::stoll(l.substr(l.find(':') + 1));
    return -1;  // no CONFIG_SCHED_DEBUG
  };
  auto pin = [&](int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return ::sched_setaffinity(spinner, sizeof set, &set);
  };
  // The workload pins itself to CPU 0 first: wait until it runs.
  for (int i = 0; i < 500; ++i) {
    std::ifstream in(fs::path("/proc") / std::to_string(spinner) / "stat");
    std::string stat;
    std::getline(in, stat);
    const size_t paren = stat.rfind(')');
    if (paren != std::string::npos && stat.compare(paren + 2, 1, "R") == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(pin(0), 0);
  const fs::path out = dir_ / "moves.dat";
  const pid_t recorder = Spawn({kCstool, "record", "-p", std::to_string(spinner), "-o", out},
                               dir_ / "rec.out", dir_ / "rec.err");
  ASSERT_TRUE(WaitUntilFollowing(recorder, spinner)) << ReadWholeFile(dir_ / "rec.err");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const int64_t kernel_before = kernel_migrations();
  constexpr int kMoves = 10;
  for (int i = 1; i <= kMoves; ++i) {
    ASSERT_EQ(pin(i % 2), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const int64_t kernel_after = kernel_migrations();
  ::kill(recorder, SIGINT);
  int status = 0;
  ::waitpid(recorder, &status, 0);
  ::kill(spinner, SIGKILL);
  ::waitpid(spinner, nullptr, 0);
  ASSERT_EQ(DecodeStatus(status), 0) << ReadWholeFile(dir_ / "rec.err");
  EXPECT_TRUE(Info(out).unfiltered_migrations);
  if (kernel_before >= 0) {
    EXPECT_EQ(kernel_after - kernel_before, kMoves);
  }

  const Result r = Run({kCstool, "report", out.string(), "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json report = nlohmann::json::parse(r.out);
  const nlohmann::json* row = nullptr;
  for (const auto& t : report["threads"])
    if (t["tid"] == spinner) row = &t;
  ASSERT_NE(row, nullptr) << r.out;
  EXPECT_EQ((*row)["migrations"].get<int64_t>(), kMoves) << row->dump();
  EXPECT_GE(report["trace"]["unfiltered_runtime"]["migrations_used"].get<int64_t>(), kMoves);
  // The moves go through the decoding threads' merge as the other unfiltered records do.
  const Result serial = Run({kCstool, "report", out.string(), "--format", "json", "-j", "1"});
  const Result shared = Run({kCstool, "report", out.string(), "--format", "json", "-j", "2"});
  EXPECT_EQ(serial.out, r.out);
  EXPECT_EQ(shared.out, r.out);
}

// A process tree asleep throughout (a shell waiting for two sleeps): -p alone records
// the shell's row and says how to take the children; with --children every process has
// its row, all asleep, and the kernel agrees with each (no switches).
TEST_F(RecordTest, AttachToASleepingTreeGivesEveryProcessItsRow) {
  pid_t shell =
      Spawn({"/bin/sh", "-c", "sleep 5 & sleep 5 & wait"}, dir_ / "s.out", dir_ / "s.err");
  for (int i = 0; i < 500 && ChildrenOf(shell).size() < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const fs::path alone = dir_ / "alone.dat", tree = dir_ / "tree.dat";
  Result r = Record({"-p", std::to_string(shell), "-N", "0.3", "-o", alone});
  Result t = Record({"-p", std::to_string(shell), "--children", "-N", "0.3", "-o", tree});
  for (pid_t child : ChildrenOf(shell)) ::kill(child, SIGKILL);
  ::kill(shell, SIGKILL);
  ::waitpid(shell, nullptr, 0);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("add --children to include them"), std::string::npos) << r.err;
  ASSERT_EQ(t.status, 0) << t.err;
  Result alone_json = Run({kCstool, "report", alone.string(), "--format", "json"});
  EXPECT_EQ(nlohmann::json::parse(alone_json.out).at("threads").size(), 1u) << alone_json.out;
  Result check = Run({kCstool, "report", tree.string(), "--check", "--format", "json"});
  const auto j = nlohmann::json::parse(check.out);
  EXPECT_EQ(check.status, j.at("check").at("passed").get<bool>() ? 0 : 1) << check.err;
  testing::ExpectCheckPasses(j);
  ASSERT_EQ(j.at("threads").size(), 3u) << check.out;
  for (const auto& th : j.at("threads")) {
    EXPECT_EQ(th.at("microstates_ns").at("unknown"), 0) << th.dump();
    EXPECT_GT(th.at("microstates_ns").at("sleep"), 0) << th.dump();
  }
  EXPECT_EQ(j.at("check").at("compared"), 3);
  // The tree from /proc's parents: the shell over its two sleeps.
  EXPECT_EQ(j.at("tree_roots"), nlohmann::json::array({shell})) << check.out;
  for (const auto& p : j.at("processes")) {
    if (p.at("pid") == shell) {
      EXPECT_EQ(p.at("ppid"), ::getpid()) << p.dump();  // the test spawned the shell
      EXPECT_EQ(p.at("tree").at("processes"), 3) << p.dump();
    } else {
      EXPECT_EQ(p.at("ppid"), shell) << p.dump();
      EXPECT_EQ(p.at("comm"), "sleep");
    }
  }
}

TEST_F(RecordTest, SystemWideOnOneCpu) {
  fs::path out = dir_ / "all.dat";
  Result r = Record({"-a", "-C", "0", "-N", "0.2", "-o", out});
  ASSERT_EQ(r.status, 0) << r.err;
  RecordingInfo info = Info(out);
  EXPECT_TRUE(info.system_wide);
  ASSERT_EQ(info.cpus.size(), 1u);
  EXPECT_EQ(info.cpus[0].cpu, 0);
  EXPECT_GT(info.threads.size(), 10u);
  Result rep = Report(out);
  ASSERT_EQ(rep.status, 0) << rep.err;
  EXPECT_EQ(EventLines(rep.out).size(), TotalEvents(info));
  EXPECT_EQ(rep.out.find(" [001] "), std::string::npos) << "only CPU 0 was traced";
  // A thread may run unseen on the untraced CPU: its times are not judged, and the
  // summary says so beside the verdict, as report --check does (it read as proof); with
  // no thread compared at all (a busy machine) it says so instead of "0/0 threads".
  const std::regex verdict(R"(kernel agrees( on switch counts only)?: (\d+)/(\d+) threads[^\n]*)");
  std::smatch m;
  if (std::regex_search(r.err, m, verdict)) {
    EXPECT_TRUE(m[1].matched) << r.err;
    EXPECT_NE(m.str(0).find("; times judged for 0 of "), std::string::npos) << r.err;
    EXPECT_NE(m.str(3), "0") << r.err;
  } else {
    EXPECT_NE(r.err.find("kernel agrees: not checked (no thread could be compared: "),
              std::string::npos)
        << r.err;
  }
  // Increments written on CPU 1 are in neither buffer: steal inside a run is not claimed.
  Result json = Run({kCstool, "report", out.string(), "--format", "json"});
  ASSERT_EQ(json.status, 0) << json.err;
  const auto trace = nlohmann::json::parse(json.out).at("trace");
  if (trace.contains("unfiltered_runtime")) {
    EXPECT_EQ(trace.at("unfiltered_runtime").at("all_increments"), false) << trace.dump();
  }
}

// -a -- CMD traces every task, the command's threads among them (a pid filter on the
// command would trace its first thread alone); beside it, the run-time increments done
// in the contexts -a leaves out, the recorder's own, and only those.
TEST_F(RecordTest, SystemWideWithACommandTracesEverythingAndKeepsTheRecordersIncrements) {
  if (!fs::exists("/sys/kernel/tracing/set_event_notrace_pid"))
    GTEST_SKIP() << "this kernel has no set_event_notrace_pid: -a cannot leave the recorder out";
  fs::path out = dir_ / "all_cmd.dat";
  Result r = Record({"-a", "-o", out, "--", kWorkload, "mutex", "4", "2000"});
  ASSERT_EQ(r.status, 0) << r.err;
  RecordingInfo info = Info(out);
  EXPECT_TRUE(info.system_wide);
  ASSERT_FALSE(info.untraced_tids.empty());
  Result json = Run({kCstool, "report", out.string(), "--format", "json"});
  ASSERT_EQ(json.status, 0) << json.err;
  const auto report = nlohmann::json::parse(json.out);
  int command_threads = 0;
  for (const auto& t : report.at("threads"))
    if (t.at("pid") == info.child.pid) {
      ++command_threads;
      // Traced in its own context, not only where the first thread switched with it.
      if (t.at("tid") != info.child.pid) {
        EXPECT_GT(t.at("syscalls").size(), 0u) << t.dump();
      }
    }
  EXPECT_EQ(command_threads, 5) << "the main thread and four on the mutex";
  const UnfilteredIncrements unfiltered = UnfilteredRuntime(out);
  EXPECT_GT(unfiltered.all, 0u) << "the recorder's own threads ran at least";
  const std::set<int> recorder(info.untraced_tids.begin(), info.untraced_tids.end());
  for (int context : unfiltered.contexts) EXPECT_EQ(recorder.count(context), 1u) << context;
  const auto& summary = report.at("trace").at("unfiltered_runtime");
  EXPECT_EQ(summary.at("other_context_increments"), unfiltered.other_context);
  EXPECT_EQ(summary.at("all_increments"),
            summary.at("lost_events") == 0 && info.TotalLostEvents() == 0)
      << summary.dump();
  // The idle CPUs' wakelist flushes are in the trace itself, the wakelist function's alone.
  EXPECT_EQ(unfiltered.flushes, 0u);
  const std::optional<uint64_t> wakelist = KernelSymbolAddress("sched_ttwu_pending");
  if (wakelist && TracefsSession::HasEvent({"csd", "csd_function_entry"})) {
    EXPECT_EQ(info.wakelist_function, *wakelist);
    EXPECT_GT(report.at("trace").at("wakelist_flushes").at("flushes").get<uint64_t>(), 0u);
  }
}

// The cgroup-v1 freezer (`docker pause` on cgroup v1) stops a task in a D sleep in the
// kernel, outside any syscall and in no page fault: IO, cause sleep:kernel. The microstate
// said paging before, against its own cause. (Two threads spin on one CPU, preempting
// each other on their way back to user mode, which ends their last page faults: a fault
// of a thread that then ran in user mode unpreempted, with no syscall, would stay
// pending, since no event shows the return. A thread asleep is frozen in its sleep.)
TEST_F(RecordTest, AFrozenThreadSleepsInTheKernelNotInAPageFault) {
  const fs::path freezer = "/sys/fs/cgroup/freezer";
  if (!fs::is_directory(freezer) || !fs::exists(freezer / "cgroup.procs"))
    GTEST_SKIP() << "no cgroup-v1 freezer hierarchy at " << freezer;
  const fs::path group = freezer / fmt::format("cstool-test-{}", ::getpid());
  fs::create_directory(group);
  auto write = [&](const char* name, const std::string& value) {
    std::ofstream(group / name) << value << std::flush;
  };
  // Freezes the workload once it runs (the recording starts first), for at least 300 ms.
  std::thread freeze([&] {
    for (int i = 0; i < 1000; ++i) {
      std::ifstream procs(group / "cgroup.procs");
      int pid = 0;
      if (procs >> pid && ReadWholeFile(fmt::format("/proc/{}/comm", pid)) == "cstool_workload\n")
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    write("freezer.state", "FROZEN");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    write("freezer.state", "THAWED");
  });
  const fs::path file = dir_ / "frozen.dat";
  Result rec = Record({"-o", file.string(), "--", "sh", "-c",
                       fmt::format("echo $$ > {}; exec {} cpubound 1200 0",
                                   (group / "cgroup.procs").string(), kWorkload)});
  freeze.join();
  fs::remove(group);
  ASSERT_EQ(rec.status, 0) << rec.err;
  Result json = Run({kCstool, "report", file.string(), "--format", "json"});
  ASSERT_EQ(json.status, 0) << json.err;
  const nlohmann::json report = nlohmann::json::parse(json.out);
  int frozen = 0;
  for (const nlohmann::json& t : report.at("threads")) {
    if (t.at("comm") != "cstool_workload") continue;
    const nlohmann::json& micro = t.at("microstates_ns");
    // Paging only after a page fault, as the thread's switch causes say: the freezer's D
    // sleep is not one. A fault's sleep is not always IO the kernel counts: a cold page of
    // the binary is (the main thread's, once in CI: 113.9 us beside the kernel's 113.3 us),
    // a wait for the mapping's lock, held by another thread's mmap() or mprotect(), is not
    // (the main thread's, once in CI: 121 us, blkio 0; a thread faulting pages in while
    // another mprotect()s the mapping: 87 ms of paging in 152 fault sleeps, blkio 0).
    if (micro.at("sleep_paging").get<int64_t>() > 0) {
      EXPECT_GE(t.at("switches").at("causes").value("sleep:fault", 0), 1) << t.dump(2);
    }
    // Frozen from the FROZEN write (a spinner freezes as it next runs: at once, or within
    // a time slice when queued) to the thaw 300 ms later: a D sleep in the kernel.
    if (micro.at("sleep_uninterruptible").get<int64_t>() >= 250'000'000 &&
        t.at("switches").at("causes").value("sleep:kernel", 0) >= 1)
      ++frozen;
  }
  EXPECT_EQ(frozen, 2) << report.at("threads").dump(2);  // the spinners
}

// A command in a cgroup with a CPU quota (docker --cpus, systemd CPUQuota=) is throttled:
// held off the CPUs, runnable, with no event to show it. The report says which cgroup
// and how long, as the cgroup's own counters say, and who was in it.
TEST_F(RecordTest, ThrottlingOfTheCommandsCgroupIsReported) {
  const fs::path cpu = "/sys/fs/cgroup/cpu";  // cgroup v1's cpu controller
  if (!fs::exists(cpu / "cpu.cfs_quota_us"))
    GTEST_SKIP() << "no cgroup-v1 cpu controller at " << cpu << " to set a quota in";
  const std::string name = fmt::format("cstool-test-{}", ::getpid());
  const fs::path group = cpu / name;
  fs::create_directory(group);
  std::ofstream(group / "cpu.cfs_period_us") << "100000" << std::flush;
  std::ofstream(group / "cpu.cfs_quota_us") << "20000" << std::flush;  // 20 % of a CPU
  const auto throttled_ns = [&] {
    std::ifstream stat(group / "cpu.stat");
    std::string key;
    int64_t value = 0;
    while (stat >> key >> value)
      if (key == "throttled_time") return value;
    return int64_t{-1};
  };
  const int64_t before = throttled_ns();
  const fs::path file = dir_ / "throttled.dat";
  Result rec = Record({"-o", file.string(), "--", "sh", "-c",
                       fmt::format("echo $$ > {}; exec {} spin 300 0",
                                   (group / "cgroup.procs").string(), kWorkload)});
  const int64_t after = throttled_ns();
  fs::remove(group);
  ASSERT_EQ(rec.status, 0) << rec.err;
  ASSERT_GT(after, before) << "a 300 ms spin at 20 % of a CPU was never throttled";
  Result json = Run({kCstool, "report", file.string(), "--format", "json"});
  ASSERT_EQ(json.status, 0) << json.err;
  const nlohmann::json report = nlohmann::json::parse(json.out);
  int32_t pid = 0;
  for (const nlohmann::json& t : report.at("threads"))
    if (t.at("comm") == "cstool_workload") pid = t.at("pid").get<int32_t>();
  ASSERT_NE(pid, 0) << report.at("threads").dump(2);
  // (Other cgroups may be throttled on the machine: only those the command was in count.)
  const nlohmann::json& all = report.at("trace").at("cpu_throttling");
  const auto ours = std::find_if(all.begin(), all.end(), [&](const nlohmann::json& c) {
    return c.at("cgroup") == "/" + name;
  });
  ASSERT_NE(ours, all.end()) << all.dump(2);
  const nlohmann::json& c = *ours;
  for (const nlohmann::json& other : all) EXPECT_NE(other.at("pids"), nlohmann::json::array());
  EXPECT_EQ(c.at("version"), 1);
  EXPECT_EQ(c.at("since_ns"), 0);
  EXPECT_EQ(c.at("quota_ns"), 20'000'000);
  EXPECT_EQ(c.at("period_ns"), 100'000'000);
  // Only the command ran in it, and only while tracing: its counters' whole change.
  EXPECT_EQ(c.at("throttled_ns").get<int64_t>(), after - before);
  EXPECT_EQ(c.at("pids"), nlohmann::json::array({pid}));
  Result table = Run({kCstool, "report", file.string()});
  EXPECT_NE(table.out.find(fmt::format("NOTE: CPU bandwidth throttling: cgroup /{} (v1, quota "
                                       "20.0 ms every 100.0 ms) was throttled",
                                       name)),
            std::string::npos)
      << table.out;
}

TEST_F(RecordTest, UsageErrors) {
  EXPECT_EQ(Record({}).status, 2);  // nothing to record
  Result r = Record({"-C", "abc", "-a"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("invalid CPU list"), std::string::npos) << r.err;
  r = Record({"-p", "999999", "-N", "1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no such process"), std::string::npos) << r.err;
}

// As in perf and trace-cmd, record's options end at the command's first word: without
// `--`, `ls -a` keeps its -a (taken as record's, it traced every task, silently), and
// `grep -c` its -c (taken as a counter list). An option's value stays its own, attached
// or not, and --dump's optional PID only when it is one.
TEST_F(RecordTest, TheCommandsOwnOptionsAreItsOwnWithoutTheSeparator) {
  const fs::path ls = dir_ / "ls.dat";
  Result r = Record({"-o", ls, "-N", "30", "ls", "-a", dir_.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  Result json = Run({kCstool, "report", ls.string(), "--format", "json"});
  ASSERT_EQ(json.status, 0) << json.err;
  const nlohmann::json trace = nlohmann::json::parse(json.out).at("trace");
  EXPECT_EQ(trace.at("command"), nlohmann::json({"ls", "-a", dir_.string()})) << trace.dump();
  EXPECT_EQ(trace.at("system_wide"), false) << trace.dump();

  const fs::path grep = dir_ / "grep.dat";
  r = Record({"-ao" + grep.string(), "-N30", "grep", "-c", "root", "/etc/passwd"});
  ASSERT_EQ(r.status, 0) << r.err;  // grep's: it found the line
  const nlohmann::json grep_trace =
      nlohmann::json::parse(Run({kCstool, "report", grep.string(), "--format", "json"}).out)
          .at("trace");
  EXPECT_EQ(grep_trace.at("command"), nlohmann::json({"grep", "-c", "root", "/etc/passwd"}));
  EXPECT_EQ(grep_trace.at("system_wide"), true);  // -a before the command is record's

  // None running: exit 1 as with no pid named (that is the machine's state, not a typo).
  Result dump = Record({"--dump", "999999"});
  EXPECT_EQ(dump.status, 1);
  EXPECT_NE(dump.err.find("pid 999999 is not a flight recorder: none is running"),
            std::string::npos)
      << dump.err;
}

}  // namespace
}  // namespace cstool
