// Faults while `cstool record` runs, on the real tracefs: a full disk, the output
// directory removed, a command that cannot be executed, SIGKILL of cstool, the tracefs
// instance removed by another process, and running without privileges. Each must give
// a clear message and a non-zero exit, leave no temporary files, and leave no cstool-*
// instance behind (after SIGKILL: once `record --recover` assembled what was written).
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "format/trace_file_reader.h"
#include "tests/support/files.h"
#include "tests/support/kernel_agreement.h"
#include "tests/support/report_json.h"
#include "tests/support/run_command.h"
#include "tracefs/recoverable_mark.h"

namespace cstool::testing {
namespace {

namespace fs = std::filesystem;
const std::string kCstool = CSTOOL_BINARY;
const std::string kWorkload = std::string(CSTOOL_WORKLOAD_DIR) + "/cstool_workload";

std::vector<std::string> FilesIn(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path().filename());
  return out;
}

// Children of `pid` (from /proc/*/stat).
std::vector<pid_t> ChildrenOf(pid_t pid) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string stat = ReadWholeFile(e.path() / "stat");
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream in(stat.substr(paren + 2));
    char state;
    pid_t ppid = 0;
    in >> state >> ppid;
    if (ppid == pid) out.push_back(std::stoi(name));
  }
  return out;
}

// A cstool process running in the background, stderr to a file.
// The tracefs instance the recorder `pid` made for the trace.
fs::path InstanceOf(pid_t pid) { return kTracefsInstances / ("cstool-" + std::to_string(pid)); }

class Background {
 public:
  Background(const std::vector<std::string>& argv, const fs::path& err) {
    pid_ = Spawn(argv, "/dev/null", err);
  }
  ~Background() {
    if (pid_ > 0 && status_ < 0) {
      ::kill(pid_, SIGKILL);
      Wait();
    }
  }
  pid_t pid() const { return pid_; }
  fs::path instance() const { return InstanceOf(pid_); }
  // Waits until the recording is live (its instance exists and the command runs).
  bool WaitLive() {
    for (int i = 0; i < 1000 && !fs::exists(instance()); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    return fs::exists(instance());
  }
  int Wait() {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return status_;
  }

 private:
  pid_t pid_ = -1;
  int status_ = -1;
};

class RecordFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = TracefsUnavailableReason(); !why.empty()) GTEST_SKIP() << why;
    dir_ = fs::temp_directory_path() / ScratchDirName("cstool-faults");
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::permissions(dir_, fs::perms::all & ~fs::perms::others_write & ~fs::perms::group_write);
  }
  void TearDown() override {
    if (!mounted_.empty()) ::umount2(mounted_.c_str(), MNT_DETACH);
    if (!dir_.empty()) fs::remove_all(dir_);
    if (!IsSkipped()) {
      EXPECT_EQ(OrphanedCstoolInstances(), std::vector<std::string>{});
    }
  }

  // A tmpfs of `size` ("2m") mounted on dir_/`name`, unmounted at the end.
  fs::path MountSmallDisk(const std::string& name, const std::string& size) {
    fs::path at = dir_ / name;
    fs::create_directory(at);
    if (::mount("tmpfs", at.c_str(), "tmpfs", 0, ("size=" + size).c_str()) != 0) {
      ADD_FAILURE() << "mount tmpfs: " << std::strerror(errno);
      return {};
    }
    mounted_ = at;
    return at;
  }
  void UnmountSmallDisk() {
    ::umount2(mounted_.c_str(), 0);
    mounted_.clear();
  }
  // A steady workload to attach to (-p), running for longer than any test here, once it
  // is under way.
  std::unique_ptr<Background> RunningTarget() {
    auto target = std::make_unique<Background>(
        std::vector<std::string>{kWorkload, "pingrate", "30", "0"}, dir_ / "target.err");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    return target;
  }

  fs::path dir_;
  fs::path mounted_;
};

// A full disk ends the recording cleanly (issue #24): the file so far is complete and
// readable, the message names it and says how much was kept, and nothing else is left.
TEST_F(RecordFaults, DiskFullStopsWithAReadableFile) {
  const fs::path small = MountSmallDisk("small", "2m");
  ASSERT_FALSE(small.empty());
  const fs::path out = small / "out.dat";
  // A busy workload writes ~100 MB/s of events; -N bounds the test if nothing stops it.
  CommandResult r = RunCommand(
      {kCstool, "record", "-o", out, "-N", "20", "--", kWorkload, "pingpong", "100000000", "0"});
  EXPECT_EQ(r.status, 124) << r.err;  // the command is ended as by -N (timeout(1)'s status)
  const std::string warning =
      "cstool record: warning: the recording stopped early: the disk was full: kept ";
  const size_t at = r.err.find(warning);
  ASSERT_NE(at, std::string::npos) << r.err;
  const std::string line = r.err.substr(at, r.err.find('\n', at) - at);
  EXPECT_NE(line.find(out.string() + " is complete up to then"), std::string::npos) << line;
  EXPECT_EQ(FilesIn(small), std::vector<std::string>{"out.dat"}) << "FILE.tmp or page files left";
  CommandResult report = RunCommand({kCstool, "report", out});
  EXPECT_EQ(report.status, 0) << report.err;
  EXPECT_NE(report.out.find("NOTE: the recording ends early: the disk was full: kept "),
            std::string::npos)
      << report.out;
  UnmountSmallDisk();
}

