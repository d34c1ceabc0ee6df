#include "commands/report_command.h"

#include <fmt/core.h>

#include <cmath>
#include <filesystem>
#include <optional>

#include "analysis/critical_path.h"
#include "analysis/report_view.h"
#include "base/errors.h"
#include "base/output_file.h"
#include "check/kernel_check.h"
#include "commands/report_exports.h"
#include "model/syscall_table.h"
#include "output/critical_path_output.h"
#include "output/output.h"
#include "pipeline/analyze_trace.h"
#include "pipeline/output_guard.h"
#include "recording/recovery.h"

namespace cstool {
namespace {

void ReportFinishedExports(const ReportExports::Finished& done, Messages& messages) {
  for (const std::string& w : done.written) messages.Status(w);
  for (const std::string& w : done.warnings) messages.Warning(w);
}

// How many processes or threads an error names before it says how many more there are.
constexpr size_t kListed = 8;

template <typename T, typename Text>
std::string ListOf(const std::vector<T>& items, Text text) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < kListed; ++i)
    out += (i == 0 ? "" : ", ") + text(items[i]);
  if (items.size() > kListed) out += fmt::format(", ... ({} more)", items.size() - kListed);
  return out;
}

std::string ProcessText(const ProcessTotals& p) { return fmt::format("{} {}", p.pid, p.comm); }
std::string ThreadText(const ThreadReport* r) {
  return fmt::format("{} {}", r->thread->tid, r->thread->comm);
}

// The selection as typed: "-p 12345 -t 7".
std::string FilterText(const ViewOptions& v) {
  std::string out;
  for (int32_t pid : v.pids) out += fmt::format("{}-p {}", out.empty() ? "" : " ", pid);
  for (int32_t tid : v.tids) out += fmt::format("{}-t {}", out.empty() ? "" : " ", tid);
  return out;
}

// Why -p/-t selected nothing, and what the file holds instead: the processes (for -p)
// or threads (for -t) of the workload the report would list without them, or the
// threads of the -p processes when only the -t narrowing them matched nothing.
std::string NothingSelected(const ReportModel& model, const SyscallTable& syscalls,
                            const ReportOptions& options) {
  const ViewOptions& asked = options.view;
  const std::string head = fmt::format("no thread matches {}", FilterText(asked));
  const std::string report = fmt::format("cstool report {}{}", options.file,
                                         options.format == "table" ? "" : " --format table");
  if (!asked.pids.empty() && !asked.tids.empty()) {
    ViewOptions by_pid = asked;
    by_pid.tids.clear();
    ReportView v = BuildView(model, syscalls, by_pid);
    if (!v.threads.empty())
      return fmt::format("{}; the threads of {}: {} ({} {} lists them)", head, FilterText(by_pid),
                         ListOf(v.threads, ThreadText), report, FilterText(by_pid));
  }
  ViewOptions unfiltered;
  unfiltered.all_threads = asked.all_threads;
  ReportView shown = BuildView(model, syscalls, unfiltered);
  unfiltered.all_threads = true;
  ReportView all = BuildView(model, syscalls, unfiltered);
  const bool by_process = !asked.pids.empty() && !all.processes.empty();
  const size_t outside = by_process ? all.processes.size() - shown.processes.size()
                                    : all.threads.size() - shown.threads.size();
  const char* what = by_process ? "processes" : "threads";
  if (all.threads.empty()) return head + "; the file holds no threads";
  if (shown.threads.empty())  // no recorded workload: name what there is
    return fmt::format(
        "{}; the file's {}: {} ({} --all-threads lists them)", head, what,
        by_process ? ListOf(all.processes, ProcessText) : ListOf(all.threads, ThreadText), report);
  std::string out = fmt::format(
      "{}; the file's {}: {} ({} lists them", head, what,
      by_process ? ListOf(shown.processes, ProcessText) : ListOf(shown.threads, ThreadText),
      report);
  if (outside > 0)
    out += fmt::format("; {} more outside the recorded workload with --all-threads", outside);
  return out + ")";
}

// What --critical-path could name instead: the workload's threads (every thread when the
// file has no recorded workload).
std::string FileThreads(const ReportModel& model, const SyscallTable& syscalls,
                        const std::string& file) {
  ViewOptions options;
  ReportView shown = BuildView(model, syscalls, options);
  if (shown.threads.empty()) {
    options.all_threads = true;
    shown = BuildView(model, syscalls, options);
  }
  if (shown.threads.empty()) return "the file holds no threads";
  return fmt::format("the file's threads: {} (cstool report {}{} lists them)",
                     ListOf(shown.threads, ThreadText), file,
                     options.all_threads ? " --all-threads" : "");
}

