#include "recording/recorder.h"

#include <fmt/core.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "base/cpu_list.h"
#include "base/dump_signal.h"
#include "base/errors.h"
#include "base/output_file.h"
#include "base/stop_signal.h"
#include "base/version.h"
#include "counters/counter_samples.h"
#include "counters/event_list.h"
#include "counters/thread_counters.h"
#include "format/trace_file_format.h"
#include "format/trace_file_writer.h"
#include "kernel/child_process.h"
#include "kernel/cpu_steal.h"
#include "kernel/cpu_throttling.h"
#include "kernel/kallsyms.h"
#include "kernel/kernel_capture.h"
#include "kernel/kernel_counters.h"
#include "kernel/proc_seed.h"
#include "kernel/proc_threads.h"
#include "recording/flight_window.h"
#include "recording/kernel_window.h"
#include "recording/previous_output.h"
#include "recording/progress_line.h"
#include "recording/recovery.h"
#include "tracefs/cpu_reader.h"
#include "tracefs/live_cpu_source.h"
#include "tracefs/recoverable_mark.h"
#include "tracefs/session_formats.h"
#include "tracefs/tracefs_session.h"
#include "tracefs/write_budget.h"

namespace cstool {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kLoopTick = std::chrono::milliseconds(10);
constexpr auto kThreadScanInterval = std::chrono::milliseconds(500);
constexpr double kChildGraceSeconds = 5.0;
// --trigger: pages read per CPU and loop tick at most (64 MiB of 4 KiB pages).
constexpr size_t kMaxTriggerPagesPerTick = 16384;
// --trigger: it is fed the records up to this long before the read started,
// so that a record another CPU was still committing then is not passed over.
constexpr int64_t kFlightCutLagNs = 2000000;  // 2 ms
// Room kept beyond the measured header for what the recording info grows by (threads
// learnt, per-CPU statistics) and the file's own section headers.
constexpr uint64_t kFileSlackBytes = 256 * 1024;
// The least room for events a --max-size must leave: one compressed chunk.
constexpr uint64_t kMinEventBytes = 64 * 1024;
// Room per CPU kept for the pages read at the stop (WriteBudget's stop reserve): a
// partly filled page and a little reading lag.
constexpr uint64_t kStopReserveBytesPerCpu = 64 * 1024;

// Where an idle CPU began queueing the tasks other CPUs woke for it (the cross-CPU call of
// sched_ttwu_pending): the enqueue reads the runqueue clock right after, and the host can
// stall the virtual CPU before its sched_wakeup is written (40 us seen). The flush is the
// only event that bounds that clock from below.
const EventName kWakelistFlush{"csd", "csd_function_entry"};
constexpr const char* kWakelistFunction = "sched_ttwu_pending";

// The function's address when its flushes can be traced: the kernel has the event and
// shows the address (kptr_restrict allows it). One read of /proc/kallsyms (120 k lines).
std::optional<uint64_t> TraceableWakelistFunction() {
  if (!TracefsSession::HasEvent(kWakelistFlush)) return std::nullopt;
  return KernelSymbolAddress(kWakelistFunction);
}

std::string WakelistFlushFilter(uint64_t function) {
  return fmt::format("func == {:#x}", function);
}

int64_t TimevalNs(const timeval& tv) {
  return int64_t{tv.tv_sec} * 1000000000 + int64_t{tv.tv_usec} * 1000;
}

// Keeps tid -> identity for every thread the recorder learnt about.
class ThreadTable {
 public:
  void Add(const std::vector<ThreadIdentity>& threads) {
    for (const auto& t : threads) {
      auto& slot = threads_[t.tid];
      const int32_t ppid = slot.ppid;
      if (slot.tid == 0 || !t.comm.empty()) slot = t;
      // The parent first seen stays: an orphan reparented later was still created by it.
      if (ppid != 0) slot.ppid = ppid;
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
  return static_cast<uint64_t>(CpuStatField(stats, key));
}

// The recovery note exists exactly while the page files do: removed with them when the
// recording ends (normally or by an error), left with them by kill -9.
class RecoveryNote {
 public:
  explicit RecoveryNote(std::filesystem::path out) : out_(std::move(out)) {}
  ~RecoveryNote() {
    std::error_code ec;
    if (written_ && !keep_) std::filesystem::remove(RecoveryNoteFor(out_), ec);
  }
  void Keep() { keep_ = true; }
  RecoveryNote(const RecoveryNote&) = delete;
  RecoveryNote& operator=(const RecoveryNote&) = delete;
  void Write(const TraceFileContents& contents, const RecordingInfo& info, int file_cpus,
             RecoveryNoteStage stage = RecoveryNoteStage::kRecording) {
    WriteRecoveryNote(out_, contents, info, file_cpus, stage);
    written_ = true;
    // Killed from here on, its instances hold what --recover needs: the next session
    // keeps them. (Ending any other way, this recorder reads them out itself.)
    if (!mark_) mark_.emplace(out_, RecoveryNoteFor(out_));
  }

 private:
  std::filesystem::path out_;
  bool written_ = false;
  bool keep_ = false;
  std::optional<RecoverableMark> mark_;
};

// One recording. Members are destroyed in reverse order: the kernel capture, the child
// (killed if never reaped), the readers (and their page files), then the session.
class Recorder {
 public:
  Recorder(const RecordOptions& options, Messages& messages, RecordListener* listener,
           LiveTrigger* trigger)
      : o_(options),
        messages_(messages),
        listener_(listener),
        trigger_(trigger),
        output_(options.output) {}

  RecordResult Run() {
    Prepare();
    OpenSession();
    StartTargets();
    StartTracing();
    ReadLoop();
    StopAndDrain();
    ReapChild();
    CollectKernelCounters();
    WriteFile();
    return Result();
  }

 private:
  void Prepare();
  void OpenSession();
  void OpenUnfilteredRuntime(const SessionConfig& main);
  void StartTargets();
  void Follow(const std::vector<int>& tids);
  void WriteRecoveryNote();
  void MeasureHeader();
  void UpdateBudget();
  // What the output's file system can still take (none known if statvfs fails).
  std::optional<uint64_t> FreeBytes() const;
  uint64_t StopReserveBytes() const { return kStopReserveBytesPerCpu * cpus_.size(); }
  // What --max-size keeps besides the header and the events: the room for the recording's
  // end (the info's growth, each CPU's last pages), used only as far as the file needs.
  uint64_t EndRoomBytes() const { return kFileSlackBytes + StopReserveBytes(); }
  void StartTracing();
  void ReadAttachSeeds();
  std::vector<int> ScanTargetDescendants();
  static std::vector<AttachSeed> SeedsOf(const std::vector<int>& pids);
  bool flight() const { return o_.flight_s > 0; }
  // The instance that records the file's events: the flight window's current one with
  // --flight.
  TracefsSession& Session() { return kernel_window_ ? kernel_window_->session() : *session_; }
  // Every instance tracing the targets (the flight trigger's too).
  std::vector<TracefsSession*> Sessions() {
    std::vector<TracefsSession*> out{&Session()};
    if (trigger_session_) out.push_back(trigger_session_.get());
    return out;
  }
  int64_t WindowNs() const { return static_cast<int64_t>(o_.flight_s * 1e9); }
  // True when it wrote a dump.
  bool FlightTick();
  // The trigger's records read so far, those up to `cut` fed to it: its first hit in them.
  std::optional<TriggerHit> FeedTrigger(int64_t cut);
  // At the end: what the last tick left unfed (the command may end right after the
  // condition held); true when it wrote a dump.
  bool FinalFlightTick();
  // `last`: no dump comes after this one (the window goes on only to the end). False when
  // the dump could not be taken or written (said as a warning).
  bool WriteDump(const TriggerHit& hit, bool last);
  std::optional<std::filesystem::path> KeepPreviousOutput();
  void ReadLoop();
  bool ShouldStop();
  void ReportProgress();
  void StopAndDrain();
  void ReapChild();
  void SignalCommand(int sig);
  void CollectKernelCounters();
  // -c/-V: groups on the targets' threads not counted yet (a "start" sample each); the
  // final values of the ones that exited; every live thread at -T and at the end.
  void FollowCounters(int64_t now, bool with_descendants = false);
  void ReadExitedCounters(int64_t now);
  void SampleCounters(int64_t now, const char* kind);
  void FinishExitIo(const KernelCounterSet& kernel);
  // -c EVENT:ebs=N: moves the overflows written since the last call into the recording.
  void DrainOverflows();
  void WriteFile();
  RecordResult Result();

  const RecordOptions& o_;
  Messages& messages_;
  RecordListener* listener_;
  LiveTrigger* trigger_;
  const std::filesystem::path output_;

  std::vector<int> online_;
  std::vector<int> cpus_;
  int file_cpus_ = 0;
  std::optional<StopSignalScope> signals_;      // SIGINT/SIGTERM/SIGHUP end the read loop
  std::optional<DumpSignalScope> dump_signal_;  // --flight: SIGUSR1 asks for a dump
  std::unique_ptr<TracefsSession> session_;     // without --flight
  RecordingInfo info_;
  TraceFileContents contents_;  // the file's parts besides the pages, read before tracing
  // Beside a pid-filtered recording with sched_stat_runtime: an instance with that event
  // (and the moves and wakelist flushes), in every context but the followed tasks' (what
  // unfollowed tasks' contexts do to followed tasks), read into a buffer of its own in the file
  // (tracefile::kUnfilteredRuntimeBuffer) by the threads of readers_, which drive its
  // readers: declared before them, so destroyed after their threads stopped.
  std::unique_ptr<TracefsSession> unfiltered_session_;
  std::vector<std::unique_ptr<CpuReader>> unfiltered_readers_;
  std::vector<std::unique_ptr<CpuReader>> readers_;
  std::optional<RecoveryNote> recovery_note_;
  // What the readers may write: --max-size, and no more than the disk can take with
  // the file assembled from the page files at the end (see UpdateBudget).
  std::optional<WriteBudget> budget_;
  uint64_t header_bytes_ = 0;                // the file without any page
  uint64_t size_limit_ = UINT64_MAX;         // --max-size's part of the budget
  std::string ended_early_;                  // why the budget ended the recording
  std::optional<StealSource> steal_source_;  // chosen before tracing starts
  std::vector<CpuStealReading> steal_at_start_;
  // CPU bandwidth limits: every cgroup with a quota when tracing went live, and the cpu
  // cgroup each target process was seen in (a command may move itself into one).
  std::vector<CpuCgroupMount> cgroup_mounts_;
  std::vector<CpuLimitReading> limits_at_start_;  // and those first read later
  std::map<std::string, std::set<int32_t>> cgroups_seen_;
  void NoteCgroupsOf(const std::vector<int32_t>& pids, bool recheck_limits = true);
  std::vector<int32_t> TargetsAndDescendants() const;
  ThreadTable threads_;
  // --flight: every process the targets started that a scan saw, for the dumps' targets
  // (one that exited before a dump may still have events in its window).
  std::set<int> target_descendants_;
  std::optional<ChildProcess> child_;
  std::optional<KernelCapture> kernel_;  // not with --flight: dumps have no end counters

  // --flight: the window in the kernel, the trigger's instance and its ring buffers
  // read live, the dumps written.
  std::optional<KernelWindow> kernel_window_;
  std::unique_ptr<TracefsSession> trigger_session_;
  std::vector<std::unique_ptr<LiveCpuSource>> sources_;
  std::vector<std::string> dumps_;
  int dumps_not_written_ = 0;
  int next_dump_ = 1;
  int64_t rearm_ts_ = 0;  // a trigger hit before this is not dumped again
  bool dumps_done_ = false;
  std::optional<ThreadCounters> counters_;
  CounterRecording counter_samples_;
  std::set<int> counter_processes_;  // the targets and the descendants seen so far
  std::optional<Clock::time_point> next_counter_sample_;

  Clock::time_point started_;
  std::optional<Clock::time_point> deadline_;  // -N
  bool timed_out_ = false;
  bool command_timed_out_ = false;  // the command was running still: ReapChild ended it
  int signal_ = 0;
  double seconds_ = 0;
  uint64_t file_size_ = 0;
};

// Options, privileges, the command, pids and CPUs; fails before anything is set up if
// the output cannot be created.
void Recorder::Prepare() {
  ValidateRecordOptions(o_);
  TracefsSession::CheckAccess();  // privilege first: its message says what is needed
  if (!o_.command.empty()) ResolveCommand(o_.command[0]);
  for (int pid : o_.pids)
    if (!ProcessExists(pid)) throw Error(fmt::format("no such process: {}", pid), ExitCode::kUsage);

  if (!o_.counters.empty() || !o_.virtual_counters.empty()) {
    std::vector<CounterEvent> events;
    if (!o_.counters.empty()) {
      events = ParseEventList(o_.counters);
      ProbeEvents(events);
    }
    std::vector<VirtualCounter> virtuals;
    if (!o_.virtual_counters.empty()) virtuals = ParseVirtualList(o_.virtual_counters);
    counters_.emplace(std::move(events), std::move(virtuals));
    counter_samples_.names = counters_->names();
    counter_samples_.perf_columns = counters_->perf_columns();
    counter_samples_.interval_ns = std::llround(o_.counter_interval_s * 1e9);
    if (std::optional<size_t> c = counters_->sampled_column()) {
      counter_samples_.sampling.event = counters_->names()[*c];
      counter_samples_.sampling.period = counters_->sampling_period();
    }
  }

  online_ = OnlineCpus();
  cpus_ = o_.cpus.empty() ? online_ : o_.cpus;
  for (int c : cpus_)
    if (!std::binary_search(online_.begin(), online_.end(), c))
      throw Error(fmt::format("CPU {} is not online (online: {})", c, FormatCpuList(online_)),
                  ExitCode::kUsage);
  for (int c : online_)
    if (!std::binary_search(cpus_.begin(), cpus_.end(), c)) info_.untraced_cpus.push_back(c);
  file_cpus_ = std::max(static_cast<int>(::sysconf(_SC_NPROCESSORS_CONF)), cpus_.back() + 1);

  signals_.emplace();
  // Before the instance exists: `record --dump` finds flight recorders by it, and an
  // unhandled SIGUSR1 would end the process.
  if (flight()) dump_signal_.emplace();

  if (std::filesystem::is_directory(output_))
    throw Error(fmt::format("output '{}' is a directory", output_.string()), ExitCode::kUsage);
  // The file is written beside it and renamed over it: a device or FIFO (-o /dev/null)
  // would be replaced by a regular file.
  if (std::error_code ec;
      std::filesystem::exists(output_, ec) && !std::filesystem::is_regular_file(output_, ec))
    throw Error(fmt::format("output '{}' is not a regular file (the recording is written beside "
                            "it and renamed over it)",
                            output_.string()),
                ExitCode::kUsage);
  if (const int pid = LiveRecorderOf(output_))
    throw Error(fmt::format("a recording into '{}' is in progress (cstool pid {}); choose "
                            "another output (-o)",
                            output_.string(), pid),
                ExitCode::kUsage);
  CheckPreviousOutputCanBeKept(output_);
  // A new recording would write over a killed one's pages: they are its only copy.
  if (std::vector<std::filesystem::path> left = LeftoversOf(output_); !left.empty())
    throw Error(fmt::format("'{}' has the leftovers of a recording that was killed or could "
                            "not write it ({}{}): "
                            "recover them with `cstool record --recover {}`, or remove them",
                            output_.string(), left.front().string(),
                            left.size() > 1 ? fmt::format(" and {} more", left.size() - 1) : "",
                            output_.string()),
                ExitCode::kUsage);
  if (flight()) {
    // Dumps are numbered on from the highest one already there, never written over.
    const std::filesystem::path dir =
        output_.parent_path().empty() ? std::filesystem::path(".") : output_.parent_path();
    const std::string prefix = output_.filename().string() + ".";
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size() ||
          name.find_first_not_of("0123456789", prefix.size()) != std::string::npos)
        continue;
      next_dump_ = std::max(next_dump_, std::atoi(name.c_str() + prefix.size()) + 1);
    }
  }
  CheckCreatable(output_.string());
}

// The tracefs instance (events, buffer size, clock, CPU mask) and one reader per CPU.
void Recorder::OpenSession() {
  SessionConfig config;
  config.event_set = o_.no_defaults ? EventSet::kNone : o_.event_set;
  config.buffer_kb = o_.buffer_kb;
  config.cpus = o_.cpus;
  config.extra_events = o_.events;
  config.follow_forks = !o_.system_wide;  // -a writes only the recorder into a list
  config.kernel_stacks = o_.kernel_stacks;
  // -a traces the idle task's context, where idle CPUs flush their wakelists.
  // (0: none; no function is at address 0.)
  const uint64_t wakelist =
      o_.system_wide && !flight() && !o_.no_defaults ? TraceableWakelistFunction().value_or(0) : 0;
  const bool flushes_asked = std::any_of(o_.events.begin(), o_.events.end(), [](const auto& e) {
    return e == "csd" || e == "csd:*" || e == kWakelistFlush.Full();
  });
  if (wakelist != 0 && !flushes_asked) config.extra_events.push_back(kWakelistFlush.Full());
  if (flight()) {
    kernel_window_.emplace(config, cpus_, WindowNs(), o_.flight_cap_bytes, messages_);
  } else {
    session_ = std::make_unique<TracefsSession>(config, messages_);
  }
  if (wakelist != 0) {
    info_.wakelist_function = wakelist;
    // Asked for with -e, every function's calls are kept.
    if (!flushes_asked) session_->SetEventFilter(kWakelistFlush, WakelistFlushFilter(wakelist));
  }

  info_.tool_version = Version();
  info_.command = o_.command;
  info_.system_wide = o_.system_wide;
  info_.trace_clock = Session().clock();
  info_.missing_events = Session().missing_events();

  if (flight()) {
    // Nothing goes to a file until a dump. A trigger reads an instance of its own live,
    // with the scheduler events alone where they decide its condition.
    if (trigger_ == nullptr) return;
    SessionConfig trigger_config = config;
    if (trigger_->SchedulerEventsSuffice()) {
      trigger_config.event_set = EventSet::kScheduler;
      trigger_config.extra_events.clear();
    }
    trigger_config.kernel_stacks = false;
    trigger_config.instance_suffix = "trigger";
    NullMessages repeated;  // the window's instance said what this kernel lacks
    trigger_session_ = std::make_unique<TracefsSession>(trigger_config, repeated);
    for (int c : cpus_)
      sources_.push_back(std::make_unique<LiveCpuSource>(trigger_session_->instance(), c));
    return;
  }
  budget_.emplace(UINT64_MAX, StopReserveBytes());
  for (int c : cpus_)
    readers_.push_back(std::make_unique<CpuReader>(
        session_->instance(), c, PagesFileFor(output_, c), o_.FileCompression(), &*budget_));
  OpenUnfilteredRuntime(config);
}

// The pid filter drops every event written in an unfollowed task's context, among them
// the run-time increments such a context does for a followed task (a remote wakeup
// accounting the task running where it queues, the load balancer): the kernel's clock
// then moves in the trace with no sign. A second instance records sched_stat_runtime in
// every context but the followed tasks' (theirs are in the trace already: the two pid
// lists are each other's complement); the report takes from it the followed tasks'.
// The same filter drops the moves of a followed task done elsewhere (a wakeup from the
// idle task or another process, the load balancer): sched_migrate_task goes there too.
//
// -a leaves out only the recorder's own contexts (StartTracing); they do such increments
// too, when the recorder wakes one of its threads on another CPU. There the instance
// records those contexts alone: the same list, as its set_event_pid, and like the main
// instance's set_event_notrace_pid without event-fork. Those few contexts need a small
// buffer.
void Recorder::OpenUnfilteredRuntime(const SessionConfig& main) {
  const EventName runtime{"sched", "sched_stat_runtime"};
  if (std::none_of(session_->events().begin(), session_->events().end(),
                   [&](const EventName& e) { return e.Full() == runtime.Full(); }))
    return;
  if (o_.system_wide && !(o_.exclude_self && session_->CanExcludePids())) return;
  constexpr size_t kRecorderContextsBufferKb = 1024;
  SessionConfig config;
  config.event_set = EventSet::kNone;
  config.buffer_kb =
      o_.system_wide ? std::min(main.buffer_kb, kRecorderContextsBufferKb) : main.buffer_kb;
  config.cpus = main.cpus;
  config.extra_events = {runtime.Full()};
  const EventName migrate{"sched", "sched_migrate_task"};
  if (std::any_of(session_->events().begin(), session_->events().end(),
                  [&](const EventName& e) { return e.Full() == migrate.Full(); })) {
    config.extra_events.push_back(migrate.Full());
    info_.unfiltered_migrations = true;
  }
  // Idle context is never in a pid-filtered trace: its wakelist flushes come here.
  const std::optional<uint64_t> wakelist =
      o_.system_wide ? std::nullopt : TraceableWakelistFunction();
  if (wakelist) config.extra_events.push_back(kWakelistFlush.Full());
  config.follow_forks = main.follow_forks;  // its list is the complement of the main one's
  config.instance_suffix = kUnfilteredInstanceSuffix;
  unfiltered_session_ = std::make_unique<TracefsSession>(config, messages_);
  if (wakelist) {
    info_.wakelist_function = *wakelist;
    unfiltered_session_->SetEventFilter(kWakelistFlush, WakelistFlushFilter(*wakelist));
  }
  const std::string_view buffer = tracefile::kUnfilteredRuntimeBuffer;
  for (auto& reader : readers_) {  // the same CPU's trace reader drains it
    const int c = reader->cpu();
    unfiltered_readers_.push_back(std::make_unique<CpuReader>(unfiltered_session_->instance(), c,
                                                              PagesFileFor(output_, c, buffer),
                                                              o_.FileCompression(), &*budget_));
    reader->Drive(unfiltered_readers_.back().get());
  }
}

// Into the pid filter of every instance that traces the targets, and out of the unfiltered
// run-time instance's.
void Recorder::Follow(const std::vector<int>& tids) {
  if (o_.system_wide) return;  // -a -- CMD: a pid in set_event_pid would trace it alone
  for (TracefsSession* s : Sessions()) s->AddPids(tids);
  if (unfiltered_session_) unfiltered_session_->ExcludePids(tids);
}

// The `-- CMD` child (forked, held), the -p processes' threads in the pid filter, every
// thread with -a; then the kernel's ground truth: taskstats exits and delay accounting
// from before any traced thread can exit until the command is reaped.
void Recorder::StartTargets() {
  if (!o_.command.empty()) {
    child_.emplace(o_.command);
    info_.target_pids.push_back(child_->pid());
    info_.child.pid = child_->pid();
    Follow({child_->pid()});
    std::string comm = std::filesystem::path(o_.command[0]).filename().string().substr(0, 15);
    threads_.Add({{child_->pid(), child_->pid(), comm, static_cast<int32_t>(::getpid())}});
  }
  std::vector<int> pids = o_.pids;
  for (int& pid : pids)
    if (const int tgid = ProcessOfThread(pid); tgid != pid) {
      messages_.Warning(fmt::format("-p {}", ThreadOfAnotherProcessNote(pid, tgid)));
      pid = tgid;
    }
  const ProcessParents parents = ProcessParents::Read();
  for (int pid : std::vector<int>(pids)) {
    std::vector<int> descendants = parents.DescendantsOf(pid);
    if (o_.children) {
      pids.insert(pids.end(), descendants.begin(), descendants.end());
    } else if (!descendants.empty()) {
      messages_.Warning(UnfollowedDescendantsWarning(pid, descendants));
    }
  }
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  for (int pid : pids) {
    info_.target_pids.push_back(pid);
    auto list = ListThreads(pid);
    threads_.Add(list);
    std::vector<int> tids;
    tids.reserve(list.size() + 1);
    for (const auto& t : list) tids.push_back(t.tid);
    if (tids.empty()) tids.push_back(pid);
    Follow(tids);
  }
  if (o_.system_wide) threads_.Add(ListAllThreads());
  if (flight()) return;
  kernel_.emplace(KernelCaptureOptions{.pids = info_.target_pids, .accept_all = o_.system_wide});
  info_.exit_listener_tid = kernel_->exit_listener_tid();
  for (const std::string& w : kernel_->warnings()) messages_.Warning(w);
}

// What the file needs besides the pages, kept beside the page files before any is
// written, so that a recording killed from here on can still be assembled.
void Recorder::WriteRecoveryNote() {
  contents_ = SessionTraceContents(Session());
  contents_.compression = o_.FileCompression();
  if (unfiltered_session_) {
    contents_.instances.push_back({std::string(tracefile::kUnfilteredRuntimeBuffer), {}});
    AddEventFormats(*unfiltered_session_, contents_);
  }
  info_.threads = threads_.List();
  contents_.saved_cmdlines = SavedCmdlines(info_.threads);
  if (flight()) return;  // nothing is written until a dump, which is written whole
  recovery_note_.emplace(output_);
  recovery_note_->Write(contents_, info_, file_cpus_);
  MeasureHeader();
  UpdateBudget();
}

// The size of the file with every part but the pages, written once (compressed like
// the real one) beside the output and removed: the budget's fixed cost.
void Recorder::MeasureHeader() {
  const std::filesystem::path probe = output_.string() + ".header.tmp";
  TraceFileContents contents = contents_;
  contents.cpus.resize(static_cast<size_t>(file_cpus_));
  for (InstanceTraceData& inst : contents.instances)
    inst.cpus.resize(static_cast<size_t>(file_cpus_));
  contents.cstool_info_json =
      nlohmann::json(info_).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  try {
    WriteTraceFile(probe, contents);
  } catch (const Error& e) {
    throw Error(fmt::format("cannot start recording into '{}': {}", output_.string(), e.what()));
  }
  std::error_code ec;
  header_bytes_ = std::filesystem::file_size(probe, ec) + contents.cstool_info_json.size();
  std::filesystem::remove(probe, ec);
  // A limit that leaves no room for events would keep none: refused before the command runs.
  const uint64_t besides_events = header_bytes_ + EndRoomBytes();
  const uint64_t least = besides_events + kMinEventBytes;
  if (o_.max_size > 0 && o_.max_size < least)
    throw Error(
        fmt::format("--max-size {} leaves no room for events: the recording needs {} "
                    "besides its events (its header, {}, and {} of room for what the "
                    "recording info grows by and for each CPU's last pages, which the "
                    "file uses only as far as it needs); give at least {}",
                    HumanBytes(o_.max_size), HumanBytes(besides_events), HumanBytes(header_bytes_),
                    HumanBytes(EndRoomBytes()), fmt::format("{}K", (least + 1023) / 1024)),
        ExitCode::kUsage);
  // A disk without that room would have the command started, and stopped at once for a
  // file of no events: refused before the command runs too. The pages need their room
  // twice (UpdateBudget), the end's reserve included.
  const uint64_t least_free =
      header_bytes_ + kFileSlackBytes + 2 * (StopReserveBytes() + kMinEventBytes);
  if (const std::optional<uint64_t> free_bytes = FreeBytes();
      free_bytes && *free_bytes < least_free)
    throw Error(fmt::format(
        "cannot start recording into '{}': its file system has {} free, and the recording "
        "needs at least {} (its header, {}, room for its end, and one chunk of events, "
        "the pages counted twice as they are copied into the file at the end)",
        output_.string(), HumanBytes(*free_bytes), HumanBytes(least_free),
        HumanBytes(header_bytes_)));
}

std::optional<uint64_t> Recorder::FreeBytes() const {
  const std::filesystem::path dir =
      output_.parent_path().empty() ? std::filesystem::path(".") : output_.parent_path();
  struct statvfs vfs {};
  if (::statvfs(dir.c_str(), &vfs) != 0) return std::nullopt;
  return static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
}

// The readers' budget, every loop tick: --max-size less the header, and what the disk
// can still take. The page files are copied into the file at the end, so the pages
// need their room twice: with `free` bytes free now and `used` written, the final
// page bytes P must satisfy free - (P - used) >= header + P.
void Recorder::UpdateBudget() {
  if (!budget_) return;
  const uint64_t fixed = header_bytes_ + kFileSlackBytes;
  if (o_.max_size > 0) {
    size_limit_ = o_.max_size > fixed ? o_.max_size - fixed : 0;
    budget_->Lower(size_limit_);
  }
  const std::optional<uint64_t> free_bytes = FreeBytes();
  if (!free_bytes) return;
  const uint64_t have = *free_bytes + budget_->used();
  budget_->Lower(have > fixed ? (have - fixed) / 2 : 0);
}

// -p: each target thread's state just before tracing starts, stamped after the reads
// (and before any event): the report starts the threads in it.
void Recorder::ReadAttachSeeds() {
  std::vector<int> pids;  // the command's child starts in the trace
  for (int pid : info_.target_pids)
    if (!child_ || pid != child_->pid()) pids.push_back(pid);
  info_.attach_seeds = SeedsOf(pids);
  if (!info_.attach_seeds.empty()) info_.attach_seed_ts = MonotonicNowNs();
}

// The processes the targets started that tracing follows (with -a all; else those in the
// pid filter, which event-fork fills: not those already there at -p without --children,
// nor theirs), as /proc shows them now; each is kept in target_descendants_ too.
std::vector<int> Recorder::ScanTargetDescendants() {
  if (info_.target_pids.empty()) return {};
  // (-a follows every task: its pid filter lists only what it leaves out.)
  const std::set<int> followed = o_.system_wide ? std::set<int>{} : Session().FollowedPids();
  const ProcessParents parents = ProcessParents::Read();
  std::set<int> now;
  for (int pid : info_.target_pids)
    for (int p : parents.DescendantsOf(pid))
      if (o_.system_wide || followed.contains(p)) now.insert(p);
  target_descendants_.insert(now.begin(), now.end());
  return {now.begin(), now.end()};
}

// Every thread of `pids` as /proc shows it now.
std::vector<AttachSeed> Recorder::SeedsOf(const std::vector<int>& pids) {
  std::vector<AttachSeed> seeds;
  for (int pid : pids)
    for (const ThreadSeed& t : ReadProcSeed(pid).threads) seeds.push_back(t.ToAttachSeed());
  return seeds;
}

// Readers on, tracing on, the kernel's baseline, then the child released.
void Recorder::StartTracing() {
  steal_source_ = StealSource::Choose();
  // (Before tracing: the walk of a large cgroup tree is no part of the recording.)
  cgroup_mounts_ = ReadCpuCgroupMounts();
  limits_at_start_ = ReadCpuLimits(cgroup_mounts_, MonotonicNowNs());
  NoteCgroupsOf(info_.target_pids);
  for (auto& r : readers_) {
    r->Start();
    r->AvoidOwnCpu(online_);
  }
  if (o_.system_wide) {
    auto list = ListThreads(::getpid());
    std::vector<int> own;
    own.reserve(list.size());
    for (const auto& t : list) own.push_back(t.tid);
    if (o_.exclude_self) {
      // Like trace-cmd: the recorder's own activity is not part of "everything".
      for (TracefsSession* s : Sessions()) s->ExcludePids(own);
      if (unfiltered_session_) unfiltered_session_->AddPids(own);
      threads_.Add(list);
      info_.untraced_tids.assign(own.begin(), own.end());
    } else {
      info_.recorder_tids.assign(own.begin(), own.end());  // traced, not the report's
    }
  } else {
    // Not traced (no pid filter names them), but the other side of the workload's switches
    // when they preempt it: the report counts those switches as recording's cost.
    for (const auto& t : ListThreads(::getpid())) info_.recorder_tids.push_back(t.tid);
  }
  // The child's switch-out into its release wait must happen before tracing starts:
  // the baseline counters below include it, so the trace must not.
  if (child_) child_->WaitUntilBlocked();
  WriteRecoveryNote();  // all it knows before the first page (the untraced threads)
  // The seeds last, as close to tracing on as possible: a thread that changes state
  // between its /proc read and the first traced event starts in a state it left (a
  // thread read as R that fell asleep before tracing began stayed `preempted` until its
  // next switch-in: 14 ms of wait the kernel never counted).
  ReadAttachSeeds();
  if (trigger_) {
    TriggerScope scope{.target_pids = o_.system_wide ? std::vector<int32_t>{} : info_.target_pids,
                       .known_threads = threads_.List(),
                       .recorder_tids = info_.RecorderThreads(),
                       .seeds = info_.attach_seeds,
                       .seeds_ts = info_.attach_seed_ts,
                       .window_ns = WindowNs()};
    trigger_->Start(*trigger_session_, file_cpus_, scope);
  }
  if (trigger_session_) trigger_session_->Start();
  if (kernel_window_) {
    kernel_window_->Start(MonotonicNowNs());
  } else {
    if (unfiltered_session_) unfiltered_session_->Start();
    session_->Start();
  }
  info_.start_ts = MonotonicNowNs();
  steal_at_start_ = steal_source_->Read();
  started_ = Clock::now();
  // (The note written before tracing lacks only the seeds: a recovered file would
  // start those threads `unknown`.)
  if (recovery_note_ && !info_.attach_seeds.empty())
    recovery_note_->Write(contents_, info_, file_cpus_);
  if (o_.duration_s > 0)
    deadline_ = started_ + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(o_.duration_s));