// msa -o on a disk that fills: the live view goes on without the trace, which is said,
// and none of its pages are left (msa had ended at the first failed write, showing and
// keeping nothing).
TEST_F(RecordFaults, MsaOnAFullDiskGoesOnWithoutItsTrace) {
  const fs::path small = MountSmallDisk("msa", "1m");
  ASSERT_FALSE(small.empty());
  const std::unique_ptr<Background> target = RunningTarget();
  const fs::path out = small / "m.dat";
  CommandResult r = RunCommand(
      {kCstool, "msa", std::to_string(target->pid()), "-T", "0.3", "-n", "3", "-o", out.string()});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("No space left on device: the trace is not saved (-o " + out.string() +
                       "); the view goes on"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find(" interval 3 ("), std::string::npos) << r.out;
  EXPECT_EQ(FilesIn(small), std::vector<std::string>{}) << "page files left";
  UnmountSmallDisk();
}

// A flight dump asked for that does not fit on the disk: warned, none of its files left,
// and for -p the exit status says the recording failed (a script asked for that dump).
TEST_F(RecordFaults, AFlightDumpThatDoesNotFitFailsTheRecording) {
  const fs::path small = MountSmallDisk("flight", "32k");
  ASSERT_FALSE(small.empty());
  const std::unique_ptr<Background> target = RunningTarget();
  const fs::path out = small / "f.dat";
  CommandResult r = RunCommand({kCstool, "record", "--flight", "1", "--dump-at-end", "-N", "0.5",
                                "-o", out.string(), "-p", std::to_string(target->pid())});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("warning: dump (end of the recording) not written: cannot write"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("warning: 1 dump asked for could not be written"), std::string::npos)
      << r.err;
  EXPECT_EQ(FilesIn(small), std::vector<std::string>{}) << "page files left";
  UnmountSmallDisk();
}

