#include "commands/msa_command.h"

#include <fmt/core.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "analysis/interval_stats.h"
#include "analysis/msa_model.h"
#include "base/cpu_list.h"
#include "base/errors.h"
#include "base/output_file.h"
#include "base/stop_signal.h"
#include "base/version.h"
#include "counters/event_list.h"
#include "counters/thread_counters.h"
#include "counters/virtual_counters.h"
#include "decode/event_decoder.h"
#include "decode/merge.h"
#include "format/trace_file_writer.h"
#include "kernel/kernel_counters.h"  // MonotonicNowNs
#include "kernel/proc_seed.h"
#include "kernel/proc_threads.h"
#include "kernel/process_exit_fd.h"
#include "model/recording_info.h"
#include "model/syscall_table.h"
#include "output/msa_output.h"
#include "recording/previous_output.h"
#include "recording/saved_trace_name.h"
#include "sched/state_machine.h"
#include "sched/switch_watch.h"
#include "sched/trace_capabilities.h"
#include "tracefs/live_cpu_source.h"
#include "tracefs/session_formats.h"
#include "tracefs/tracefs_api.h"
#include "tracefs/tracefs_session.h"

namespace cstool {
namespace {

// Without a pidfd, how often the process is checked for having exited.
constexpr int64_t kExitCheckNs = 100000000;  // 100 ms
// Ring-buffer fill level (percent) at which poll(2) wakes msa before an interval ends.
constexpr const char* kWakePercent = "25";
constexpr size_t kMaxPagesPerDrain = 8192;  // per CPU and poll
constexpr int kMaxWindowAttempts = 20;
// -c EVENT:ebs=N: how often the sampling rings are drained at least (each holds about
// 1,800 samples; counters/perf_group.h).
constexpr int64_t kRingDrainNs = 50000000;  // 50 ms

int64_t RealtimeOffsetNs() {
  timespec rt{}, mono{};
  clock_gettime(CLOCK_REALTIME, &rt);
  clock_gettime(CLOCK_MONOTONIC, &mono);
  return (int64_t{rt.tv_sec} - mono.tv_sec) * 1000000000 + (rt.tv_nsec - mono.tv_nsec);
}

// Sleeps until CLOCK_MONOTONIC `deadline`; an interruptible sleep also ends at a stop
// signal (the short waits for the cut margin are not interruptible).
void SleepUntil(int64_t deadline, bool interruptible = true) {
  timespec ts{static_cast<time_t>(deadline / 1000000000), static_cast<long>(deadline % 1000000000)};
  while (!(interruptible && StopSignalScope::Received())) {
    int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
    if (rc != EINTR) return;
  }
}

KernelSwitchSnapshot SnapshotOf(const ProcSeed& seed, int64_t ts, bool exact) {
  KernelSwitchSnapshot k;
  k.ts = ts;
  k.exact = exact;
  for (const ThreadSeed& t : seed.threads) k.threads.push_back({t.tid, t.nvcsw, t.nivcsw});
  return k;
}

std::vector<int32_t> TidsOf(const ProcSeed& seed) {
  std::vector<int32_t> tids;
  for (const ThreadSeed& t : seed.threads) tids.push_back(t.tid);
  return tids;
}

// One thread's counter values and whether any was scaled.
struct Counts {
  std::vector<uint64_t> values;
  bool scaled = false;
};

class MsaDriver {
 public:
  MsaDriver(const MsaOptions& options, std::ostream& out, bool in_place, Messages& messages)
      : o_(options),
        messages_(messages),
        out_(out),
        interval_ns_(static_cast<int64_t>(std::llround(options.interval_s * 1e9))),
        output_(MakeMsaOutput(options.format, out, in_place)) {
    if (!options.counters.empty() || !options.virtual_counters.empty()) {
      std::vector<VirtualCounter> virtuals;
      if (!options.virtual_counters.empty()) virtuals = ParseVirtualList(options.virtual_counters);
      for (const VirtualCounter& v : virtuals) energy_ = energy_ || !v.per_thread();
      counters_.emplace(
          options.counters.empty() ? std::vector<CounterEvent>{} : ParseEventList(options.counters),
          std::move(virtuals));
      sampling_ = counters_->sampled_column().has_value();
    }
  }