  if (child_) {
    if (auto cs = ReadContextSwitches(child_->pid())) {
      info_.child.baseline_nvcsw = cs->voluntary;
      info_.child.baseline_nivcsw = cs->involuntary;
    }
  }
  // While tracing is live (and the child still blocked): the report cuts the trace here.
  if (kernel_) kernel_->SnapshotStart(info_.target_pids);
  // Counting begins with tracing live, so the two see the same on-CPU time.
  if (counters_) FollowCounters(MonotonicNowNs());
  if (counters_ && o_.counter_interval_s > 0)
    next_counter_sample_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double>(o_.counter_interval_s));
  if (child_) child_->Release();
}

// Whether the recording is over: a signal, the child reaped, every -p process gone,
// -N passed, or a reader failed.
bool Recorder::ShouldStop() {
  if (StopSignalScope::Received()) return true;
  if (child_ && child_->Exited()) {
    // Before the reap: the command's last thread, a zombie until then, still shows
    // its final -V counts in /proc.
    if (counters_) ReadExitedCounters(MonotonicNowNs());
    NoteCgroupsOf({child_->pid()});  // (a zombie stays in its cgroup on v2, not on v1)
    child_->TryReap();
    return true;
  }
  if (!child_ && !o_.system_wide && !info_.target_pids.empty() &&
      std::none_of(info_.target_pids.begin(), info_.target_pids.end(), ProcessExists))
    return true;
  if (budget_ && budget_->exhausted() && ended_early_.empty()) {
    ended_early_ = !budget_->disk_full() && budget_->limit() == size_limit_
                       ? fmt::format(
                             "--max-size {} reached (the room it leaves for events "
                             "after the header and the {} kept for the recording's "
                             "end, which the file uses only as far as it needs)",
                             HumanBytes(o_.max_size), HumanBytes(EndRoomBytes()))
                       : "the disk was full";
    timed_out_ = true;  // ends the command like -N
    return true;
  }
  if ((deadline_ && Clock::now() >= *deadline_) || dumps_done_) {
    timed_out_ = true;  // ends the command like -N
    return true;
  }
  auto failed = [](const auto& r) { return r->failed(); };
  return std::any_of(readers_.begin(), readers_.end(), failed) ||
         std::any_of(unfiltered_readers_.begin(), unfiltered_readers_.end(), failed);
}