// The thread --critical-path names: of the threads that had this tid (tid reuse, or an
// exec that gave a thread its leader's tid: its own tid names it too), the one alive at
// `to` (the latest one that began by then), else the last one.
const Thread* PathTarget(const ReportModel& model, int32_t tid, int64_t to) {
  const Thread* found = nullptr;
  for (const ThreadReport& r : model.threads) {
    if (!r.thread || !r.thread->GoesBy(tid)) continue;
    if (to < 0 || r.thread->first_ts <= to || !found) found = r.thread;
  }
  return found;
}

int64_t SecondsToTs(const TraceSummary& trace, double s, int64_t unset) {
  return s < 0 ? unset : trace.first_ts + std::llround(s * 1e9);
}

int RunCriticalPath(const ReportOptions& options, const ReportModel& model,
                    const SyscallTable& syscalls, const CriticalPathRecorder& recorder,
                    ReportExports& exports, std::ostream& out) {
  const TraceSummary& trace = model.trace;
  const int64_t to = SecondsToTs(trace, options.path_to_s, -1);
  const Thread* target = PathTarget(model, options.critical_path_tid, to);
  if (!target)
    throw Error(fmt::format("--critical-path {}: no thread with that tid in {}; {}",
                            options.critical_path_tid, options.file,
                            FileThreads(model, syscalls, options.file)));
  const int64_t from = SecondsToTs(trace, options.path_from_s, target->first_ts);
  auto seconds = [&trace](int64_t ts) { return static_cast<double>(ts - trace.first_ts) / 1e9; };
  if (options.path_from_s >= 0 && from >= target->end_ts)
    throw Error(fmt::format("--critical-path {}: --from {:.6f} s is not before the thread's "
                            "last event at {:.6f} s (its first is at {:.6f} s)",
                            options.critical_path_tid, seconds(from), seconds(target->end_ts),
                            seconds(target->first_ts)),
                ExitCode::kUsage);
  if (to >= 0 && to <= target->first_ts)
    throw Error(fmt::format("--critical-path {}: --to {:.6f} s is not after the thread's "
                            "first event at {:.6f} s",
                            options.critical_path_tid, seconds(to), seconds(target->first_ts)),
                ExitCode::kUsage);
  if (to >= 0 && to <= from)
    throw Error("--critical-path: --to must be after --from", ExitCode::kUsage);
  const CriticalPath path = recorder.Walk(*target, from, to >= 0 ? to : target->end_ts);
  RenderCriticalPath(path, trace.first_ts, options.format, out, options.critical_path_rows);
  exports.AddCriticalPath(path);
  return 0;
}

}  // namespace