  int Run();

 private:
  void SetUp();
  bool Attach();
  // Reads every CPU's buffer; returns the pages read.
  size_t DrainAll();
  // Feeds the queued records with ts <= cut, in time order, to the state machine (and
  // to `watch` when given; before attach, only to `watch`).
  void Process(int64_t cut, SwitchWatch* watch);
  // Reads the kernel counters of the target's threads and processes the trace up to
  // the snapshot's time; nullopt if the process is gone.
  std::optional<KernelSwitchSnapshot> ReadWindowEnd();
  MsaFrame Frame(MsaFrame::Kind kind, const IntervalStatsObserver& stats, int64_t start,
                 int64_t end) const;
  void EmitInterval(int64_t end, std::optional<KernelSwitchSnapshot> kernel_end);
  void EmitTotal(int64_t end, const std::string& reason,
                 std::optional<KernelSwitchSnapshot> kernel_end);
  void SaveTrace(int64_t end_ts);
  // -c/-V: counting groups on the tracked threads not counted yet.
  void FollowThreads();
  // Reads the counters: the counts since the last read per tid into interval_counts_,
  // the counts since each thread was followed into total_counts_.
  void ReadCounters();
  void AddCounters(MsaFrame& f, const std::map<int32_t, Counts>& counts) const;
  // -c EVENT:ebs=N: moves the rings' samples to pending_samples_.
  void DrainSamples();
  // The pending samples up to the frame's end (the total: all), numbered, and the
  // frame's lost and throttle counts.
  void AddSamples(MsaFrame& f);

  const MsaOptions& o_;
  Messages& messages_;
  std::ostream& out_;  // the frames' stream: once a write to it failed, msa stops
  const int64_t interval_ns_;
  bool saving_ = !o_.output.empty();  // -o, until its pages could not be written
  std::unique_ptr<MsaOutput> output_;
  SyscallTable syscalls_;

  std::unique_ptr<TracefsSession> session_;
  std::vector<std::unique_ptr<LiveCpuSource>> sources_;
  TepHandlePtr tep_;
  std::unique_ptr<EventDecoder> decoder_;
  std::unique_ptr<StateMachine> machine_;
  IntervalStatsObserver interval_stats_;
  IntervalStatsObserver total_stats_;
  std::set<int32_t> filtered_tids_;
  // The process and, with --children, its descendants when msa attached; tasks they
  // create later are followed through the fork events.
  std::vector<int32_t> pids_;

  std::string comm_;
  int64_t wall_offset_ = 0;
  int64_t trace_start_ = 0;  // tracing on
  int64_t attach_ts_ = 0;    // W0: the first interval's start
  // The threads' states at W0, saved with -o: the report of the file starts in them.
  std::vector<AttachSeed> attach_seeds_;
  int64_t interval_start_ = 0;
  uint64_t intervals_ = 0;
  uint64_t lost_interval_ = 0;
  uint64_t lost_total_ = 0;
  std::optional<KernelSwitchSnapshot> kernel_attach_;
  std::unique_ptr<ProcessExitFd> exit_fd_;