void Recorder::ReportProgress() {
  if (listener_ == nullptr) return;
  RecordCounts counts;
  for (const auto& s : sources_) {
    counts.events += s->stats().events;
    counts.pages += s->stats().pages;
    counts.lost_events += s->stats().lost_events;
  }
  for (const auto& r : readers_) {
    CpuRecordStats s = r->Stats();
    counts.events += s.events;
    counts.pages += s.pages;
    counts.lost_events += s.lost_events;
  }
  listener_->Reading(counts);
}

// --flight, every loop tick: let the window's buffers grow to SECS seconds, read the
// trigger's ring buffers and feed it, and dump on a trigger hit or SIGUSR1.
bool Recorder::FlightTick() {
  const int64_t now = MonotonicNowNs();
  if (const std::string grown = kernel_window_->Grow(now); !grown.empty())
    messages_.Status(
        fmt::format("flight window buffers growing to hold {:g} s: {}", o_.flight_s, grown));
  std::optional<TriggerHit> hit = FeedTrigger(now - kFlightCutLagNs);
  if (DumpSignalScope::Take()) hit = TriggerHit{now, "SIGUSR1 (record --dump)"};
  // The dump that reaches --max-dumps is the last: its new instance is not grown back.
  return hit &&
         WriteDump(*hit, o_.max_dumps > 0 && static_cast<int>(dumps_.size()) + 1 >= o_.max_dumps);
}

