#include "commands/record_command.h"

#include <fmt/core.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "base/cpu_list.h"
#include "base/errors.h"
#include "base/stop_signal.h"
#include "base/version.h"
#include "format/trace_file_writer.h"
#include "kernel/child_process.h"
#include "kernel/kernel_capture.h"
#include "kernel/proc_threads.h"
#include "model/recording_info.h"
#include "pipeline/kernel_agreement.h"
#include "tracefs/cpu_reader.h"
#include "tracefs/session_formats.h"
#include "tracefs/tracefs_session.h"

namespace cstool {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kLoopTick = std::chrono::milliseconds(10);
constexpr auto kStatusInterval = std::chrono::milliseconds(500);
constexpr double kChildGraceSeconds = 5.0;

int64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

int64_t TimevalNs(const timeval& tv) {
  return int64_t{tv.tv_sec} * 1000000000 + int64_t{tv.tv_usec} * 1000;
}

std::string HumanBytes(uint64_t b) {
  if (b >= (uint64_t{1} << 30)) return fmt::format("{:.2f} GiB", b / double(1 << 30));
  if (b >= (uint64_t{1} << 20)) return fmt::format("{:.1f} MiB", b / double(1 << 20));
  if (b >= 1024) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{} B", b);
}

// Keeps tid -> identity for every thread the recorder learnt about.
class ThreadTable {
 public:
  void Add(const std::vector<ThreadIdentity>& threads) {
    for (const auto& t : threads) {
      auto& slot = threads_[t.tid];
      if (slot.tid == 0 || !t.comm.empty()) slot = t;
    }
  }
  std::vector<ThreadIdentity> List() const {
    std::vector<ThreadIdentity> out;
    for (const auto& [tid, t] : threads_) out.push_back(t);
    return out;
  }

 private:
  std::map<int, ThreadIdentity> threads_;
};

// "<pid> <comm>" lines: the kernel's saved_cmdlines, completed by threads from /proc.
std::string SavedCmdlines(const std::vector<ThreadIdentity>& threads) {
  std::map<int, std::string> comms;
  try {
    std::istringstream in(ReadTopLevelTracingFile("saved_cmdlines"));
    std::string line;
    while (std::getline(in, line)) {
      size_t sp = line.find(' ');
      if (sp == std::string::npos) continue;
      comms[std::atoi(line.c_str())] = line.substr(sp + 1);
    }
  } catch (const Error&) {
    // saved_cmdlines is a convenience; /proc names follow.
  }
  for (const auto& t : threads)
    if (!t.comm.empty()) comms[t.tid] = t.comm;
  std::string out;
  for (const auto& [pid, comm] : comms) out += fmt::format("{} {}\n", pid, comm);
  return out;
}

uint64_t StatValue(const std::string& stats, std::string_view key) {
  std::istringstream in(stats);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0 && line.size() > key.size() && line[key.size()] == ':')
      return std::strtoull(line.c_str() + key.size() + 1, nullptr, 10);
  }
  return 0;
}

uint64_t LostOf(const CpuRecordStats& s) {
  // Overwritten events show up both in the pages' missed counts and in "overrun".
  return std::max(s.lost_events, s.overrun) + s.dropped;
}

// The progress line (shown by terminal sinks only).
class LiveStatus {
 public:
  explicit LiveStatus(Messages& messages) : messages_(messages) {}
  ~LiveStatus() { Clear(); }
  void Update(const std::vector<std::unique_ptr<CpuReader>>& readers) {
    auto now = Clock::now();
    if (now - last_ < kStatusInterval) return;
    uint64_t events = 0, bytes = 0, lost = 0;
    for (const auto& r : readers) {
      auto s = r->Stats();
      events += s.events;
      bytes += s.pages * page_size_;
      lost += s.lost_events;
    }
    double dt = std::chrono::duration<double>(now - last_).count();
    double rate = last_events_ <= events && dt > 0 ? (events - last_events_) / dt : 0;
    messages_.Progress(fmt::format("{:.0f} events/s, {} events, {}, lost {}", rate, events,
                                   HumanBytes(bytes), lost));
    shown_ = true;
    last_ = now;
    last_events_ = events;
  }
  void Clear() {
    if (shown_) messages_.Progress("");
    shown_ = false;
  }