// A disk too full for the recording to begin: the error says so and nothing is left
// on it (the recovery note's partial .tmp was). One page: the note alone (event formats,
// thread list, saved command lines) takes more on any machine; 64 KiB took it, or not,
// as the kernel's table of command lines had filled with the processes run before.
TEST_F(RecordFaults, DiskFullAtTheStartLeavesNothing) {
  const fs::path small = MountSmallDisk("tiny", "4k");
  ASSERT_FALSE(small.empty());
  const fs::path out = small / "x.dat";
  CommandResult r =
      RunCommand({kCstool, "record", "-o", out, "--", kWorkload, "nanosleep", "20", "1000"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
  EXPECT_EQ(FilesIn(small), std::vector<std::string>{}) << r.err;
  UnmountSmallDisk();
}

// A disk with room for the recording's note but not for its header, end and one chunk of
// events: refused before the command starts (it had run, to be stopped at once for a
// file of no events), and nothing is left on the disk.
TEST_F(RecordFaults, ADiskWithoutRoomForEventsIsRefusedBeforeTheCommandRuns) {
  const fs::path small = MountSmallDisk("narrow", "400k");
  ASSERT_FALSE(small.empty());
  const fs::path out = small / "n.dat";
  const fs::path started = dir_ / "started";
  CommandResult r = RunCommand(
      {kCstool, "record", "-o", out, "--", "/bin/sh", "-c", "touch " + started.string()});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("cannot start recording into '" + out.string() + "': its file system has "),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(started)) << "the command ran";
  EXPECT_EQ(FilesIn(small), std::vector<std::string>{}) << r.err;
  UnmountSmallDisk();
}

// The JSON report of a nanosleep workload's recording in which all its `sleeps` sleeps
// show (null, the failure said, when the report failed or the workload is not in it).
nlohmann::json ReportWithEverySleep(const fs::path& out, int sleeps) {
  CommandResult report = RunCommand({kCstool, "report", out, "--format", "json"});
  EXPECT_EQ(report.status, 0) << report.err;
  if (report.status != 0) return nullptr;
  nlohmann::json j = nlohmann::json::parse(report.out);
  const nlohmann::json* workload = testing::ThreadNamed(j, "cstool_workload");
  EXPECT_NE(workload, nullptr) << report.out;
  if (workload == nullptr) return nullptr;
  EXPECT_EQ(workload->at("switches").at("causes").value("sleep:clock_nanosleep", 0), sleeps)
      << workload->dump();
  return j;
}

// `--recover`'s summary (its stderr, `recover_err`) says what the file `out` holds as its
// report `j` counts it: "OUT holds N events; lost [at least ]M events".
void ExpectRecoverCountsAsReport(const std::string& recover_err, const fs::path& out,
                                 const nlohmann::json& j) {
  const std::string holds = out.string() + " holds ";
  const size_t at = recover_err.find(holds);
  ASSERT_NE(at, std::string::npos) << recover_err;
  const std::string line = recover_err.substr(at + holds.size());
  EXPECT_EQ(std::stoull(line), j.at("trace").at("events").get<uint64_t>()) << line;
  const size_t lost_at = line.find("; lost ");
  ASSERT_NE(lost_at, std::string::npos) << line;
  std::string lost = line.substr(lost_at + 7);
  if (lost.starts_with("at least ")) lost = lost.substr(9);
  EXPECT_EQ(std::stoull(lost), j.at("trace").at("lost_events_total").get<uint64_t>()) << line;
}

// The recording ends and only writing the file fails (a full disk at the end; here its
// temporary file's name taken by a directory meanwhile): the pages and a note rewritten
// at the stop stay, and --recover makes of them the file the recording would have
// written: every sleep, no loss, the kernel's counters (--check passes), no "killed".
TEST_F(RecordFaults, WhenOnlyWritingTheFileFailsRecoverLosesNothing) {
  const fs::path out = dir_ / "ended.dat";
  // A recording there before: moved to ended.dat.old, then put back when the write fails.
  ASSERT_EQ(RunCommand({kCstool, "record", "-o", out, "--", "/bin/true"}).status, 0);
  const std::string previous = ReadWholeFile(out);
  Background rec({kCstool, "record", "-o", out, "--", kWorkload, "nanosleep", "2000", "1000"},
                 dir_ / "rec.err");
  ASSERT_TRUE(rec.WaitLive());
  const fs::path blocker = dir_ / "ended.dat.tmp";
  fs::create_directory(blocker);
  EXPECT_EQ(rec.Wait(), 1);
  const std::string err = ReadWholeFile(dir_ / "rec.err");
  EXPECT_NE(LastOwnLine(err).find("`cstool record --recover " + out.string() + "`"),
            std::string::npos)
      << err;
  EXPECT_NE(LastOwnLine(err).find("the previous " + out.string() + " is back under its name"),
            std::string::npos)
      << err;
  EXPECT_EQ(ReadWholeFile(out), previous);
  fs::remove(blocker);

  CommandResult recover = RunCommand({kCstool, "record", "--recover", out});
  EXPECT_EQ(recover.status, 0) << recover.err;
  EXPECT_NE(recover.err.find("only writing the file had failed: nothing is missing"),
            std::string::npos)
      << recover.err;
  EXPECT_EQ(ReadWholeFile(out.string() + ".old"), previous);
  const nlohmann::json j = ReportWithEverySleep(out, 2000);
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j.at("trace").at("lost_events_total").get<int64_t>(), 0);
  ExpectRecoverCountsAsReport(recover.err, out, j);
  EXPECT_NE(recover.err.find("; lost 0 events"), std::string::npos) << recover.err;
  EXPECT_EQ(j.dump().find("recovered from a recording"), std::string::npos);
  CommandResult check = RunCommand({kCstool, "report", out, "--check", "--format", "json"});
  ASSERT_EQ(check.err, "");
  const nlohmann::json report = nlohmann::json::parse(check.out);
  EXPECT_EQ(report.at("check").at("compared").get<int>(), 1) << report.at("check").dump(2);
  testing::ExpectCheckPasses(report);
}