std::optional<TriggerHit> Recorder::FeedTrigger(int64_t cut) {
  if (!trigger_) return std::nullopt;
  for (auto& s : sources_) s->Drain(kMaxTriggerPagesPerTick);
  std::vector<LiveCpuSource*> sources;
  for (auto& s : sources_) sources.push_back(s.get());
  std::optional<TriggerHit> hit = trigger_->Feed(sources, cut);
  // One episode makes one dump: the condition is ignored until the window holds none of
  // the previous dump's events.
  if (hit && hit->ts < rearm_ts_) return std::nullopt;
  return hit;
}

// The ticks feed the trigger up to the cut lag before their read, every kLoopTick: a
// command that ends within that of the condition holding (`sleep 0.2` with
// --trigger 'sleep>100ms': the sleep ends at its wakeup, the exit follows at once) would
// end the recording with the hit unseen, and no dump. Once the records being committed
// then have landed, everything up to the end is fed.
bool Recorder::FinalFlightTick() {
  if (!trigger_ || dumps_done_) return false;
  const int64_t end = MonotonicNowNs();
  std::this_thread::sleep_for(std::chrono::nanoseconds(kFlightCutLagNs));
  const std::optional<TriggerHit> hit = FeedTrigger(end);
  return hit && WriteDump(*hit, /*last=*/true);
}