  std::optional<ThreadCounters> counters_;
  bool energy_ = false;
  std::map<int32_t, Counts> last_counts_;      // cumulative, per tid, at the last read
  std::map<int32_t, Counts> interval_counts_;  // since the interval began
  int64_t counters_ts_ = 0;
  bool counters_read_ = false;  // read at the current interval's end already
  std::optional<uint64_t> energy_start_, energy_interval_start_, energy_now_;
  bool sampling_ = false;
  std::vector<CounterOverflow> pending_samples_;
  uint64_t samples_shown_ = 0;
  uint64_t lost_shown_ = 0;
  uint64_t throttles_shown_ = 0;
};

void MsaDriver::SetUp() {
  SessionConfig config;
  config.buffer_kb = o_.buffer_kb;
  config.follow_forks = true;
  session_ = std::make_unique<TracefsSession>(config, messages_);
  // Sleep through quiet periods; wake early only when a buffer fills up this much.
  if (tracefs_file_exists(session_->instance(), "buffer_percent"))
    tracefs_instance_file_write(session_->instance(), "buffer_percent", kWakePercent);
  exit_fd_ = std::make_unique<ProcessExitFd>(o_.pid);

  pids_ = {o_.pid};
  const std::vector<int> descendants = DescendantsOf(o_.pid);
  if (o_.children)
    pids_.insert(pids_.end(), descendants.begin(), descendants.end());
  else if (!descendants.empty())
    messages_.Warning(UnfollowedDescendantsWarning(o_.pid, descendants));
  std::vector<int> tids;
  for (int32_t pid : pids_)
    for (const ThreadIdentity& t : ListThreads(pid)) {
      tids.push_back(t.tid);
      filtered_tids_.insert(t.tid);
    }
  if (ListThreads(o_.pid).empty())
    throw Error(fmt::format("process {} exited before msa could attach", o_.pid));
  session_->AddPids(tids);

  std::vector<int> cpus = OnlineCpus();
  for (int c : cpus) {
    std::optional<std::filesystem::path> tee;
    if (!o_.output.empty()) tee = fmt::format("{}.cpu{}.tmp", o_.output, c);
    sources_.push_back(std::make_unique<LiveCpuSource>(session_->instance(), c, tee));
  }
  int file_cpus = std::max(static_cast<int>(::sysconf(_SC_NPROCESSORS_CONF)), cpus.back() + 1);
  tep_ = LoadSessionTep(*session_, file_cpus);
  decoder_ = std::make_unique<EventDecoder>(tep_.get());
}

size_t MsaDriver::DrainAll() {
  size_t pages = 0;
  for (auto& s : sources_) pages += s->Drain(kMaxPagesPerDrain);
  for (auto& s : sources_)
    if (saving_ && !s->tee_error().empty()) {
      // The view goes on: a trace that would lack this CPU's pages from here is no trace.
      messages_.Warning(fmt::format("{}: the trace is not saved (-o {}); the view goes on",
                                    s->tee_error(), o_.output));
      for (auto& other : sources_) other->StopTee();
      saving_ = false;
    }
  return pages;
}

void MsaDriver::Process(int64_t cut, SwitchWatch* watch) {
  std::vector<std::unique_ptr<CpuRecordStream>> streams;
  for (auto& s : sources_) streams.push_back(s->StreamUntil(cut));
  RecordMerger merger(std::move(streams));
  StateMachine* machine = machine_.get();
  merger.Run([&](const RawRecord& r) {
    if (r.is_loss()) {
      LostEvents lost{r.ts, r.cpu, r.lost};
      const uint64_t n = r.lost > 0 ? static_cast<uint64_t>(r.lost) : 1;
      if (machine) {
        machine->PushLostEvents(lost);
        lost_interval_ += n;
        lost_total_ += n;
      }
      if (watch) watch->PushLostEvents(lost);
      return;
    }
    if (machine) decoder_->Decode(r, *machine);
    if (watch && r.ts >= watch->lo()) decoder_->Decode(r, *watch);
  });
}

bool MsaDriver::Attach() {
  session_->Start();
  trace_start_ = MonotonicNowNs();
  wall_offset_ = RealtimeOffsetNs();

  // Threads may have appeared between listing them and the pid filter taking effect.
  std::optional<ProcSeed> seed;
  bool exact = false;
  for (int attempt = 0; attempt < kMaxWindowAttempts; ++attempt) {
    seed = ReadProcSeed(pids_);
    if (seed->threads.empty())
      throw Error(fmt::format("process {} exited while msa was attaching", o_.pid));
    std::vector<int> new_tids;
    for (const ThreadSeed& t : seed->threads)
      if (filtered_tids_.insert(t.tid).second) new_tids.push_back(t.tid);
    session_->AddPids(new_tids);
    attach_ts_ = seed->read_end_ns + kSwitchSlackNs;
    SleepUntil(attach_ts_ + kCutMarginNs);
    if (StopSignalScope::Received()) return false;
    DrainAll();
    // Records up to W0 only serve to check the window; the seed describes the state.
    SwitchWatch watch(TidsOf(*seed), seed->read_start_ns, attach_ts_);
    Process(attach_ts_, &watch);
    if (watch.clean() && new_tids.empty()) {
      exact = true;
      break;
    }
  }
  for (const ThreadSeed& t : seed->threads)
    if (t.tid == o_.pid) comm_ = t.comm;
  if (comm_.empty()) comm_ = seed->threads.front().comm;
  kernel_attach_ = SnapshotOf(*seed, attach_ts_, exact);

  TrackingPolicy policy;
  policy.all = false;
  policy.root_pids = pids_;
  for (const ThreadSeed& t : seed->threads) policy.known_tgids.emplace_back(t.tid, t.tgid);
  machine_ =
      std::make_unique<StateMachine>(syscalls_, CapabilitiesOf(*decoder_), std::move(policy));
  for (const ThreadSeed& t : seed->threads) {
    attach_seeds_.push_back(t.ToAttachSeed());
    machine_->SeedThread(attach_seeds_.back(), attach_ts_);
  }
  interval_stats_.Begin(attach_ts_);
  total_stats_.Begin(attach_ts_);
  machine_->AddObserver(&interval_stats_);
  machine_->AddObserver(&total_stats_);
  interval_start_ = attach_ts_;
  if (counters_) {
    for (const ThreadSeed& t : seed->threads) counters_->Follow(t.tgid, t.tid);
    FollowThreads();
    if (energy_) energy_start_ = energy_interval_start_ = ReadPackageEnergyUj();
  }
  return true;
}

void MsaDriver::FollowThreads() {
  if (!counters_ || !machine_) return;
  for (const Thread& t : machine_->threads())
    if (t.tracked && !t.exiting && !counters_->Followed(t.tid))
      counters_->Follow(t.tgid != 0 ? t.tgid : t.tid, t.tid);
}

void MsaDriver::ReadCounters() {
  if (!counters_) return;
  counters_ts_ = MonotonicNowNs();
  for (ThreadReading& r : counters_->ReadAll(counters_ts_)) {
    Counts& last = last_counts_[r.tid];
    Counts& interval = interval_counts_[r.tid];
    interval.values.resize(r.values.size());
    last.values.resize(r.values.size());
    for (size_t i = 0; i < r.values.size(); ++i) {
      interval.values[i] += r.values[i] >= last.values[i] ? r.values[i] - last.values[i] : 0;
      last.values[i] = r.values[i];
    }
    interval.scaled = interval.scaled || r.scaled;
    last.scaled = last.scaled || r.scaled;
  }
  if (energy_) energy_now_ = ReadPackageEnergyUj();
  DrainSamples();
}

void MsaDriver::DrainSamples() {
  if (!sampling_) return;
  for (CounterOverflow& s : counters_->DrainSamples()) pending_samples_.push_back(std::move(s));
}

void MsaDriver::AddSamples(MsaFrame& f) {
  if (!sampling_) return;
  f.ebs_event = counters_->names()[*counters_->sampled_column()];
  f.ebs_period = counters_->sampling_period();
  const bool total = f.kind == MsaFrame::Kind::kTotal;
  auto shown =
      std::stable_partition(pending_samples_.begin(), pending_samples_.end(),
                            [&](const CounterOverflow& s) { return total || s.ts <= f.end_ns; });
  std::vector<CounterOverflow> frame(std::make_move_iterator(pending_samples_.begin()),
                                     std::make_move_iterator(shown));
  pending_samples_.erase(pending_samples_.begin(), shown);
  std::stable_sort(frame.begin(), frame.end(),
                   [](const CounterOverflow& a, const CounterOverflow& b) { return a.ts < b.ts; });
  for (CounterOverflow& s : frame)
    f.samples.push_back(
        {++samples_shown_, s.tgid, s.tid, s.ts, s.cpu, s.ip, std::move(s.values), s.scaled});
  uint64_t lost = 0, throttles = 0;
  for (const auto& [tid, st] : counters_->sampling_stats()) {
    lost += st.lost;
    throttles += st.throttles;
  }
  f.ebs_samples = total ? samples_shown_ : f.samples.size();
  f.ebs_lost = total ? lost : lost - lost_shown_;
  f.ebs_throttles = total ? throttles : throttles - throttles_shown_;
  lost_shown_ = lost;
  throttles_shown_ = throttles;
}

void MsaDriver::AddCounters(MsaFrame& f, const std::map<int32_t, Counts>& counts) const {
  if (!counters_) return;
  f.counter_names = counters_->names();
  f.counters_ts = counters_ts_;
  for (MsaRow& r : f.rows) {
    auto it = counts.find(r.tid);
    if (it == counts.end()) continue;
    r.counters = it->second.values;
    r.counters_scaled = it->second.scaled;
  }
}

std::optional<KernelSwitchSnapshot> MsaDriver::ReadWindowEnd() {
  std::optional<KernelSwitchSnapshot> snapshot;
  for (int attempt = 0; attempt < kMaxWindowAttempts; ++attempt) {
    ProcSeed seed = ReadProcSeed(pids_);
    if (seed.threads.empty()) return std::nullopt;
    const int64_t end = seed.read_end_ns + kSwitchSlackNs;
    SleepUntil(end + kCutMarginNs, /*interruptible=*/false);
    DrainAll();
    SwitchWatch watch(TidsOf(seed), seed.read_start_ns, end);
    Process(end, &watch);
    snapshot = SnapshotOf(seed, end, watch.clean());
    if (watch.clean() || StopSignalScope::Received()) break;
  }
  return snapshot;
}

MsaFrame MsaDriver::Frame(MsaFrame::Kind kind, const IntervalStatsObserver& stats, int64_t start,
                          int64_t end) const {
  MsaFrame f;
  f.kind = kind;
  f.pid = o_.pid;
  f.comm = comm_;
  f.index = intervals_;
  f.start_ns = start;
  f.end_ns = end;
  f.wall_offset_ns = wall_offset_;
  f.per_process = o_.per_process;
  f.rows = BuildThreadRows(stats.stats(), machine_->threads(), syscalls_);
  AddCounters(f, kind == MsaFrame::Kind::kTotal ? last_counts_ : interval_counts_);
  if (o_.per_process) f.rows = AggregateByProcess(f.rows);
  if (energy_ && energy_now_) {
    const auto& from = kind == MsaFrame::Kind::kTotal ? energy_start_ : energy_interval_start_;
    if (from) f.energy_uj = *energy_now_ >= *from ? *energy_now_ - *from : 0;
  }
  return f;
}

void MsaDriver::EmitInterval(int64_t end, std::optional<KernelSwitchSnapshot> kernel_end) {
  ++intervals_;
  if (!counters_read_) ReadCounters();
  counters_read_ = false;
  MsaFrame f = Frame(MsaFrame::Kind::kInterval, interval_stats_, interval_start_, end);
  AddSamples(f);
  f.lost_events = lost_interval_;
  if (intervals_ == 1) f.kernel_attach = kernel_attach_;
  f.kernel_end = std::move(kernel_end);
  output_->Render(f);
  interval_stats_.Reset(end);
  interval_start_ = end;
  lost_interval_ = 0;
  interval_counts_.clear();
  energy_interval_start_ = energy_now_;
}

void MsaDriver::EmitTotal(int64_t end, const std::string& reason,
                          std::optional<KernelSwitchSnapshot> kernel_end) {
  // After a signal the last partial interval is not shown: its counts are in the total.
  ReadCounters();
  MsaFrame f = Frame(MsaFrame::Kind::kTotal, total_stats_, attach_ts_, end);
  AddSamples(f);
  f.lost_events = lost_total_;
  f.kernel_attach = kernel_attach_;
  f.kernel_end = std::move(kernel_end);
  f.end_reason = reason;
  output_->Render(f);
}

void MsaDriver::SaveTrace(int64_t end_ts) {
  session_->Stop();
  for (auto& s : sources_) s->Drain(SIZE_MAX);  // the rest goes to the page files
  TraceFileContents contents = SessionTraceContents(*session_);
  RecordingInfo info;
  info.tool_version = Version();
  info.command = {"cstool", "msa", std::to_string(o_.pid)};
  info.target_pids = pids_;
  info.trace_clock = session_->clock();
  info.start_ts = trace_start_;
  info.end_ts = end_ts;
  info.missing_events = session_->missing_events();
  info.attach_seeds = attach_seeds_;
  // (None when interrupted while attaching: then no cut either.)
  if (!attach_seeds_.empty()) info.attach_seed_ts = attach_ts_;
  if (machine_)
    for (const Thread& t : machine_->threads())
      if (t.tracked) info.threads.push_back({t.tid, t.tgid != 0 ? t.tgid : t.tid, t.comm});
  std::string saved;
  for (const ThreadIdentity& t : info.threads) saved += fmt::format("{} {}\n", t.tid, t.comm);
  contents.saved_cmdlines = saved;
  int file_cpus = std::max(static_cast<int>(::sysconf(_SC_NPROCESSORS_CONF)),
                           sources_.empty() ? 1 : sources_.back()->cpu() + 1);
  contents.cpus.resize(static_cast<size_t>(file_cpus));
  for (auto& s : sources_) {
    CpuRecordStats st = s->stats();
    std::string stats = session_->ReadCpuStats(s->cpu());
    info.cpus.push_back(st);
    auto& slot = contents.cpus[static_cast<size_t>(s->cpu())];
    slot.stats = stats;
    slot.pages_file = *s->tee_file();
  }
  contents.cstool_info_json = nlohmann::json(info).dump();
  KeepPreviousOutput(o_.output, messages_);
  WriteTraceFile(o_.output, contents);
  messages_.Status(fmt::format("saved the trace to {}", o_.output));
}

int MsaDriver::Run() {
  SetUp();
  if (!Attach()) {
    if (saving_) SaveTrace(MonotonicNowNs());
    return 0;
  }
  int64_t next_end = interval_start_ + interval_ns_;
  std::string reason;
  std::optional<KernelSwitchSnapshot> kernel_end;
  int64_t end_ts = 0;
  std::vector<pollfd> fds;
  for (auto& s : sources_) fds.push_back({s->poll_fd(), POLLIN, 0});
  const int exit_fd = exit_fd_->fd();
  if (exit_fd >= 0) fds.push_back({exit_fd, POLLIN, 0});
  for (;;) {
    // Sleep until the interval's cut time, a filling buffer, the process's exit or a
    // signal: an idle target costs one wake-up per interval.
    // With counters, wake at the interval's end to read them as close to it as possible;
    // the cut itself waits for the margin.
    const int64_t deadline = counters_ && !counters_read_ ? next_end : next_end + kCutMarginNs;
    int64_t wait = deadline - MonotonicNowNs();
    if (exit_fd < 0) wait = std::min(wait, kExitCheckNs);
    if (sampling_) wait = std::min(wait, kRingDrainNs);
    bool exited = false;
    if (wait > 0) {
      for (auto& p : fds) p.revents = 0;
      int n = ::poll(fds.data(), fds.size(), static_cast<int>((wait + 999999) / 1000000));
      exited = n > 0 && exit_fd >= 0 && (fds.back().revents & (POLLIN | POLLHUP));
    }
    if (StopSignalScope::Received()) {
      reason = "signal";
      kernel_end = ReadWindowEnd();
      end_ts = kernel_end ? kernel_end->ts : MonotonicNowNs() - kCutMarginNs;
      if (!kernel_end) {
        DrainAll();
        Process(end_ts, nullptr);
      }
      break;
    }
    if (counters_ && !counters_read_ && MonotonicNowNs() >= next_end) {
      ReadCounters();
      counters_read_ = true;
    }
    DrainAll();
    DrainSamples();
    const int64_t t = MonotonicNowNs();
    Process(std::min(t - kCutMarginNs, next_end), nullptr);
    FollowThreads();
    if (t >= next_end + kCutMarginNs) {
      if (o_.count != 0 && intervals_ + 1 == o_.count) {
        // The last interval ends where the kernel's counters are read, exactly.
        kernel_end = ReadWindowEnd();
        if (kernel_end) {
          end_ts = kernel_end->ts;
          machine_->Finish(end_ts);
          if (counters_) {  // up to the kernel's window, like the interval
            ReadCounters();
            counters_read_ = true;
          }
          EmitInterval(end_ts, kernel_end);
          reason = "count";
          break;
        }
        exited = true;  // gone meanwhile
      } else {
        machine_->CutSegments(next_end);
        EmitInterval(next_end, std::nullopt);
        next_end += interval_ns_;
        // The reader went away (`msa PID | head`): nothing more can be shown, so the
        // tracing stops now rather than when the process exits (the caller says why).
        if (!out_) {
          reason = "output";
          end_ts = interval_start_;
          break;
        }
        continue;
      }
    }
    if (exited || (exit_fd < 0 && ProcessGone(o_.pid))) {
      reason = "exited";
      SleepUntil(MonotonicNowNs() + kCutMarginNs, /*interruptible=*/false);
      DrainAll();
      Process(INT64_MAX, nullptr);
      end_ts = std::max(machine_->last_ts(), interval_start_);
      machine_->Finish(end_ts);
      if (end_ts > interval_start_) EmitInterval(end_ts, std::nullopt);
      break;
    }
  }
  if (reason == "signal") machine_->Finish(end_ts);
  if (reason != "count" && reason != "output") EmitTotal(end_ts, reason, kernel_end);
  if (reason == "exited") messages_.Status(fmt::format("process {} exited", o_.pid));
  if (saving_) SaveTrace(end_ts);
  return 0;
}

}  // namespace

void ValidateMsaOptions(const MsaOptions& o) {
  if (o.pid <= 0) throw Error(fmt::format("invalid pid {}", o.pid), ExitCode::kUsage);
  if (!std::isfinite(o.interval_s) || o.interval_s < 0.01 || o.interval_s > 86400)
    throw Error("interval (-T) must be between 0.01 and 86400 seconds", ExitCode::kUsage);
  if (o.format != "table" && o.format != "json")
    throw Error(fmt::format("unknown format '{}' (expected table or json)", o.format),
                ExitCode::kUsage);
  if (o.buffer_kb == 0) throw Error("buffer size must be at least 1 KiB", ExitCode::kUsage);
  if (!o.output.empty() && std::filesystem::is_directory(o.output))
    throw Error(fmt::format("output '{}' is a directory", o.output), ExitCode::kUsage);
  if (!o.counters.empty()) ParseEventList(o.counters);
  if (!o.virtual_counters.empty()) ParseVirtualList(o.virtual_counters);
}

int RunMsa(const MsaOptions& options, std::ostream& out, bool in_place, Messages& messages) {
  ValidateMsaOptions(options);
  if (!ProcessExists(options.pid) || ProcessGone(options.pid))
    throw Error(fmt::format("no such process: {}", options.pid), ExitCode::kUsage);
  TracefsSession::CheckAccess();
  if (!options.counters.empty()) ProbeEvents(ParseEventList(options.counters));
  WarnIfSavedTraceLooksLikeOutput(options.output, messages);
  if (!options.output.empty()) {
    CheckCreatable(options.output);
    // As record -o: a recording there is kept as FILE.old, anything else is refused
    // before the attach (msa wrote over a database or a page named by mistake).
    CheckPreviousOutputCanBeKept(options.output);
  }
  MsaOptions process = options;
  if (const int tgid = ProcessOfThread(options.pid); tgid != options.pid) {
    messages.Warning(ThreadOfAnotherProcessNote(options.pid, tgid));
    process.pid = tgid;
  }
  StopSignalScope signals;
  MsaDriver driver(process, out, in_place, messages);
  return driver.Run();
}

}  // namespace cstool
