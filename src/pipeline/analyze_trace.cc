#include "pipeline/analyze_trace.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <optional>

#include "analysis/blocking_site.h"
#include "analysis/registry.h"
#include "base/cpu_list.h"
#include "base/duration_text.h"
#include "base/errors.h"
#include "base/text_fields.h"
#include "check/kernel_match.h"
#include "decode/decode_in_groups_inl.h"
#include "decode/decode_trace_inl.h"
#include "decode/event_decoder.h"
#include "decode/kernel_symbols.h"
#include "format/trace_file_format.h"
#include "format/trace_file_reader.h"
#include "kernel/kernel_recording.h"
#include "kernel/running_event_formats.h"
#include "model/anomalies.h"
#include "model/host_steal_text.h"
#include "pipeline/job_plan.h"
#include "pipeline/lost_events.h"
#include "pipeline/recorder_cost.h"
#include "pipeline/salvage_cut.h"
#include "pipeline/unplaced_threads.h"
#include "pipeline/unrecorded_events.h"
#include "sched/state_machine.h"
#include "sched/trace_capabilities.h"

namespace cstool {
namespace {

// Files by trace-cmd are mostly on ftrace's default clock, `local`; a few clocks do not
// even count nanoseconds. The analysis takes timestamps as synchronised nanoseconds.
std::string TraceClockNote(const std::string& clock) {
  if (clock == "local" || clock == "perf")
    return fmt::format(
        "the trace clock is '{}' (per CPU, not synchronised across CPUs by the kernel): the "
        "order of events on different CPUs and the times between them (a wakeup and a "
        "switch-in on another CPU) hold as far as the CPUs' clocks agree, as they do with a "
        "stable TSC; cstool records with 'mono'",
        clock);
  if (clock == "counter" || clock == "uptime")
    return fmt::format(
        "the trace clock is '{}', whose timestamps are not nanoseconds ({}): the times in "
        "this report are in its units, not in ns",
        clock, clock == "counter" ? "an event counter" : "jiffies");
  return {};
}

// Which of the file's buffers the report is of, when it has others (trace-cmd record -B)
// that it leaves out: their events are in the file but not in the report, nor in its
// MISSING EVENTS. (cstool's own run-time buffer is part of the trace's analysis.)
std::string BuffersNote(const TraceFileReader& reader) {
  const std::string others = reader.OtherInstancesText();
  if (others.empty()) return {};
  const std::string read = reader.buffer_name().empty()
                               ? "top-level buffer"
                               : fmt::format("buffer \"{}\"", VisibleText(reader.buffer_name()));
  return fmt::format(
      "this report is of the file's {}; its other buffers are not read ({}: --buffer NAME "
      "reads one)",
      read, others);
}

}  // namespace

std::string DamagedRecordsWarning(const TraceSummary& trace) {
  std::string counts;
  for (const auto& [name, n] : trace.anomalies)
    if (const AnomalyInfo* info = FindAnomaly(name);
        info != nullptr && info->severity == AnomalySeverity::kError)
      counts += fmt::format("{}{}={}", counts.empty() ? "" : " ", name, n);
  if (counts.empty()) return {};
  return fmt::format(
      "damaged records ({}): {}, so the numbers they touch may be wrong; "
      "--explain-anomalies says where",
      counts, MeaningOf(AnomalySeverity::kError));
}

namespace {

// An x86-tsc trace is in nanoseconds only through trace-cmd's TSC2NSEC option (record
// --tsc2nsec), which libtracecmd applies; without it the times are TSC cycles.
std::string TscCyclesNote(const TraceFileReader& reader) {
  if (reader.trace_clock() != "x86-tsc" || !reader.timestamps_as_recorded()) return {};
  return "the trace clock is 'x86-tsc' and the file has no TSC-to-ns conversion (trace-cmd "
         "record --tsc2nsec): the times in this report are TSC cycles, not ns";
}

std::vector<std::string> NotesFor(const TraceCapabilities& caps, const TraceSummary& t) {
  std::vector<std::string> notes;
  if (!caps.syscalls)
    notes.push_back(
        "no raw_syscalls events: on-CPU time is reported as user (sys included; sys is only "
        "what other events place in the kernel: kernel threads, and a thread's exit from "
        "sched_process_exit on), sleeps are not split by syscall and causes say sleep:kernel");
  if (!caps.waking && !caps.wakeup)
    notes.push_back(
        "no sched_waking/sched_wakeup events: a sleep lasts until the switch-in (the wait for a "
        "CPU after the wakeup is in the sleep states)");
  if (!caps.irqs) notes.push_back("no irq events: interrupt time is included in user/sys");
  if (!caps.page_faults)
    notes.push_back("no exceptions events: blocking after a page fault shows as sleep:kernel");
  if (std::string note = TraceClockNote(t.trace_clock); !note.empty()) notes.push_back(note);
  if (t.inferred_kernel_threads > 0)
    notes.push_back(fmt::format(
        "{} {} never seen in a syscall or in user mode, though syscalls were traced, and "
        "asleep twice or more: taken for kernel threads (on-CPU time SYS, sleeps SLP or IO; "
        "the file does not say which threads are the kernel's)",
        t.inferred_kernel_threads, t.inferred_kernel_threads == 1 ? "thread was" : "threads were"));
  const uint64_t lost = t.LostOnReadCpus();
  // The share says how much of a marked thread's numbers the trace still shows.
  // A gap of unknown size counts as one: then the share is unknown too ("0.0 %" read as
  // almost nothing lost, of a kill that may have lost much).
  if (lost > 0 && t.lost_at_least)
    notes.push_back(fmt::format(
        "at least {} {} lost (gaps of unknown size counted as one event each, and no count "
        "of the kernel's at the end); threads marked ! (lost_events_touched) may be off",
        lost, lost == 1 ? "event was" : "events were"));
  else if (lost > 0)
    notes.push_back(fmt::format(
        "{} {} lost ({:.1f} % of the {} written); threads marked ! "
        "(lost_events_touched) may be off",
        lost, lost == 1 ? "event was" : "events were",
        100.0 * static_cast<double>(lost) / static_cast<double>(lost + t.events), lost + t.events));
  if (!t.unread_cpus.empty())
    notes.push_back(fmt::format(
        "the data of {} {} could not be read at all: what ran there is unknown, and threads "
        "seen on it are marked ! (lost_events_touched)",
        t.unread_cpus.size() == 1 ? "CPU" : "CPUs", FormatCpuList(t.unread_cpus)));
  // ANOMALIES' lost_events counts what the trace's own loss markers say (one for a gap of
  // unknown size); the total above also takes the kernel's count when it stopped.
  if (auto it = t.anomalies.find("lost_events"); it != t.anomalies.end() && it->second < lost)
    notes.push_back(fmt::format(
        "the trace's loss markers account for {} of them (ANOMALIES lost_events, a gap of "
        "unknown size counted as 1); the rest are in the kernel's overrun count at the end",
        it->second));
  return notes;
}

// Why a flight dump's window may not show every change of state of the target's threads
// (a thread with no event in it may then have run unseen, so its /proc state at the dump
// does not stand for the window); empty when it shows them all.
std::string DumpWindowBlindSpot(const RecordingInfo& info, const TraceCapabilities& caps, bool lost,
                                bool cut) {
  if (!info.untraced_cpus.empty())
    return fmt::format("CPU {} was not recorded (-C)", FormatCpuList(info.untraced_cpus));
  if (!caps.waking && !caps.wakeup) return "no wakeup events were recorded";
  if (lost) return "events were lost";
  if (cut) return "the file was read only in part";
  return {};
}

// Steal time the recording met (a virtual machine's host ran something else): said once,
// with where it was, because the kernel's accounting and the trace part ways there.
std::string StealNote(const RecordingInfo& info) {
  const int64_t stolen = info.TotalStolenNs();
  if (stolen <= 0 || info.steal_step_ns <= 0) return {};
  std::string per_cpu;
  for (const CpuSteal& c : info.steal)
    if (c.Stolen() > 0)
      per_cpu += fmt::format("{}CPU {} {}", per_cpu.empty() ? "" : ", ", c.cpu,
                             StealMsText(info, c.Stolen()));
  return fmt::format(
      "the host stole {} of CPU time while tracing ({}; {}): the kernel counts stolen time in "
      "no thread's run time, nor as run delay once the thread is switched in; with every "
      "run-time increment in the file, the steal inside a run is known and left out of the "
      "check (switch_placement.host_steal_on_cpu_ns), but the trace cannot place the rest: "
      "cstool counts it where the trace shows the thread (on CPU, or waiting before its first "
      "run-time increment)",
      StealMsText(info, stolen), per_cpu, StealSourceText(info));
}

// CPU bandwidth throttling the recording met, one note per cgroup: nothing in the trace
// shows it (a throttled thread waits for a CPU, behind whatever runs there, and the
// kernel counts the time as run delay), only the cgroup's counters.
std::vector<std::string> ThrottlingNotes(const RecordingInfo& info) {
  std::vector<std::string> notes;
  for (const CgroupThrottling& c : info.throttling)
    notes.push_back(fmt::format(
        "CPU bandwidth throttling: cgroup {} (v{}, quota {:.1f} ms every {:.1f} ms) was "
        "throttled in {} of {} periods while tracing{}, {:.1f} ms summed over its CPUs ({}): a "
        "throttled thread stays runnable, so that time shows as waiting for a CPU (LATP, "
        "LATW; the kernel counts it as run delay), and WAITED BEHIND names whatever ran on "
        "the CPU meanwhile, idle included",
        c.cgroup, c.version, static_cast<double>(c.quota_ns) / 1e6,
        static_cast<double>(c.period_ns) / 1e6, c.throttled, c.periods,
        c.since_ns > 0 ? fmt::format(" (read from {:.3f} s on, when first seen)",
                                     static_cast<double>(c.since_ns) / 1e9)
                       : std::string(),
        static_cast<double>(c.throttled_ns) / 1e6,
        c.pids.empty() ? std::string("no recorded process was seen in it")
                       : fmt::format("recorded process{} in it: {}", c.pids.size() == 1 ? "" : "es",
                                     fmt::join(c.pids, ", "))));
  return notes;
}

// What a file without its unfiltered run-time buffer's increments loses.
constexpr std::string_view kWithoutUnfilteredRuntime =
    "switch instants of threads whose increments it held come from the runqueue clock model";

// The recording's unfiltered run-time buffer, to be read beside the trace; null when the
// file has none. cstool's own readers know the buffer (libtracecmd does not see
// it: a file it reads is asked again). With salvage, a buffer whose table the damage
// reached (a recording cut short ends with it) is left out and said in `damage`; damage
// to its pages is skipped as in the trace and not listed.
std::unique_ptr<TraceFileReader> OpenUnfilteredRuntime(const std::string& file,
                                                       const TraceFileReader& reader,
                                                       const ReaderOptions& reader_options,
                                                       std::vector<std::string>& damage) {
  const auto& info = reader.recording_info();
  if (!reader.buffer_name().empty() || !info) return nullptr;
  ReaderOptions o = reader_options;
  o.backend = ReaderBackend::kFast;
  o.buffer = std::string(tracefile::kUnfilteredRuntimeBuffer);
  o.jobs = 1;
  o.records_only = true;  // the trace's decoder decodes them
  const auto& names = reader.instance_names();
  const bool listed = std::find(names.begin(), names.end(), o.buffer) != names.end();
  if (std::string_view(reader.backend_name()) != "libtracecmd") {
    if (!listed) return nullptr;
    try {
      return OpenTraceFile(file, o);
    } catch (const Error& e) {
      // The file lists the buffer but cannot give its table: damage, which --salvage
      // reads around (the error said so for every other cut but this one).
      if (!o.salvage) throw DamagedDataError(e.what(), e.code());
      damage.push_back(fmt::format("the unfiltered run-time buffer ({}) is not read: {}; {}",
                                   o.buffer, e.what(), kWithoutUnfilteredRuntime));
      return nullptr;
    }
  }
  try {
    return OpenTraceFile(file, o);
  } catch (const Error&) {
    return nullptr;  // not a file of cstool's readers, or no such buffer
  }
}

// Whether every increment of a followed thread is in the file: the unfiltered run-time
// buffer beside the trace holds the contexts the trace leaves out, if every CPU was
// recorded (tracing_cpumask drops the others' events in both), nothing was lost in either
// buffer, and the recording was neither recovered, cut short nor damaged (pages are then missing
// with no loss marker). Losses only the pages show are found here for the buffer (whose
// loss marker may come long after the gap) and while decoding for the trace.
bool AllIncrementsInFile(const TraceFileReader& reader, TraceFileReader* unfiltered) {
  const auto& info = reader.recording_info();
  if (unfiltered == nullptr || !info || info->recovered || !info->ended_early.empty() ||
      info->TotalLostEvents() > 0)
    return false;
  for (int cpu = 0; cpu < reader.cpus(); ++cpu)
    if (std::none_of(info->cpus.begin(), info->cpus.end(),
                     [cpu](const CpuRecordStats& c) { return c.cpu == cpu; }))
      return false;
  for (const auto& [cpu, stats] : reader.cpu_stats())
    if (stats.overrun + stats.dropped > 0) return false;
  // This pass notes the damage the decoding pass will note again: each once.
  const size_t noted = unfiltered->salvage_log().entries().size();
  bool complete = true;
  for (int cpu = 0; cpu < unfiltered->cpus() && complete; ++cpu) {
    std::unique_ptr<CpuRecordStream> stream = unfiltered->OpenCpu(cpu);
    for (auto batch = stream->NextBatch(); !batch.empty() && complete; batch = stream->NextBatch())
      for (const RawRecord& r : batch)
        if (r.is_loss()) complete = false;
  }
  // Damage a salvaged buffer skipped or cut held increments too (pages with no marker).
  complete = complete && unfiltered->salvage_log().empty();
  unfiltered->ForgetSalvageNotesFrom(noted);
  return complete;
}

// Where a cstool recording ended: when tracing stopped (or where one cut short still
// holds every CPU's events), 0 when the file does not say. Up to there, what ran, waited or
// slept at its last event went on doing so (a switch would be in the trace): a command
// still asleep when -N ended the recording, an attached process asleep throughout. The
// stop time is read on the monotonic clock: on another trace clock it is comparable only
// where the recording attached (its start was read on that clock too, and kept so).
int64_t RecordingEnd(const TraceFileReader& reader) {
  const std::optional<RecordingInfo>& info = reader.recording_info();
  if (!info) return 0;
  if (reader.end_ts() > 0) return reader.end_ts();
  return info->trace_clock == "mono" || info->attach_seed_ts > 0 ? info->end_ts : 0;
}

TrackingPolicy PolicyFor(const std::optional<RecordingInfo>& info) {
  TrackingPolicy policy;
  if (!info) return policy;
  // A thread that exited during the recording names its process in its exit record
  // (taskstats): that groups it where the file shows no fork's flags (recorded without
  // task:task_newtask). First, so that the recorder's own lists override a reused tid.
  try {
    const KernelRecording kernel = KernelRecording::FromJson(info->kernel_counters);
    for (const KernelTaskCounters& c : kernel.counters.records())
      if (c.source == KernelTaskCounters::Source::kTaskstatsExit && c.tgid != 0)
        policy.known_tgids.emplace_back(c.tid, c.tgid);
  } catch (const Error&) {
    // Malformed counters: --check reports them; the grouping goes without.
  }
  // A system-wide recording lists every thread too: their tgids group the report.
  policy.AddKnownThreads(info->threads);
  policy.recorder_tids = info->RecorderThreads();
  if (info->system_wide || info->target_pids.empty()) return policy;
  policy.all = false;
  policy.root_pids = info->target_pids;
  return policy;
}

// `record --flight -o FILE` writes its dumps beside FILE (FILE.1, FILE.2, ...) and nothing
// at FILE itself: reporting FILE then says where they are, not only that it is missing.
void ThrowIfOnlyFlightDumps(const std::string& file) {
  std::error_code ec;
  if (std::filesystem::exists(file, ec) || !std::filesystem::is_regular_file(file + ".1", ec))
    return;
  int last = 1;
  while (last < INT_MAX &&
         std::filesystem::is_regular_file(fmt::format("{}.{}", file, last + 1), ec))
    ++last;
  throw Error(fmt::format(
      "{}: cannot open: {}; a flight recording's dumps are beside it: {}.1{} (report one of them)",
      file, std::strerror(ENOENT), file, last > 1 ? fmt::format(" to {}.{}", file, last) : ""));
}

}  // namespace

std::unique_ptr<AnalyzedTrace> AnalyzeTrace(const std::string& file, const SyscallTable& syscalls,
                                            const AnalyzeOptions& options) {
  ReaderOptions reader_options;
  reader_options.salvage = options.salvage;
  reader_options.backend = options.reader;
  reader_options.buffer = options.buffer;
  reader_options.jobs = options.jobs > 0 ? options.jobs : UsableCpuCount();
  reader_options.decodes_event = &EventDecoder::Decodes;
  reader_options.trusts_format = [](std::string_view system, std::string_view name,
                                    std::string_view text) {
    return IsRunningKernelFormat(system, name, text);
  };
  ThrowIfOnlyFlightDumps(file);
  std::unique_ptr<TraceFileReader> reader = OpenTraceFile(file, reader_options);
  if (options.jobs <= 0) reader_options.jobs = DefaultJobs(*reader, reader_options.jobs);
  const JobPlan plan = PlanJobs(reader_options.jobs, *reader);
  reader->SetJobs(plan.reading);
  EventDecoder decoder(reader->tep());
  // Kernel differences: a sched_switch layout without the fields every analysis needs
  // cannot be degraded gracefully; say so instead of reporting no switches.
  constexpr std::string_view kSwitchField = "sched:sched_switch (field ";
  for (const std::string& m : decoder.missing_events())
    if (m.starts_with(kSwitchField) && m.ends_with(")"))
      throw Error(
          fmt::format("{}: the sched_switch format of this file's kernel has no usable '{}' field; "
                      "context switches cannot be reconstructed",
                      file, m.substr(kSwitchField.size(), m.size() - kSwitchField.size() - 1)));
  TraceCapabilities caps = CapabilitiesOf(decoder);
  const std::optional<RecordingInfo>& info = reader->recording_info();  // cstool's files
  const bool foreign = !info;
  std::vector<std::string> unrecorded;
  if (foreign) {
    reader->SetJobs(1);  // the scan's streams read nothing ahead
    unrecorded = UnrecordedModelEvents(*reader, decoder, caps);
    reader->SetJobs(plan.reading);
  }
  std::vector<std::string> cut_damage;
  if (options.salvage)
    if (std::string note = EndAtTheFirstCutCpu(*reader); !note.empty())
      cut_damage.push_back(std::move(note));
  std::vector<std::string> unfiltered_damage;
  std::unique_ptr<TraceFileReader> unfiltered =
      OpenUnfilteredRuntime(file, *reader, reader_options, unfiltered_damage);
  // The buffer ends where the trace does (a cut recording, a salvaged one); a cut leaves
  // increments out of both.
  if (unfiltered && reader->end_ts() > 0 &&
      (unfiltered->end_ts() == 0 || reader->end_ts() < unfiltered->end_ts()))
    unfiltered->EndAt(reader->end_ts());
  caps.all_increments =
      caps.stat_runtime && cut_damage.empty() && AllIncrementsInFile(*reader, unfiltered.get());
  if (info) {
    caps.wakelist_function = info->wakelist_function;
    caps.exit_listener_tid = info->exit_listener_tid;
    caps.unfiltered_moves = info->unfiltered_migrations;
    caps.untraced_cpus = info->untraced_cpus;
  }

  auto result = std::make_unique<AnalyzedTrace>();
  ReportModel& model = result->model;
  result->machine = std::make_unique<StateMachine>(syscalls, caps, PolicyFor(info));
  if (options.explain_anomalies) {
    constexpr size_t kMaxDetails = 10000;
    // A count other than one is shown as ANOMALIES shows it (lost_events=N for a gap), so
    // that the entries add up to the table's counts.
    result->machine->SetAnomalyLog([&model](Anomaly a, int64_t ts, int32_t cpu, int32_t tid,
                                            uint64_t count) {
      if (model.trace.anomaly_details.size() < kMaxDetails)
        model.trace.anomaly_details.push_back(fmt::format(
            "{} cpu{}{} {}{}", TraceTimeText(ts), cpu, tid >= 0 ? fmt::format(" tid {}", tid) : "",
            NameOf(a), count == 1 ? std::string() : fmt::format("={}", count)));
    });
  }
  if (info) {  // observers may read it
    model.trace.has_recording_info = true;
    model.trace.recording = *info;
  }
  model.has_stacks = decoder.Knows(EventKind::kKernelStack);
  result->observers = MakeReportObservers(model, options.counter_windows);
  for (auto& p : result->observers) result->machine->AddObserver(p.get());
  for (Observer* p : options.extra_observers) result->machine->AddObserver(p);

  reader->PrepareSavedComms();
  result->machine->SetSavedComm([&reader](int32_t tid) { return reader->SavedComm(tid); });
  if (options.on_open) options.on_open(info ? &*info : nullptr);
  if (info) {
    for (const AttachSeed& s : info->attach_seeds)
      result->machine->SeedThread(s, info->attach_seed_ts);
    if (info->window_start_ts > 0) result->machine->BeginAt(info->window_start_ts);
  }
  if (plan.analysis_reads_ahead) reader->ReadAheadOnCallers();
  const DecodeOptions decode_options{.unfiltered_runtime = unfiltered.get()};
  StateMachine& machine = *result->machine;
  DecodeStats stats =
      plan.decoding_shares > 1
          ? DecodeTraceInGroups(*reader, decoder, machine, decode_options, plan.decoding_shares)
      : plan.decode_thread ? DecodeTraceOnThread(*reader, decoder, machine, decode_options)
                           : DecodeTraceTo(*reader, decoder, machine, decode_options);
  std::string dump_blind_spot;
  if (info && !info->window_seeds.empty()) {
    dump_blind_spot = DumpWindowBlindSpot(*info, caps, machine.events_lost(),
                                          !cut_damage.empty() || reader->end_ts() > 0);
    if (dump_blind_spot.empty())
      for (const AttachSeed& s : info->window_seeds)
        machine.SeedUnseenThread(s, info->window_start_ts);
  }
  // Past the last event only while something recorded lives on: once the workload has
  // exited, the rest is the recorder's reaction to that. A dump is of its whole window.
  const bool dump = info && info->window_start_ts > 0;
  const int64_t end = dump || result->machine->FollowedThreadAlive()
                          ? std::max(stats.last_ts, RecordingEnd(*reader))
                          : stats.last_ts;
  result->machine->Finish(end);
  result->machine->SetSavedComm({});  // the reader goes with this function
  // Files by trace-cmd carry the kernel_stack format whether or not stacks were traced:
  // the sites appear where stacks of sleeps were found.
  model.has_stacks = !model.stacks.empty();
  if (model.has_stacks) reader->LoadKernelSymbols();
  for (KernelStackInfo& s : model.stacks) {
    for (uint64_t addr : s.addrs) s.frames.push_back(KernelSymbol(reader->tep(), addr));
    s.site = BlockingSite(s.frames);
  }

  TraceSummary& t = model.trace;
  t.file = file;
  if (unfiltered) {
    t.unfiltered_runtime = {true,
                            stats.unfiltered_runtime_events,
                            stats.unfiltered_runtime_lost,
                            result->machine->unfiltered_increments_used(),
                            result->machine->increments_complete(),
                            result->machine->unfiltered_migrations_used()};
  }
  if (caps.wakelist_function != 0)
    t.wakelist_flushes = {true, result->machine->wakelist_flushes(),
                          result->machine->enqueues_after_flush()};
  t.inferred_kernel_threads = result->machine->inferred_kernel_threads();
  t.events = stats.events;
  t.cpus = reader->cpus();
  t.trace_clock = reader->trace_clock();
  if (t.trace_clock.empty() && info) t.trace_clock = info->trace_clock;
  t.first_ts = stats.first_ts;
  t.last_ts = end;
  // Attached threads' rows start where they were read, a dump's at its window's start.
  if (const int64_t begun = result->machine->first_ts(); begun >= 0)
    t.first_ts = stats.events > 0 ? std::min(stats.first_ts, begun) : begun;
  t.missing_events = decoder.missing_events();
  if (foreign) {
    const std::vector<std::string> noted = UnrecordedNotedEvents(stats, caps);
    unrecorded.insert(unrecorded.end(), noted.begin(), noted.end());
  }
  for (const std::string& e : unrecorded)  // irq_vectors:* may be missing as a format too
    if (std::find(t.missing_events.begin(), t.missing_events.end(), e) == t.missing_events.end())
      t.missing_events.push_back(e);
  t.lost_events = LostEventsPerCpu(stats, *reader, &t.lost_at_least);
  for (int cpu = 0; cpu < reader->cpus(); ++cpu) {
    const std::vector<int>& cut = reader->salvage_log().cut_cpus();
    if (std::find(cut.begin(), cut.end(), cpu) != cut.end() &&
        (cpu >= static_cast<int>(stats.events_per_cpu.size()) || stats.events_per_cpu[cpu] == 0))
      t.unread_cpus.push_back(cpu);
  }
  result->machine->anomalies().ForEachNonZero(
      [&](std::string_view name, uint64_t n) { t.anomalies[std::string(name)] += n; });
  for (auto& [name, n] : stats.anomalies) {
    t.anomalies[name] += n;
    // The decoder counts the records it could not read, and keeps no time or CPU of them.
    if (options.explain_anomalies)
      t.anomaly_details.push_back(
          fmt::format("while decoding: {}={} (records skipped; no time or CPU kept)", name, n));
  }
  t.notes = NotesFor(caps, t);
  if (std::string note = RecorderCostNote(model); !note.empty()) t.notes.push_back(note);
  if (t.unfiltered_runtime.lost_events > 0)
    t.notes.push_back(
        fmt::format("the unfiltered run-time buffer lost {} events: increments and moves done in "
                    "unfollowed tasks' contexts may be missing there (a larger -b helps)",
                    t.unfiltered_runtime.lost_events));
  if (info && !info->system_wide && !info->unfiltered_migrations &&
      stats.events_per_type.contains("sched:sched_migrate_task"))
    t.notes.push_back(
        "this pid-filtered recording has the moves between CPUs done in the followed threads' "
        "own contexts only (no buffer of the other contexts' moves beside it: a flight "
        "recorder's dump, msa -o's file, a recording without sched_stat_runtime, or an older "
        "cstool's): "
        "migrations miss those done by the idle task, other processes' wakeups, the load "
        "balancer and stopper threads");
  if (info && info->recovered)
    t.notes.push_back(
        "recovered from a recording that was killed (record --recover): no kernel counters, no "
        "loss statistics, and the events read but not yet written at the kill are missing");
  if (info && info->window_start_ts != 0) {
    // (Dumps of older versions have no trigger time: their window ends there.)
    const int64_t asked_at = info->trigger_ts > 0 ? info->trigger_ts : info->end_ts;
    t.notes.push_back(fmt::format(
        "flight-recorder dump ({}): the kept window starts at {} (trace clock), {:.3f} s "
        "before the dump was asked for, and ends {:.3f} s after; earlier history was "
        "overwritten by design, not lost; threads alive then start as unknown{}",
        info->trigger, TraceTimeText(info->window_start_ts),
        // (None, when the kernel overwrote it all before a late dump was taken.)
        static_cast<double>(std::max<int64_t>(asked_at - info->window_start_ts, 0)) / 1e9,
        static_cast<double>(info->end_ts - asked_at) / 1e9,
        // (Else the note below says why such a thread has no row.)
        dump_blind_spot.empty() ? ", and a target's thread with no event in the window is in "
                                  "the state /proc showed just before the dump"
                                : ""));
  }
  if (!dump_blind_spot.empty())
    t.notes.push_back(fmt::format(
        "a target's thread with no event in the window has no row: {}, so it may have run "
        "unseen",
        dump_blind_spot));
  if (info && !info->ended_early.empty())
    t.notes.push_back(fmt::format(
        "the recording ends early: {}; the events up to then are complete, and the kernel's "
        "counters cover more than the trace",
        info->ended_early));
  if (info) {
    if (std::string note = StealNote(*info); !note.empty()) t.notes.push_back(note);
    for (std::string& note : ThrottlingNotes(*info)) t.notes.push_back(std::move(note));
  }
  if (info && !info->untraced_cpus.empty())
    t.notes.push_back(fmt::format(
        "CPU {} not recorded (record -C): what ran there is not in the trace, so a thread "
        "queued there (woken or moved onto it) is unknown (UNK) until it shows up on a "
        "recorded CPU; one that went there unseen keeps its last state",
        FormatCpuList(info->untraced_cpus)));
  if (info && !info->untraced_tids.empty())
    t.notes.push_back(fmt::format(
        "the recorder's own {} thread{} not traced (as trace-cmd leaves itself out) and {} "
        "not in the report; --all-threads shows what other threads' events tell of them",
        info->untraced_tids.size(), info->untraced_tids.size() == 1 ? " was" : "s were",
        info->untraced_tids.size() == 1 ? "is" : "are"));
  if (const std::vector<std::string>& absent = reader->absent_instance_names();
      std::find(absent.begin(), absent.end(), tracefile::kUnfilteredRuntimeBuffer) != absent.end())
    t.notes.push_back(fmt::format(
        "the file names the unfiltered run-time buffer ({}) but holds none of its data: a "
        "tool rewrote the file without it (trace-cmd convert does), or it was cut where the "
        "trace's data end; {}",
        tracefile::kUnfilteredRuntimeBuffer, kWithoutUnfilteredRuntime));
  if (std::string note = BuffersNote(*reader); !note.empty()) t.notes.push_back(note);
  if (std::string note = TscCyclesNote(*reader); !note.empty()) t.notes.push_back(note);
  if (std::string note = UnplacedThreadsNote(*result->machine, decoder, info); !note.empty())
    t.notes.push_back(note);
  if (std::string note = AttachKernelCounters(model); !note.empty()) t.notes.push_back(note);
  const bool has_switch = std::find(t.missing_events.begin(), t.missing_events.end(),
                                    "sched:sched_switch") == t.missing_events.end();
  if (!has_switch)
    t.notes.push_back(
        "no sched:sched_switch in this file: without it no thread is ever seen leaving a CPU, "
        "so the microstates are not measured (a thread shows as running from its first event "
        "on) and there are no switches or waits; record with sched:sched_switch");
  if (!decoder.task_states().from_format() && has_switch)
    t.notes.push_back(fmt::format(
        "sched_switch prev_state letters could not be read from the format ({}); the "
        "current kernel's layout was assumed, so sleep states and preemption may be wrong",
        decoder.task_states().problem()));
  for (const std::string& d : reader->damaged_sections()) t.notes.push_back(d);
  t.damage = reader->salvage_log().entries();
  t.damage.insert(t.damage.end(), cut_damage.begin(), cut_damage.end());
  t.damage.insert(t.damage.end(), unfiltered_damage.begin(), unfiltered_damage.end());
  // What salvage skipped in the buffer read beside the trace: increments, whose absence
  // moves switch instants and times as much as the trace's own damage.
  if (unfiltered)
    t.damage.insert(t.damage.end(), unfiltered->salvage_log().entries().begin(),
                    unfiltered->salvage_log().entries().end());
  return result;
}

}  // namespace cstool