// A dump: the window as a normal trace.dat, "<output>.<N>", with the recording's
// formats and threads; no kernel counters (they cover the whole run, not the window).
bool Recorder::WriteDump(const TriggerHit& hit, bool last) {
  const std::filesystem::path path = fmt::format("{}.{}", output_.string(), next_dump_);
  // (A process the targets started before the window has no fork in it: listed here, it
  // is the report's to follow.)
  std::set<int> alive_set(info_.target_pids.begin(), info_.target_pids.end());
  for (int pid : ScanTargetDescendants()) alive_set.insert(pid);
  const std::vector<int> alive(alive_set.begin(), alive_set.end());
  for (int pid : alive) threads_.Add(ListThreads(pid));
  // Before the window is taken: a thread that changes state after this read has an
  // event in the window, so a seed stands only for a thread the window never shows.
  std::vector<AttachSeed> window_seeds = SeedsOf(alive);
  int64_t now = 0;
  std::optional<FlightWindow> window;
  try {
    window.emplace(kernel_window_->Take(hit.ts, &now, /*grow_back=*/!last));
  } catch (const Error& e) {
    messages_.Warning(fmt::format("dump ({}) not taken: {}", hit.what, e.what()));
    ++dumps_not_written_;
    return false;
  }
  RecordingInfo info = info_;
  info.threads = threads_.List();
  // The window before the trigger, and what came after it until the dump.
  info.trigger_ts = std::min(hit.ts, now);
  info.start_ts = window->WindowStart(info.trigger_ts);
  info.end_ts = now;
  info.window_start_ts = info.start_ts;
  info.trigger = hit.what;
  info.child = ChildCounters{.pid = info_.child.pid};
  info.attach_seeds.clear();
  info.attach_seed_ts = 0;
  info.window_seeds = std::move(window_seeds);
  // The targets, and what they started: alive or seen by an earlier scan (its pid may be
  // another process's by now, so it gave no seed).
  std::set<int> targets(info_.target_pids.begin(), info_.target_pids.end());
  targets.insert(target_descendants_.begin(), target_descendants_.end());
  info.target_pids.assign(targets.begin(), targets.end());
  TraceFileContents contents = contents_;
  contents.saved_cmdlines = SavedCmdlines(info.threads);
  contents.cpus.resize(static_cast<size_t>(file_cpus_));

  // The page files live beside the dump while it is written.
  struct PageFiles {
    std::vector<std::filesystem::path> paths;
    ~PageFiles() {
      std::error_code ec;
      for (const auto& p : paths) std::filesystem::remove(p, ec);
    }
  } files;
  rearm_ts_ = now + WindowNs();
  try {
    for (int c : cpus_) {
      files.paths.push_back(PagesFileFor(path, c));
      info.cpus.push_back(window->WritePages(c, files.paths.back(), o_.FileCompression()));
      contents.cpus[static_cast<size_t>(c)].pages_file = files.paths.back();
    }
    contents.cstool_info_json =
        nlohmann::json(info).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    WriteTraceFile(path, contents);
  } catch (const Error& e) {
    // A dump that cannot be written (the disk is full) must not end the watch.
    messages_.Warning(fmt::format("dump ({}) not written: {}", hit.what, e.what()));
    ++dumps_not_written_;
    return false;
  }
  ++next_dump_;
  dumps_.push_back(path.string());
  std::string overwritten;
  if (window->overwrote())
    overwritten = window->overwritten_events() > 0
                      ? fmt::format("; {} older events overwritten", window->overwritten_events())
                      : "; older events overwritten";
  messages_.Status(fmt::format("dump {}: {}, the last {:.3f} s ({}){}", dumps_.size(),
                               path.string(), static_cast<double>(now - info.start_ts) / 1e9,
                               hit.what, overwritten));
  if (o_.max_dumps > 0 && static_cast<int>(dumps_.size()) >= o_.max_dumps) dumps_done_ = true;
  return true;
}