int RunReport(const ReportOptions& options, std::ostream& out, Messages& messages) {
  // Validate first.
  const bool tables = TableExport::IsTableFormat(options.format);
  // The files this report writes, by the option naming each.
  const std::vector<std::pair<std::string_view, std::string>> outputs{
      {"-o", options.tables.path},
      {"--timeline", options.exports.timeline},
      {"--html", options.exports.html}};
  RefuseSharedOutputs(outputs);
  std::unique_ptr<Output> output;
  std::optional<OutputFile> file_out;  // -o FILE of a table, json or csv report
  if (!tables) {
    if (options.format != "table" && options.format != "json" && options.format != "csv")
      throw Error(fmt::format("unknown format '{}' (valid: table, json, csv, sqlite, jsonl)",
                              options.format),
                  ExitCode::kUsage);
    if (!options.tables.host.empty() || options.tables.replace)
      throw Error(fmt::format("{} goes with --format sqlite|jsonl (the export's rows)",
                              options.tables.replace ? "--replace" : "--host"),
                  ExitCode::kUsage);
    if (!options.tables.path.empty()) {
      std::error_code ec;
      if (std::filesystem::equivalent(options.tables.path, options.file, ec))
        throw Error(fmt::format("-o {} is the recording being read (record writes to -o; "
                                "report reads FILE)",
                                options.tables.path),
                    ExitCode::kUsage);
      RefuseToOverwriteKeptFile(options.tables.path, "-o");
      file_out.emplace(options.tables.path);
    }
    output = MakeOutput(options.format, file_out ? file_out->stream() : out);
  } else if (options.tables.path.empty()) {
    throw Error(fmt::format("--format {} needs -o {}", options.format,
                            options.format == "sqlite" ? "FILE.db" : "DIR"),
                ExitCode::kUsage);
  } else if (options.format == "sqlite") {
    RefuseToOverwriteRecording(options.tables.path, "-o");
  }
  std::error_code ec;
  if (!std::filesystem::exists(options.file, ec) && LiveRecorderOf(options.file) != 0)
    throw Error(fmt::format("{} is still being recorded (stop the recording first)", options.file));
  if (!std::filesystem::exists(options.file, ec) && !LeftoversOf(options.file).empty())
    throw Error(
        fmt::format("{} does not exist, but a recording into it was killed (or could not "
                    "write it) and left what it wrote: `cstool record --recover {}` makes it a "
                    "readable file",
                    options.file, options.file));
  if (!options.file_named && !std::filesystem::exists(options.file, ec)) {
    // `report --timeline run.dat`: the recording was meant, and taken as the output.
    for (const auto& [option, path] : outputs)
      if (!path.empty() && KeptFileAt(path) == KeptFile::kRecording)
        throw Error(fmt::format("no recording here ({} does not exist), and {} {} names a "
                                "recording as the output: to read it, put it first: cstool "
                                "report {} {} OUT",
                                options.file, option, path, path, option),
                    ExitCode::kUsage);
    throw Error(
        fmt::format("no recording here ({} does not exist): run `cstool record -- CMD` "
                    "first, or name a file: cstool report FILE",
                    options.file));
  }
  SyscallTable syscalls;
  ReportExports exports(options.exports, options.view, syscalls);
  std::unique_ptr<TableExport> table_export;
  std::vector<Observer*> observers = exports.observers();
  if (tables) {
    TableExportOptions t = options.tables;
    t.format = options.format;
    table_export = std::make_unique<TableExport>(t, options.file, syscalls);
    if (!table_export->recovered().empty()) messages.Warning(table_export->recovered());
    observers.push_back(table_export->observer());
  }
  std::unique_ptr<CriticalPathRecorder> path_recorder;
  if (options.critical_path_tid != 0) {
    path_recorder = std::make_unique<CriticalPathRecorder>();
    observers.push_back(path_recorder.get());
    exports.KeepTimelineOpen();
  }
  // The export's kernel_check table is the check's result.
  std::unique_ptr<AnalyzedTrace> analyzed;
  try {
    analyzed = AnalyzeTrace(
        options.file, syscalls,
        {.explain_anomalies = options.explain_anomalies,
         .salvage = options.salvage,
         .reader = options.reader,
         .buffer = options.buffer,
         .jobs = options.jobs,
         .counter_windows = options.check || tables,
         .extra_observers = observers,
         .on_open = [&exports](const RecordingInfo* info) { exports.TraceOpened(info); }});
  } catch (const DamagedDataError& e) {
    throw Error(fmt::format("{} (--salvage reports what the file still holds)", e.what()));
  }
  for (const std::string& d : analyzed->model.trace.damage)
    messages.Warning(fmt::format("salvaged: {}", d));
  if (std::string w = DamagedRecordsWarning(analyzed->model.trace); !w.empty()) messages.Warning(w);
  ReportView view = BuildView(analyzed->model, syscalls, options.view);
  if (path_recorder) {
    try {
      const int status = RunCriticalPath(options, analyzed->model, syscalls, *path_recorder,
                                         exports, file_out ? file_out->stream() : out);
      if (file_out) file_out->Commit();
      ReportFinishedExports(exports.Finish(view), messages);
      return status;
    } catch (...) {
      exports.Discard();
      throw;
    }
  }
  if (view.threads.empty() && (!options.view.pids.empty() || !options.view.tids.empty())) {
    exports.Discard();
    throw Error(NothingSelected(analyzed->model, syscalls, options));
  }
  std::optional<KernelCheckResult> check;
  if (options.check || tables) {
    check = CheckAgainstKernel(analyzed->model, view.threads);
    view.check = &*check;
  }
  if (table_export) {
    table_export->Finish(view, view.check);
    messages.Status(table_export->Summary());
    if (options.check) messages.Status(check->Verdict());
  } else {
    output->Render(view);
    if (file_out) file_out->Commit();
    // CSV is one table, one row per thread: the verdict, which the table and JSON hold,
    // is the status line there.
    if (options.check && options.format == "csv") messages.Status(check->Verdict());
  }
  ReportFinishedExports(exports.Finish(view), messages);
  return options.check && !check->passed() ? static_cast<int>(ExitCode::kFailure) : 0;
}

}  // namespace cstool