 private:
  Messages& messages_;
  uint64_t page_size_ = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  bool shown_ = false;
  Clock::time_point last_ = Clock::now();
  uint64_t last_events_ = 0;
};

void PrintSummary(Messages& messages, const RecordingInfo& info, const std::string& path,
                  double seconds, uint64_t file_size) {
  uint64_t total = 0, lost = 0;
  for (const auto& c : info.cpus) {
    total += c.events;
    lost += LostOf(c);
  }
  messages.Status(fmt::format("wrote {} ({}) in {:.3f} s", path, HumanBytes(file_size), seconds));
  messages.Detail(fmt::format("  {:>5} {:>12} {:>10} {:>10} {:>10} {:>10}", "cpu", "events", "lost",
                              "lost-pages", "overrun", "dropped"));
  for (const auto& c : info.cpus)
    messages.Detail(fmt::format("  {:>5} {:>12} {:>10} {:>10} {:>10} {:>10}", c.cpu, c.events,
                                LostOf(c), c.lost_pages, c.overrun, c.dropped));
  messages.Detail(fmt::format("  total {} events, {:.0f} events/s, lost {} events", total,
                              seconds > 0 ? total / seconds : 0.0, lost));
  for (const auto& c : info.cpus) {
    if (c.lost_pages > 0 || LostOf(c) > 0)
      messages.Warning(fmt::format("events were lost on CPU {}; try a bigger buffer (-b)", c.cpu));
  }
}

std::filesystem::path PagesFileFor(const std::filesystem::path& out, int cpu) {
  return std::filesystem::path(fmt::format("{}.cpu{}.tmp", out.string(), cpu));
}

}  // namespace

void ValidateRecordOptions(const RecordOptions& o) {
  if (o.command.empty() && o.pids.empty() && !o.system_wide)
    throw Error("nothing to record: give -- CMD, -p PID or -a", ExitCode::kUsage);
  if (o.buffer_kb == 0) throw Error("buffer size (-b) must be at least 1 KiB", ExitCode::kUsage);
  if (o.duration_s < 0 || !std::isfinite(o.duration_s))
    throw Error("duration (-N) must be a positive number of seconds", ExitCode::kUsage);
  if (o.output.empty()) throw Error("empty output file name (-o)", ExitCode::kUsage);
  if (o.no_defaults && o.events.empty())
    throw Error("--no-defaults needs at least one -e event", ExitCode::kUsage);
  for (int pid : o.pids)
    if (pid <= 0) throw Error(fmt::format("invalid pid {}", pid), ExitCode::kUsage);
}