// The readers move pages to their files meanwhile; this thread watches for the end and
// keeps learning the targets' threads.
void Recorder::ReadLoop() {
  auto last_scan = Clock::now();
  bool last_tick_dumped = false;
  while (!ShouldStop()) {
    bool scanned = false;
    if (Clock::now() - last_scan >= kThreadScanInterval) {
      for (int pid : info_.target_pids) threads_.Add(ListThreads(pid));
      NoteCgroupsOf(TargetsAndDescendants());
      if (flight()) ScanTargetDescendants();
      last_scan = Clock::now();
      scanned = true;
    } else if (child_) {
      // The command at every tick: on cgroup v1 an exited process shows the root cgroup,
      // so one that moved into a cgroup with a quota and exited within a scan would be
      // seen in none.
      NoteCgroupsOf({child_->pid()}, /*recheck_limits=*/false);
    }
    if (counters_) {
      FollowCounters(MonotonicNowNs(), scanned);
      DrainOverflows();
      if (next_counter_sample_ && Clock::now() >= *next_counter_sample_) {
        SampleCounters(MonotonicNowNs(), "interval");
        while (*next_counter_sample_ <= Clock::now())
          *next_counter_sample_ += std::chrono::duration_cast<Clock::duration>(
              std::chrono::duration<double>(o_.counter_interval_s));
      }
    }
    last_tick_dumped = flight() && FlightTick();
    UpdateBudget();
    ReportProgress();
    std::this_thread::sleep_for(kLoopTick);
  }
  const bool dumped_at_end = flight() && FinalFlightTick();
  // (Not after --max-dumps: that many were asked for; nor right after a hit's dump, at the
  // last tick or the final one: its window is the end's, bar a tick.)
  if (flight() && o_.dump_at_end && !dumps_done_ && !dumped_at_end && !last_tick_dumped)
    WriteDump({MonotonicNowNs(), "end of the recording"}, /*last=*/true);
  if (listener_ != nullptr) listener_->Stopped();
}

// The threads still alive and their counters while tracing is still live; tracing off;
// the rest of each ring buffer into the page files.
void Recorder::StopAndDrain() {
  for (int pid : info_.target_pids) threads_.Add(ListThreads(pid));
  std::set<int32_t> procs(info_.target_pids.begin(), info_.target_pids.end());
  // The processes the targets started during the recording and still alive: their end
  // samples are all the kernel says of them (a process that exited had its exit record).
  const ProcessParents parents = ProcessParents::Read();
  for (int pid : info_.target_pids)
    for (int child : parents.DescendantsOf(pid)) {
      threads_.Add(ListThreads(child));
      procs.insert(child);
    }
  // And those whose parent exited: an orphan's parent is init (or a subreaper) now, but
  // the pid filter still follows it (`sh -c 'job & exit'`: the job had no end sample).
  // (A thread known already has its process added below.)
  if (!o_.system_wide) {
    std::set<int32_t> known;
    for (const ThreadIdentity& t : threads_.List()) known.insert(t.tid);
    for (int tid : Session().FollowedPids()) {
      if (known.contains(tid)) continue;
      const int pid = ProcessOfThread(tid);
      if (pid <= 0 || procs.contains(pid) || !ProcessExists(pid)) continue;
      procs.insert(pid);
      const std::vector<ThreadIdentity> list = ListThreads(pid);
      for (const ThreadIdentity& t : list) known.insert(t.tid);
      threads_.Add(list);
    }
  }
  for (const ThreadIdentity& t : threads_.List()) procs.insert(t.tgid != 0 ? t.tgid : t.tid);
  std::vector<int32_t> list(procs.begin(), procs.end());
  if (kernel_) kernel_->SnapshotEnd(list);
  NoteCgroupsOf(list);
  if (counters_) {
    FollowCounters(MonotonicNowNs());
    // Stopped first, so that every thread's end reading and its overflows agree.
    counters_->StopAll();
    SampleCounters(MonotonicNowNs(), "end");
    DrainOverflows();
  }

  for (TracefsSession* s : Sessions()) s->Stop();
  if (unfiltered_session_) unfiltered_session_->Stop();
  info_.end_ts = MonotonicNowNs();
  if (steal_source_) {
    info_.steal = PairSteal(steal_at_start_, steal_source_->Read());
    info_.steal_step_ns = info_.steal.empty() ? 0 : steal_source_->step_ns();
    info_.steal_source = steal_source_->name();
  }
  if (!limits_at_start_.empty())
    info_.throttling =
        PairThrottling(limits_at_start_, ReadCpuLimits(cgroup_mounts_, MonotonicNowNs()),
                       cgroups_seen_, info_.start_ts, o_.system_wide);
  seconds_ = std::chrono::duration<double>(Clock::now() - started_).count();
  if (budget_) budget_->OpenStopReserve();
  for (auto& r : readers_) r->StopAndFlush();
  for (auto& r : unfiltered_readers_) r->StopAndFlush();
}