TEST_F(RecordFaults, OutputDirectoryRemovedMidRecording) {
  const fs::path sub = dir_ / "out";
  fs::create_directory(sub);
  const fs::path out = sub / "x.dat";
  Background rec(
      {kCstool, "record", "-o", out, "-N", "3", "--", kWorkload, "nanosleep", "100000", "1000"},
      dir_ / "rec.err");
  ASSERT_TRUE(rec.WaitLive());
  fs::remove_all(sub);
  const int status = rec.Wait();
  const std::string err = ReadWholeFile(dir_ / "rec.err");
  EXPECT_EQ(status, 1) << err;
  EXPECT_NE(LastOwnLine(err).find(out.string()), std::string::npos) << err;
  EXPECT_NE(LastOwnLine(err).find("directory was removed"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(sub));
}

TEST_F(RecordFaults, NonExecutableCommandIsPermissionDenied) {
  const fs::path script = dir_ / "not-executable.sh";
  std::ofstream(script) << "#!/bin/sh\nexit 0\n";
  fs::permissions(script, fs::perms::owner_read | fs::perms::owner_write);
  const fs::path out = dir_ / "x.dat";
  CommandResult r = RunCommand({kCstool, "record", "-o", out, "--", script});
  EXPECT_EQ(r.status, 126) << r.err;
  EXPECT_NE(r.err.find(script.string() + ": Permission denied"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(RecordFaults, ExecFailingInTheChildIsPermissionDenied) {
  // The script is executable, its interpreter is not: execve() itself fails (EACCES)
  // after the tracing instance was set up.
  const fs::path interp = dir_ / "interp";
  std::ofstream(interp) << "not a program\n";
  fs::permissions(interp, fs::perms::owner_read);
  const fs::path script = dir_ / "script";
  std::ofstream(script) << "#!" << interp.string() << "\n";
  fs::permissions(script, fs::perms::owner_all);
  const fs::path out = dir_ / "x.dat";
  CommandResult r = RunCommand({kCstool, "record", "-o", out, "--", script});
  EXPECT_EQ(r.status, 126) << r.err;
  EXPECT_NE(r.err.find(script.string() + ": Permission denied"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  std::vector<std::string> left = FilesIn(dir_);
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"interp", "script"})) << "temporary files left";
}

// A recorder killed while a slow workload runs on to its end (100 sleeps of 10 ms): the
// events of most of it are only in the killed recorder's instances. Returns its pid.
pid_t KillRecorderOfSlowWorkload(const fs::path& out, const fs::path& err,
                                 const char* compress = "--compress") {
  Background rec(
      {kCstool, "record", "-o", out, compress, "--", kWorkload, "nanosleep", "100", "10000"}, err);
  if (!rec.WaitLive()) return -1;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::vector<pid_t> children = ChildrenOf(rec.pid());
  if (::kill(rec.pid(), SIGKILL) != 0 || rec.Wait() != 128 + SIGKILL) return -1;
  for (pid_t c : children)
    for (int i = 0; i < 500 && ::kill(c, 0) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return rec.pid();
}

// KillRecorderOfSlowWorkload, when the killed recorder left its instance; else -1.
pid_t KillRecorderLeavingItsInstance(const fs::path& out, const fs::path& err,
                                     const char* compress = "--compress") {
  const pid_t pid = KillRecorderOfSlowWorkload(out, err, compress);
  return pid > 0 && fs::exists(InstanceOf(pid)) ? pid : -1;
}

// The report of such a recording, recovered: every sleep, and the exit, not only what the
// files had at the kill.
// Returns the report's JSON (null when the kernel cannot be asked; see ReportWithEverySleep).
nlohmann::json ExpectTheWholeSlowRun(const fs::path& out) {
  nlohmann::json j = ReportWithEverySleep(out, 100);
  if (!j.is_null()) {
    EXPECT_GT(j.at("trace").at("lost_events_total").get<int64_t>(), 0) << j.at("trace").dump();
  }
  return j;
}

// kill -9 (or the OOM killer) cannot clean up: what was written stays beside the output
// until `record --recover` assembles it into a readable file; a new recording refuses to
// write over it; and the killed recorder's instance can be removed even while the
// command it started still runs (no inherited trace_pipe_raw keeps it busy).
class SigkillRecover : public RecordFaults, public ::testing::WithParamInterface<const char*> {};

// Without and with compression (the page files then hold compressed chunks).
TEST_P(SigkillRecover, LeavesWhatWasWrittenForRecover) {
  const fs::path out = dir_ / "killed.dat";
  std::vector<std::string> argv = {kCstool, "record", "-o", out, "-N", "60"};
  argv.push_back(GetParam());
  argv.insert(argv.end(), {"--", kWorkload, "pingrate", "60", "-1", "2000"});
  Background rec(argv, dir_ / "rec.err");
  ASSERT_TRUE(rec.WaitLive());
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  const std::vector<pid_t> children = ChildrenOf(rec.pid());
  ASSERT_EQ(::kill(rec.pid(), SIGKILL), 0);
  EXPECT_EQ(rec.Wait(), 128 + SIGKILL);
  const fs::path stale = rec.instance();
  EXPECT_TRUE(fs::exists(stale)) << "SIGKILL cannot clean up; recover or the next run must";
  EXPECT_FALSE(fs::exists(out));
  EXPECT_TRUE(fs::exists(dir_ / "killed.dat.recovery.json"));
  uintmax_t pages = 0, unfiltered_pages = 0;
  for (const std::string& name : FilesIn(dir_)) {
    if (name.starts_with("killed.dat.cpu")) pages += fs::file_size(dir_ / name);
    if (name.starts_with("killed.dat.cstool_runtime.cpu"))
      unfiltered_pages += fs::file_size(dir_ / name);
  }
  EXPECT_GT(pages, 0u) << "pages written before the kill";
  EXPECT_GT(unfiltered_pages, 0u) << "the unfiltered run-time buffer's too";

  CommandResult again = RunCommand({kCstool, "record", "-o", out, "--", "/bin/true"});
  EXPECT_EQ(again.status, 2) << again.err;
  EXPECT_NE(LastOwnLine(again.err).find("cstool record --recover " + out.string()),
            std::string::npos)
      << again.err;

  CommandResult early = RunCommand({kCstool, "report", out});
  EXPECT_NE(early.status, 0);
  EXPECT_NE(LastOwnLine(early.err).find("`cstool record --recover " + out.string() + "`"),
            std::string::npos)
      << early.err;

  CommandResult recover = RunCommand({kCstool, "record", "--recover", out});
  EXPECT_EQ(recover.status, 0) << recover.err;
  EXPECT_NE(recover.err.find("recovered"), std::string::npos) << recover.err;
  EXPECT_FALSE(fs::exists(stale)) << "removable while the orphaned command runs";
  for (pid_t c : children) ::kill(c, SIGKILL);  // the orphaned workload
  std::vector<std::string> left = FilesIn(dir_);
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"killed.dat", "rec.err"}));
  // Again: the file it made says it was recovered, and is left as it is.
  CommandResult twice = RunCommand({kCstool, "record", "--recover", out});
  EXPECT_EQ(twice.status, 2) << twice.err;
  EXPECT_NE(twice.err.find("nothing to recover: '" + out.string() + "' was recovered already"),
            std::string::npos)
      << twice.err;

  // The recovered file is what the option asked for: v6 with raw pages, or v7 chunks.
  EXPECT_EQ(OpenTraceFile(out.string())->file_version(),
            std::string(GetParam()) == "--compress=none" ? 6 : 7);
  CommandResult report = RunCommand({kCstool, "report", out, "--format", "json"});
  ASSERT_EQ(report.status, 0) << report.err;
  EXPECT_NE(report.out.find("recovered from a recording that was killed"), std::string::npos);
  const nlohmann::json j = nlohmann::json::parse(report.out);
  ExpectRecoverCountsAsReport(recover.err, out, j);
  // The command was never reaped: how it ended is unknown, not 0.
  EXPECT_EQ(j["trace"]["child"]["reaped"], false);
  EXPECT_TRUE(j["trace"]["child"]["wait_status"].is_null()) << j["trace"]["child"];
  EXPECT_TRUE(j["trace"]["child"]["utime_ns"].is_null()) << j["trace"]["child"];
  EXPECT_NE(report.out.find("\"sleep:read\""), std::string::npos) << "the workload's switches";
  EXPECT_EQ(OpenTraceFile(out.string())->instance_names(),
            std::vector<std::string>{"cstool_runtime"});
  if (::access("/usr/bin/trace-cmd", X_OK) == 0) {
    CommandResult tc = RunCommand({"/usr/bin/trace-cmd", "report", "-i", out});
    EXPECT_EQ(tc.status, 0) << tc.err;
    EXPECT_NE(tc.out.find("sched_switch"), std::string::npos);
  }
}

// A workload that traces slowly fills no sub-buffer for long, and the recorder moves
// only whole ones to its files while it records: after kill -9 nearly all of it is still
// in the killed recorder's ring buffers. --recover reads them before it removes the
// instance (it recovered 0.002 s of a 1 s recording, the pages "missing"), after a loss
// marker of unknown size: what the recorder had read but not written is gone.
TEST_P(SigkillRecover, TakesWhatTheKilledRecordersBuffersStillHold) {
  const fs::path out = dir_ / "slow.dat";
  const pid_t pid = KillRecorderLeavingItsInstance(out, dir_ / "rec.err", GetParam());
  ASSERT_GT(pid, 0) << ReadWholeFile(dir_ / "rec.err");
  const fs::path stale = InstanceOf(pid);

  CommandResult recover = RunCommand({kCstool, "record", "--recover", out});
  ASSERT_EQ(recover.status, 0) << recover.err;
  EXPECT_NE(recover.err.find("unread in the killed recorder's buffers"), std::string::npos)
      << recover.err;
  EXPECT_FALSE(fs::exists(stale));
  const nlohmann::json j = ExpectTheWholeSlowRun(out);
  if (!j.is_null()) {
    ExpectRecoverCountsAsReport(recover.err, out, j);
    // What the recorder had read but not written is a loss of unknown size: the report
    // says "at least", and gives no share of the written events.
    EXPECT_NE(recover.err.find("; lost at least "), std::string::npos) << recover.err;
    EXPECT_NE(j["trace"]["notes"].dump().find(" (gaps of unknown size counted as one event each"),
              std::string::npos)
        << j["trace"]["notes"];
    EXPECT_EQ(j["trace"]["notes"].dump().find("% of the"), std::string::npos)
        << j["trace"]["notes"];
  }
}

// Another session before the recovery (a recording into another file) keeps the killed
// recorder's instances and says how to recover them: it used to remove them, and the
// events only they held were lost. After the recovery nothing is kept.
TEST_F(RecordFaults, ASessionBeforeTheRecoveryKeepsTheKilledRecordersInstances) {
  const fs::path out = dir_ / "slow.dat";
  const pid_t pid = KillRecorderLeavingItsInstance(out, dir_ / "rec.err");
  ASSERT_GT(pid, 0) << ReadWholeFile(dir_ / "rec.err");
  const fs::path instance = InstanceOf(pid);
  const fs::path runtime_instance = instance.string() + "-runtime";
  ASSERT_TRUE(fs::exists(runtime_instance));
  ASSERT_TRUE(fs::exists(fs::path(kRecoverableDir) / std::to_string(pid)));

  CommandResult other = RunCommand({kCstool, "record", "-o", dir_ / "other.dat", "--", "true"});
  EXPECT_EQ(other.status, 0) << other.err;
  EXPECT_TRUE(fs::exists(instance));
  EXPECT_TRUE(fs::exists(runtime_instance));
  EXPECT_NE(other.err.find("`cstool record --recover " + out.string() + "`"), std::string::npos)
      << other.err;
  // Said once, though the recording makes two instances (the run-time buffer's too).
  const std::string kept = "kept the tracefs instances of the killed recording";
  const size_t first = other.err.find(kept);
  EXPECT_NE(first, std::string::npos) << other.err;
  EXPECT_EQ(other.err.find(kept, first + 1), std::string::npos) << other.err;
  EXPECT_EQ(ReadWholeFile(instance / "tracing_on"), "0\n") << "what it holds is kept as it is";

  CommandResult recover = RunCommand({kCstool, "record", "--recover", out});
  ASSERT_EQ(recover.status, 0) << recover.err;
  EXPECT_NE(recover.err.find("unread in the killed recorder's buffers"), std::string::npos)
      << recover.err;
  EXPECT_FALSE(fs::exists(instance));
  EXPECT_FALSE(fs::exists(runtime_instance));
  EXPECT_FALSE(fs::exists(fs::path(kRecoverableDir) / std::to_string(pid)));
  ExpectTheWholeSlowRun(out);
}

// Pids wrap: a session that gets a killed recorder's pid finds that recorder's kept
// instance under its own name. It refuses, naming the recovery, and removes nothing (it
// had destroyed the instance as one of its own). The pid is handed out again through
// ns_last_pid (root), the next pid the kernel gives being the one after it.
TEST_F(RecordFaults, ASessionGivenAKilledRecordersPidLeavesItsInstance) {
  const fs::path out = dir_ / "reused.dat";
  const pid_t pid = KillRecorderLeavingItsInstance(out, dir_ / "rec.err");
  ASSERT_GT(pid, 0) << ReadWholeFile(dir_ / "rec.err");
  const fs::path instance = InstanceOf(pid);
  CommandResult reused;
  bool got_the_pid = false;
  // Another task may take the pid first: then that recording runs as any other.
  for (int attempt = 0; attempt < 20 && !got_the_pid; ++attempt) {
    std::ofstream("/proc/sys/kernel/ns_last_pid") << pid - 1;
    reused = RunCommand({kCstool, "record", "-o", dir_ / "again.dat", "--", "true"});
    got_the_pid = reused.err.find("under this process's pid") != std::string::npos;
  }
  ASSERT_TRUE(got_the_pid) << "pid " << pid << " never came back: " << reused.err;
  EXPECT_EQ(reused.status, 1);
  EXPECT_NE(reused.err.find("cstool record: the killed recording into '" + out.string() +
                            "' left its tracefs instance 'cstool-" + std::to_string(pid) +
                            "' under this process's pid, holding events it had not read: run "
                            "`cstool record --recover " +
                            out.string() + "` to take the events still held there, or remove"),
            std::string::npos)
      << reused.err;
  EXPECT_TRUE(fs::exists(instance));
  // Off: the dead recorder's pid filter names whoever gets its workload's pids next.
  EXPECT_EQ(ReadWholeFile(instance / "tracing_on"), "0\n");
  EXPECT_TRUE(fs::exists(fs::path(kRecoverableDir) / std::to_string(pid)));
  CommandResult recover = RunCommand({kCstool, "record", "--recover", out});
  ASSERT_EQ(recover.status, 0) << recover.err;
  EXPECT_NE(recover.err.find("unread in the killed recorder's buffers"), std::string::npos)
      << recover.err;
  ExpectTheWholeSlowRun(out);
}

// Leftovers removed by hand (no recovery note any more): nothing to keep the instances
// for, and the next session removes them without a word.
TEST_F(RecordFaults, AKilledRecordingsInstancesGoOnceItsNoteIsRemoved) {
  const fs::path out = dir_ / "gone.dat";
  const pid_t pid = KillRecorderLeavingItsInstance(out, dir_ / "rec.err");
  ASSERT_GT(pid, 0) << ReadWholeFile(dir_ / "rec.err");
  const fs::path instance = InstanceOf(pid);
  ASSERT_TRUE(fs::exists(fs::path(kRecoverableDir) / std::to_string(pid)));
  for (const std::string& name : FilesIn(dir_))
    if (name.starts_with("gone.dat.")) fs::remove(dir_ / name);
  CommandResult other = RunCommand({kCstool, "record", "-o", dir_ / "other.dat", "--", "true"});
  EXPECT_EQ(other.status, 0) << other.err;
  EXPECT_FALSE(fs::exists(instance));
  EXPECT_EQ(other.err.find("kept"), std::string::npos) << other.err;
  EXPECT_FALSE(fs::exists(fs::path(kRecoverableDir) / std::to_string(pid)));
}

// The note names the killed recorder's instances by their stamp: one made since under the
// same name (a recorder that got the same pid) is another recording's, and not read.
TEST_F(RecordFaults, RecoverReadsOnlyTheInstanceItsNoteNames) {
  const fs::path out = dir_ / "other.dat";
  Background rec({kCstool, "record", "-o", out, "--", kWorkload, "nanosleep", "300", "10000"},
                 dir_ / "rec.err");
  ASSERT_TRUE(rec.WaitLive());
  const fs::path note_path = dir_ / "other.dat.recovery.json";
  for (int i = 0; i < 500 && !fs::exists(note_path); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::vector<pid_t> children = ChildrenOf(rec.pid());
  ASSERT_EQ(::kill(rec.pid(), SIGKILL), 0);
  EXPECT_EQ(rec.Wait(), 128 + SIGKILL);
  nlohmann::json note = nlohmann::json::parse(ReadWholeFile(note_path));
  ASSERT_TRUE(note.contains("instance_stamps")) << note.dump();
  ASSERT_TRUE(note["instance_stamps"].contains("")) << note.dump();
  for (auto& [buffer, stamp] : note["instance_stamps"].items()) stamp = 1;  // another's
  std::ofstream(note_path, std::ios::trunc) << note.dump();
  for (pid_t c : children) ::kill(c, SIGKILL);  // the orphaned workload
  CommandResult recover = RunCommand({kCstool, "record", "--recover", out});
  ASSERT_EQ(recover.status, 0) << recover.err;
  EXPECT_EQ(recover.err.find("unread in the killed recorder's buffers"), std::string::npos)
      << recover.err;
  EXPECT_NE(recover.err.find("its tracefs instance was not there to read"), std::string::npos)
      << recover.err;
}

INSTANTIATE_TEST_SUITE_P(Compression, SigkillRecover,
                         ::testing::Values("--compress=none", "--compress"), [](const auto& info) {
                           return std::string(info.index == 0 ? "Pages" : "Compressed");
                         });

// A copy of a recording cut short (copied while it was written, a partial download) is
// read by --salvage up to the cut. The unfiltered run-time buffer is the last thing in
// the file: the first to go, and left out with a warning rather than failing the report.
TEST_F(RecordFaults, ACutCopyIsSalvagedWithoutItsRunTimeBuffer) {
  for (const char* compress : {"--compress=none", "--compress"}) {
    SCOPED_TRACE(compress);
    const fs::path out = dir_ / "whole.dat";
    CommandResult rec = RunCommand(
        {kCstool, "record", compress, "-o", out, "--", kWorkload, "pingpong", "2000", "0"});
    ASSERT_EQ(rec.status, 0) << rec.err;
    const std::string image = ReadWholeFile(out);
    const fs::path cut = dir_ / "cut.dat";
    // Pages in place: 5000 bytes off the end cut the buffer's table or data. Compressed:
    // the buffer's section goes first, and the trace's last chunks with it.
    const size_t keep = std::string_view(compress) == "--compress=none" ? image.size() - 5000
                                                                        : image.size() * 3 / 4;
    std::ofstream(cut, std::ios::binary) << image.substr(0, keep);
    CommandResult strict = RunCommand({kCstool, "report", cut});
    EXPECT_NE(strict.status, 0);
    EXPECT_NE(strict.err.find("truncated at offset"), std::string::npos) << strict.err;
    // As for a cut anywhere in the data (a cut buffer table alone did not say it).
    EXPECT_NE(strict.err.find("(--salvage reports what the file still holds)"), std::string::npos)
        << strict.err;
    CommandResult salvaged = RunCommand({kCstool, "report", "--salvage", cut});
    EXPECT_EQ(salvaged.status, 0) << salvaged.err;
    EXPECT_NE(salvaged.err.find("the unfiltered run-time buffer (cstool_runtime) is not read: " +
                                cut.string() + ": truncated at offset"),
              std::string::npos)
        << salvaged.err;
    EXPECT_NE(salvaged.out.find("cstool_workload"), std::string::npos) << salvaged.out;
  }
}

// Cut inside the run-time buffer's last chunk (its data ends the file's): the error
// names the buffer, not only a CPU (which read as the trace's), and --salvage says what
// it skipped there (increments: its numbers changed with no word before).
TEST_F(RecordFaults, DamageInTheRunTimeBufferIsNamedAndSaid) {
  const fs::path out = dir_ / "whole.dat";
  CommandResult rec = RunCommand(
      {kCstool, "record", "--compress", "-o", out, "--", kWorkload, "pingpong", "2000", "0"});
  ASSERT_EQ(rec.status, 0) << rec.err;
  const std::string image = ReadWholeFile(out);
  const fs::path cut = dir_ / "cut.dat";
  // The buffer's last chunk ends a little before the file does (some 120 bytes here, and
  // the chunk some 400): the first of these cuts that reaches into it, not only into its
  // table, is read as damage in the buffer's data.
  const std::string named = cut.string() + " (buffer cstool_runtime): truncated at offset";
  CommandResult strict;
  for (const size_t off_the_end : {150, 250, 400, 600, 900}) {
    std::ofstream(cut, std::ios::binary) << image.substr(0, image.size() - off_the_end);
    strict = RunCommand({kCstool, "report", cut});
    if (strict.err.find(named) != std::string::npos) break;
  }
  EXPECT_NE(strict.status, 0);
  EXPECT_NE(strict.err.find(named), std::string::npos) << strict.err;
  CommandResult salvaged = RunCommand({kCstool, "report", "--salvage", cut});
  EXPECT_EQ(salvaged.status, 0) << salvaged.err;
  EXPECT_NE(salvaged.err.find("warning: salvaged: " + cut.string() +
                              " (buffer cstool_runtime): truncated at offset"),
            std::string::npos)
      << salvaged.err;
}

TEST_F(RecordFaults, InstanceRemovedFromUnderIt) {
  const fs::path out = dir_ / "x.dat";
  Background rec({kCstool, "record", "-o", out, "--", kWorkload, "nanosleep", "2000", "1000"},
                 dir_ / "rec.err");
  ASSERT_TRUE(rec.WaitLive());
  // Another process removes the instance. While cstool holds its per-CPU pipes open the
  // kernel refuses (EBUSY); if it ever allows it, cstool must stop with a clear message.
  const int rc = ::rmdir(rec.instance().c_str());
  const int err_no = errno;
  const int status = rec.Wait();
  const std::string err = ReadWholeFile(dir_ / "rec.err");
  EXPECT_LT(status, 128) << "crashed: " << err;
  if (rc != 0) {
    EXPECT_EQ(err_no, EBUSY) << std::strerror(err_no);
    EXPECT_EQ(status, 0) << err;  // the recording was not disturbed
  } else {
    EXPECT_NE(status, 0) << err;
    EXPECT_NE(err.find("instance"), std::string::npos) << err;
  }
  if (fs::exists(out)) {
    CommandResult rep = RunCommand({kCstool, "report", out});
    EXPECT_EQ(rep.status, 0) << rep.err;
  }
}

// A flight recorder reads none of its instance's files between dumps, yet holds one
// open all along: the kernel refuses to remove the instance, and another cstool sees
// its owner alive by it whatever the clocks say (a wall clock set forward made a live
// recorder's instance look older than it).
TEST_F(RecordFaults, AFlightRecordersInstanceIsHeldOpenBetweenDumps) {
  Background rec({kCstool, "record", "--flight", "2", "-N", "3", "-o", dir_ / "f.dat", "--",
                  kWorkload, "nanosleep", "2000", "1000"},
                 dir_ / "rec.err");
  ASSERT_TRUE(rec.WaitLive());
  const std::string prefix = rec.instance().string() + "/";
  bool held = false;
  for (const auto& fd : fs::directory_iterator("/proc/" + std::to_string(rec.pid()) + "/fd")) {
    std::error_code ec;
    held = held || fs::read_symlink(fd.path(), ec).string().rfind(prefix, 0) == 0;
  }
  EXPECT_TRUE(held);
  EXPECT_NE(::rmdir(rec.instance().c_str()), 0);
  EXPECT_EQ(errno, EBUSY) << std::strerror(errno);
  EXPECT_EQ(rec.Wait(), 0) << ReadWholeFile(dir_ / "rec.err");
  EXPECT_FALSE(fs::exists(rec.instance()));  // its own end removes it
}

// Unprivileged: `record` says which privilege it needs, in one line, exit 2; `report`
// works on any readable file.
class Unprivileged : public RecordFaults {
 protected:
  static std::vector<std::string> AsNobody(std::vector<std::string> argv) {
    argv.insert(argv.begin(),
                {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"});
    return argv;
  }
  void SetUp() override {
    RecordFaults::SetUp();
    if (IsSkipped()) return;
    if (::access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "no setpriv";
    // nobody must be able to reach the binary.
    if (RunCommand(AsNobody({"test", "-x", kCstool})).status != 0)
      GTEST_SKIP() << kCstool << " is not reachable for uid 65534";
  }
};

TEST_F(Unprivileged, RecordSaysWhatPrivilegeItNeeds) {
  CommandResult r =
      RunCommand(AsNobody({kCstool, "record", "-o", (dir_ / "x.dat").string(), "--", "/bin/true"}));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("cstool record: needs root (or CAP_PERFMON"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "x.dat"));
}

// --dump finds a flight recorder by its tracefs instance, which nobody cannot see: it
// said "no flight recorder is running" whether one ran or not.
TEST_F(Unprivileged, DumpSaysWhatPrivilegeItNeeds) {
  CommandResult r = RunCommand(AsNobody({kCstool, "record", "--dump"}));
  EXPECT_EQ(r.status, 2) << r.err;
  // (Not "needs root to trace": a dump traces nothing of its own.)
  EXPECT_NE(r.err.find("cstool record: --dump needs root, as the flight recorder does: it finds "
                       "the recorder by its tracefs instance"),
            std::string::npos)
      << r.err;
}

TEST_F(Unprivileged, ReportReadsAReadableFile) {
  const fs::path copy = dir_ / "golden.dat";
  fs::copy_file(std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/golden_mutex.dat", copy);
  fs::permissions(copy, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                            fs::perms::others_read);
  CommandResult r = RunCommand(AsNobody({kCstool, "report", copy, "--format", "json"}));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"threads\""), std::string::npos);
  // An unreadable file is an error naming it, not a privilege complaint.
  fs::permissions(copy, fs::perms::owner_read | fs::perms::owner_write);
  CommandResult denied = RunCommand(AsNobody({kCstool, "report", copy}));
  EXPECT_EQ(denied.status, 1) << denied.err;
  EXPECT_NE(denied.err.find(copy.string()), std::string::npos) << denied.err;
}

}  // namespace
}  // namespace cstool::testing