int RunRecord(const RecordOptions& options, Messages& messages) {
  ValidateRecordOptions(options);
  TracefsSession::CheckAccess();  // privilege first: its message says what is needed
  if (!options.command.empty()) ResolveCommand(options.command[0]);
  for (int pid : options.pids)
    if (!ProcessExists(pid)) throw Error(fmt::format("no such process: {}", pid), ExitCode::kUsage);

  std::vector<int> online = OnlineCpus();
  std::vector<int> cpus = options.cpus.empty() ? online : options.cpus;
  for (int c : cpus)
    if (!std::binary_search(online.begin(), online.end(), c))
      throw Error(fmt::format("CPU {} is not online (online: {})", c, FormatCpuList(online)),
                  ExitCode::kUsage);
  int file_cpus = std::max(static_cast<int>(::sysconf(_SC_NPROCESSORS_CONF)), cpus.back() + 1);

  StopSignalScope signals;
  const std::filesystem::path output(options.output);

  if (std::filesystem::is_directory(output))
    throw Error(fmt::format("output '{}' is a directory", output.string()), ExitCode::kUsage);
  {
    // Fail now, not after the recording, if the output cannot be created.
    std::filesystem::path probe = output.string() + ".tmp";
    if (FILE* f = std::fopen(probe.c_str(), "w")) {
      std::fclose(f);
      std::filesystem::remove(probe);
    } else {
      throw Error(fmt::format("cannot create '{}': {}", probe.string(), std::strerror(errno)));
    }
  }

  SessionConfig config;
  config.event_set = options.no_defaults ? EventSet::kNone : options.event_set;
  config.buffer_kb = options.buffer_kb;
  config.cpus = options.cpus;
  config.extra_events = options.events;
  config.filter_pids = !options.system_wide;
  TracefsSession session(config, messages);

  RecordingInfo info;
  info.tool_version = Version();
  info.command = options.command;
  info.system_wide = options.system_wide;
  info.trace_clock = session.clock();
  info.missing_events = session.missing_events();

  // Readers (and their temporary page files) are destroyed before the session.
  std::vector<std::unique_ptr<CpuReader>> readers;
  for (int c : cpus)
    readers.push_back(std::make_unique<CpuReader>(session.instance(), c, PagesFileFor(output, c)));
  ThreadTable threads;
  std::optional<ChildProcess> child;
  if (!options.command.empty()) {
    child.emplace(options.command);
    info.target_pids.push_back(child->pid());
    info.child.pid = child->pid();
    session.AddPids({child->pid()});
    std::string comm = std::filesystem::path(options.command[0]).filename().string().substr(0, 15);
    threads.Add({{child->pid(), child->pid(), comm}});
  }
  for (int pid : options.pids) {
    info.target_pids.push_back(pid);
    auto list = ListThreads(pid);
    threads.Add(list);
    std::vector<int> tids;
    for (const auto& t : list) tids.push_back(t.tid);
    if (tids.empty()) tids.push_back(pid);
    session.AddPids(tids);
  }
  if (options.system_wide) threads.Add(ListAllThreads());
  // Ground truth: taskstats exits and delay accounting from before any traced thread can
  // exit until the command is reaped.
  KernelCapture kernel({.pids = info.target_pids, .accept_all = options.system_wide});
  for (const std::string& w : kernel.warnings()) messages.Warning(w);

  for (auto& r : readers) {
    r->Start();
    r->AvoidOwnCpu(online);
  }
  if (options.system_wide && options.exclude_self) {
    // Like trace-cmd: the recorder's own activity is not part of "everything".
    std::vector<int> own;
    for (const auto& t : ListThreads(::getpid())) own.push_back(t.tid);
    session.ExcludePids(own);
  }
  // The child's switch-out into its release wait must happen before tracing starts:
  // the baseline counters below include it, so the trace must not.
  if (child) child->WaitUntilBlocked();
  session.Start();
  info.start_ts = MonotonicNs();
  auto started = Clock::now();

  if (child) {
    if (auto cs = ReadContextSwitches(child->pid())) {
      info.child.baseline_nvcsw = cs->voluntary;
      info.child.baseline_nivcsw = cs->involuntary;
    }
  }
  // While tracing is live (and the child still blocked): the report cuts the trace here.
  kernel.SnapshotStart(info.target_pids);
  if (child) child->Release();

  LiveStatus status(messages);
  auto deadline =
      options.duration_s > 0
          ? std::optional(started + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(options.duration_s)))
          : std::nullopt;
  auto last_scan = Clock::now();
  bool timed_out = false;
  for (;;) {
    if (StopSignalScope::Received()) break;
    if (child && child->TryReap()) break;
    if (!child && !options.system_wide && !options.pids.empty() &&
        std::none_of(options.pids.begin(), options.pids.end(), ProcessExists))
      break;
    if (deadline && Clock::now() >= *deadline) {
      timed_out = true;
      break;
    }
    if (std::any_of(readers.begin(), readers.end(), [](const auto& r) { return r->failed(); }))
      break;
    if (Clock::now() - last_scan >= kStatusInterval) {
      for (int pid : info.target_pids) threads.Add(ListThreads(pid));
      last_scan = Clock::now();
    }
    status.Update(readers);
    std::this_thread::sleep_for(kLoopTick);
  }
  status.Clear();
  for (int pid : info.target_pids) threads.Add(ListThreads(pid));
  {
    // Threads still alive, sampled while tracing is still live.
    std::set<int32_t> procs(info.target_pids.begin(), info.target_pids.end());
    for (const ThreadIdentity& t : threads.List()) procs.insert(t.tgid != 0 ? t.tgid : t.tid);
    std::vector<int32_t> list(procs.begin(), procs.end());
    kernel.SnapshotEnd(list);
  }

  session.Stop();
  info.end_ts = MonotonicNs();
  double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  for (auto& r : readers) r->StopAndFlush();

  int sig = StopSignalScope::Received();
  if (child && !child->reaped()) {
    // SIGTERM to cstool, or SIGINT sent with kill(2), does not reach the child by
    // itself; Ctrl-C on the terminal already did. -N ends the command like timeout(1).
    if (sig && !(sig == SIGINT && StopSignalScope::FromKernel())) child->Signal(sig);
    if (!sig && timed_out) child->Signal(SIGTERM);
    child->ReapWithin(kChildGraceSeconds);
  }
  if (child && child->reaped()) {
    info.child.reaped = true;
    info.child.wait_status = child->wait_status();
    info.child.exit_nvcsw = static_cast<uint64_t>(child->usage().ru_nvcsw);
    info.child.exit_nivcsw = static_cast<uint64_t>(child->usage().ru_nivcsw);
    info.child.utime_ns = TimevalNs(child->usage().ru_utime);
    info.child.stime_ns = TimevalNs(child->usage().ru_stime);
  }

  info.kernel_counters = kernel.Finish();

  TraceFileContents contents = SessionTraceContents(session);
  info.threads = threads.List();
  contents.saved_cmdlines = SavedCmdlines(info.threads);
  contents.cpus.resize(static_cast<size_t>(file_cpus));
  for (auto& r : readers) {
    CpuRecordStats s = r->Stats();
    std::string stats = session.ReadCpuStats(r->cpu());
    s.overrun = StatValue(stats, "overrun");
    s.dropped = StatValue(stats, "dropped events");
    info.cpus.push_back(s);
    auto& slot = contents.cpus[static_cast<size_t>(r->cpu())];
    slot.stats = stats;
    slot.pages_file = r->pages_file();
  }
  // comm and argv need not be UTF-8 (prctl PR_SET_NAME takes any bytes): never throw here.
  if (std::error_code ec; !std::filesystem::is_directory(
          output.parent_path().empty() ? std::filesystem::path(".") : output.parent_path(), ec))
    throw Error(fmt::format("cannot write '{}': its directory was removed during the recording",
                            output.string()));
  contents.cstool_info_json =
      nlohmann::json(info).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  WriteTraceFile(output, contents);
  readers.clear();  // removes the page files

  struct stat st {};
  uint64_t file_size = ::stat(output.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  if (options.print_summary) {
    PrintSummary(messages, info, output.string(), seconds, file_size);
    messages.Detail(fmt::format("  {}", KernelAgreementLine(output.string())));
  }

  if (child) {
    if (child->reaped()) return child->ExitCode();
    messages.Warning(fmt::format("command (pid {}) is still running", child->pid()));
    return 128 + (sig ? sig : SIGTERM);
  }
  return 0;  // -p / -a: a signal or -N is the normal way to stop
}

}  // namespace cstool