// Where the processes `pids` are in the cpu controller's hierarchy now: a quota there (or
// above) throttles them. A cgroup with a quota but no reading yet (made, or given its
// quota, after tracing began: `systemd-run -p CPUQuota=`) is read from now on: at once
// where a process is new to it, else only with `recheck_limits` (not at every tick).
void Recorder::NoteCgroupsOf(const std::vector<int32_t>& pids, bool recheck_limits) {
  if (cgroup_mounts_.empty()) return;
  for (int32_t pid : pids) {
    if (pid == ::getpid()) continue;  // -a: the recorder is no recorded process
    const CpuCgroupOfTask c = ReadCpuCgroupOf(pid);
    if (c.cgroup.empty()) continue;
    const std::string key = CgroupKey(c.version, c.cgroup);
    if (!cgroups_seen_[key].insert(pid).second && !recheck_limits) continue;
    const bool read = std::any_of(
        limits_at_start_.begin(), limits_at_start_.end(),
        [&](const CpuLimitReading& r) { return CgroupKey(r.version, r.cgroup) == key; });
    if (read) continue;
    if (auto r = ReadCpuLimitOf(cgroup_mounts_, c.version, c.cgroup, MonotonicNowNs()))
      limits_at_start_.push_back(std::move(*r));
  }
}

// The targets and the processes they started (a script moving a child into a cgroup with
// a quota); with -a only the targets (the command), as every process is recorded.
std::vector<int32_t> Recorder::TargetsAndDescendants() const {
  std::vector<int32_t> pids = info_.target_pids;
  if (o_.system_wide || cgroup_mounts_.empty()) return pids;
  const ProcessParents parents = ProcessParents::Read();
  for (int pid : info_.target_pids)
    for (int child : parents.DescendantsOf(pid)) pids.push_back(child);
  return pids;
}

// Sends `sig` to the processes the command started (a shell would leave them running,
// untraced, after the recording), then to the command. timeout(1) reaches them through a
// process group of its own, which would take the terminal from an interactive command.
void Recorder::SignalCommand(int sig) {
  for (int descendant : DescendantsOf(child_->pid())) ::kill(descendant, sig);
  child_->Signal(sig);
}

// Ends the child the way the recording ended, and keeps its exit status and counters.
void Recorder::ReapChild() {
  signal_ = StopSignalScope::Received();
  if (!child_) return;
  if (!child_->reaped()) {
    // SIGTERM to cstool, or SIGINT or SIGHUP sent with kill(2), does not reach the child
    // by itself; Ctrl-C on the terminal, or its hang-up, already did. -N ends the command
    // like timeout(1).
    if (signal_ && !((signal_ == SIGINT || signal_ == SIGHUP) && StopSignalScope::FromKernel()))
      SignalCommand(signal_);
    // (One that exited on its own while the buffers drained keeps its own status.)
    if (!signal_ && timed_out_ && !child_->Exited()) {
      SignalCommand(SIGTERM);
      command_timed_out_ = true;
    }
    child_->ReapWithin(kChildGraceSeconds);
  }
  if (child_->reaped()) {
    info_.child.reaped = true;
    info_.child.wait_status = child_->wait_status();
    info_.child.exit_nvcsw = static_cast<uint64_t>(child_->usage().ru_nvcsw);
    info_.child.exit_nivcsw = static_cast<uint64_t>(child_->usage().ru_nivcsw);
    info_.child.utime_ns = TimevalNs(child_->usage().ru_utime);
    info_.child.stime_ns = TimevalNs(child_->usage().ru_stime);
  }
}

// Stops the taskstats listener (the child was reaped: its exits are in), restores delay
// accounting, and keeps the kernel's counters for the file.
void Recorder::CollectKernelCounters() {
  if (kernel_) info_.kernel_counters = kernel_->Finish();
  if (counters_) {
    CounterRecording& c = counter_samples_;
    FinishExitIo(kernel_ ? kernel_->counters() : KernelCounterSet{});
    if (counters_->sampled_column()) {
      // Each drain is in time order per thread; the file holds one timeline.
      std::stable_sort(
          c.overflows.begin(), c.overflows.end(),
          [](const CounterOverflow& a, const CounterOverflow& b) { return a.ts < b.ts; });
      // Each sampled thread's tgid, from its last counter sample (one pass, not one per
      // thread: a long recording holds many samples).
      std::unordered_map<int32_t, int32_t> tgid_of;
      for (const CounterSample& r : c.samples) tgid_of[r.tid] = r.tgid;
      for (const auto& [tid, st] : counters_->sampling_stats()) {
        SamplingThreadStats t{.tid = tid,
                              .samples = st.samples,
                              .lost = st.lost,
                              .throttles = st.throttles,
                              .unthrottles = st.unthrottles};
        if (auto it = tgid_of.find(tid); it != tgid_of.end()) t.tgid = it->second;
        c.sampling.threads.push_back(t);
        if (st.lost > 0)
          c.notes.push_back(
              fmt::format("thread {}: {} samples of {} lost (its ring buffer was full)", tid,
                          st.lost, c.sampling.event));
        if (st.throttles > 0)
          c.notes.push_back(
              fmt::format("thread {}: {} throttled {} time(s) (over /proc/sys/kernel/"
                          "perf_event_max_sample_rate): the overflows meanwhile have no sample",
                          tid, c.sampling.event, st.throttles));
      }
    }
    info_.perf_counters = c;
  }
}

void Recorder::ReadExitedCounters(int64_t now) {
  for (const ThreadReading& r : counters_->ReadExited(now))
    counter_samples_.samples.push_back({r.tid, r.tgid, r.ts, "exit", r.values, r.scaled});
}

void Recorder::FollowCounters(int64_t now, bool with_descendants) {
  ReadExitedCounters(now);
  if (with_descendants) {  // the /proc walk costs more: at the thread scans only
    const ProcessParents parents = ProcessParents::Read();
    for (int pid : info_.target_pids)
      for (int child : parents.DescendantsOf(pid)) counter_processes_.insert(child);
  }
  for (int pid : info_.target_pids) counter_processes_.insert(pid);
  for (int pid : counter_processes_)
    for (const ThreadIdentity& t : ListThreads(pid)) {
      if (counters_->Followed(t.tid) || !counters_->Follow(t.tgid, t.tid)) continue;
      // The group counts from zero at the open, and the virtual counters from the /proc
      // read beside it; `now` precedes both, so the start sample is zero there. A reading
      // instead would take in what the thread did since the open, and the totals (last
      // sample minus first) would lose it.
      counter_samples_.samples.push_back({t.tid, t.tgid, now, "start",
                                          std::vector<uint64_t>(counters_->names().size(), 0),
                                          false});
    }
}

void Recorder::DrainOverflows() {
  if (!counters_->sampled_column()) return;
  for (CounterOverflow& s : counters_->DrainSamples())
    counter_samples_.overflows.push_back(std::move(s));
}

// -V: a thread released at its exit had no /proc entry left for the final read; its exit
// record holds the counts, in whole KiB (taskstats rounds them down). Without one (as
// with --flight) the last read stands.
void Recorder::FinishExitIo(const KernelCounterSet& kernel) {
  size_t from_exit_records = 0, last_read = 0;
  for (CounterSample& s : counter_samples_.samples) {
    if (s.kind != "exit" || !counters_->IoUnreadAtExit(s.tid)) continue;
    // The tid's exit nearest the exit reading (a reused tid's later exit is another's);
    // 0 and 0 is a kernel without the extended accounting (CONFIG_TASK_XACCT).
    const KernelTaskCounters* e = nullptr;
    for (const KernelTaskCounters* c : kernel.FindAll(s.tid))
      if (c->source == KernelTaskCounters::Source::kTaskstatsExit &&
          (c->tgid == 0 || c->tgid == s.tgid) &&
          (e == nullptr || std::llabs(c->taken_at_ns - s.ts) < std::llabs(e->taken_at_ns - s.ts)))
        e = c;
    if (e == nullptr || !e->read_char || !e->write_char ||
        (*e->read_char == 0 && *e->write_char == 0)) {
      ++last_read;
      continue;
    }
    counters_->SetFinalIo(s.tid, ThreadIo{*e->read_char, *e->write_char}, s.values);
    ++from_exit_records;
  }
  if (from_exit_records > 0)
    counter_samples_.notes.push_back(fmt::format(
        "-V: {} thread(s) left no /proc entry at exit: their final counts are the kernel's "
        "exit records', rounded down to whole KiB (up to 1023 bytes short)",
        from_exit_records));
  if (last_read > 0)
    counter_samples_.notes.push_back(fmt::format(
        "-V: {} thread(s) left no /proc entry at exit and no exit record: their counts end at "
        "the last read (-T reads more often)",
        last_read));
}

void Recorder::SampleCounters(int64_t now, const char* kind) {
  for (const ThreadReading& r : counters_->ReadAll(now))
    counter_samples_.samples.push_back(
        {r.tid, r.tgid, r.ts, r.exited ? "exit" : kind, r.values, r.scaled});
}

// The file under the output's name before this recording: NAME.old, or written over when
// it cannot be moved (a recording is not refused for that).
std::optional<std::filesystem::path> Recorder::KeepPreviousOutput() {
  try {
    return cstool::KeepPreviousOutput(output_, messages_);
  } catch (const Error& e) {
    messages_.Warning(fmt::format("{}; it is overwritten", e.what()));
    return std::nullopt;
  }
}

// The trace.dat file: the session's formats, saved_cmdlines, each CPU's pages and
// stats, and the recording info as cstool's option.
void Recorder::WriteFile() {
  if (flight()) return;  // the dumps were the files
  TraceFileContents& contents = contents_;
  info_.threads = threads_.List();
  contents.saved_cmdlines = SavedCmdlines(info_.threads);
  contents.cpus.resize(static_cast<size_t>(file_cpus_));
  for (auto& r : readers_) {
    CpuRecordStats s = r->Stats();
    std::string stats = session_->ReadCpuStats(r->cpu());
    s.overrun = StatValue(stats, "overrun");
    s.dropped = StatValue(stats, "dropped events");
    info_.cpus.push_back(s);
    auto& slot = contents.cpus[static_cast<size_t>(r->cpu())];
    slot.stats = stats;
    slot.pages_file = r->pages_file();
  }
  for (InstanceTraceData& inst : contents.instances) {  // the unfiltered run-time buffer
    inst.cpus.resize(static_cast<size_t>(file_cpus_));
    for (auto& r : unfiltered_readers_) {
      // (Its per-CPU stats are not stored: only the top buffer's CPUSTAT options exist.)
      inst.cpus[static_cast<size_t>(r->cpu())].pages_file = r->pages_file();
    }
  }
  if (std::error_code ec; !std::filesystem::is_directory(
          output_.parent_path().empty() ? std::filesystem::path(".") : output_.parent_path(), ec))
    throw Error(fmt::format("cannot write '{}': its directory was removed during the recording",
                            output_.string()));
  // Pages read at the stop that did not fit (the run's end came by another way): the file
  // ends early all the same, and the report must say so. The unfiltered run-time buffer's
  // pages only complete the trace's increments: a cut there ends those, not the trace.
  const bool unfiltered_cut =
      std::any_of(unfiltered_readers_.begin(), unfiltered_readers_.end(),
                  [](const auto& r) { return r->Stats().unwritten_from_ts > 0; });
  if (ended_early_.empty() && (info_.CompleteUntilTs() > 0 || unfiltered_cut))
    ended_early_ = "the pages held at the stop did not all fit";
  if (!ended_early_.empty()) {
    uint64_t events = 0;
    for (const CpuRecordStats& c : info_.cpus) events += c.events;
    const int64_t until = info_.CompleteUntilTs();
    // The trace clock is the monotonic clock start_ts is read from ("mono"), else the
    // span complete is not known here.
    const std::string complete =
        until <= 0 ? "every CPU's are in the file"
        : info_.trace_clock == "mono"
            ? fmt::format("every CPU's are in the file for the first {:.3f} s of {:.3f} s",
                          static_cast<double>(std::max<int64_t>(until - info_.start_ts, 0)) / 1e9,
                          seconds_)
            : "every CPU's are in the file up to the first page one of them could not write";
    info_.ended_early = fmt::format("{}: kept {} of compressed events ({} events); {}",
                                    ended_early_, HumanBytes(budget_->used()), events, complete);
  }
  // comm and argv need not be UTF-8 (prctl PR_SET_NAME takes any bytes): never throw here.
  contents.cstool_info_json =
      nlohmann::json(info_).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::optional<std::filesystem::path> previous = KeepPreviousOutput();
  try {
    WriteTraceFile(output_, contents);
  } catch (const Error& e) {
    std::error_code ec;    // (best effort: the error below is what matters)
    std::string put_back;  // undoes "the previous FILE is kept as FILE.old", said before
    if (previous && !std::filesystem::exists(output_, ec)) {
      std::filesystem::rename(*previous, output_, ec);
      if (!ec) put_back = fmt::format("; the previous {} is back under its name", output_.string());
    }
    // The pages stay where they are, with the note `record --recover` needs. Rewritten with
    // the recording's end (the failed file's room is free again), the note lets it make
    // the whole file; on a disk too full even for that, the note from the start stays.
    for (auto& r : readers_) r->KeepFile();
    for (auto& r : unfiltered_readers_) r->KeepFile();
    recovery_note_->Keep();
    std::string end_kept;
    try {
      recovery_note_->Write(contents, info_, file_cpus_, RecoveryNoteStage::kEnded);
    } catch (const Error& note_error) {
      end_kept = fmt::format(
          " (without the kernel's counters and the loss statistics, which "
          "could not be kept beside them: {})",
          note_error.what());
    }
    throw Error(
        fmt::format("{}{}; the recorded pages are kept beside it{}: once it can be written (room "
                    "on the disk), `cstool record --recover {}` makes it of them",
                    e.what(), put_back, end_kept, output_.string()));
  }
  // The note first: left alone, page files are refused and named, where a note left with
  // some of them gone would have --recover make a file of what remains.
  recovery_note_.reset();
  readers_.clear();  // removes the page files (the drivers first)
  unfiltered_readers_.clear();

  struct stat st {};
  file_size_ = ::stat(output_.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

RecordResult Recorder::Result() {
  RecordResult r;
  r.path = output_.string();
  r.seconds = seconds_;
  r.file_size = file_size_;
  r.dumps = dumps_;
  r.dumps_not_written = dumps_not_written_;
  if (child_) {
    if (child_->reaped()) {
      r.exit_status = child_->ExitCode();
    } else {
      r.still_running_pid = child_->pid();
      r.exit_status = 128 + (signal_ ? signal_ : SIGTERM);
    }
    if (command_timed_out_) {
      r.exit_status = kCommandTimedOut;
      r.command_timed_out = true;
    }
  } else if (dumps_not_written_ > 0) {
    r.exit_status = 1;  // -p / -a: a dump asked for and not written is a failure
  }                     // -p / -a: a signal or -N is the normal way to stop
  r.info = std::move(info_);
  return r;
}

}  // namespace

RecordResult Record(const RecordOptions& options, Messages& messages, RecordListener* listener,
                    LiveTrigger* trigger) {
  // -e's bare event names as SYSTEM:EVENT, once, for the option checks and the session.
  RecordOptions named = options;
  for (std::string& e : named.events) e = QualifiedEventName(e);
  Recorder recorder(named, messages, listener, trigger);
  return recorder.Run();
}

}  // namespace cstool
