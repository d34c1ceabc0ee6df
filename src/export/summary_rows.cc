#include "export/summary_rows.h"

#include <unordered_set>

#include "base/version.h"

namespace cstool {
namespace {

Value Bool(bool b) { return int64_t{b ? 1 : 0}; }
Value U(uint64_t n) { return static_cast<int64_t>(n); }

void WriteTrace(const TraceSummary& t, RowSink& sink) {
  uint64_t lost = 0;
  for (auto [cpu, n] : t.lost_events) lost += n;
  std::string command;
  for (const std::string& arg : t.recording.command) command += (command.empty() ? "" : " ") + arg;
  const bool info = t.has_recording_info;
  const Value row[] = {std::string_view(t.file),
                       U(t.events),
                       int64_t{t.cpus},
                       t.first_ts,
                       t.last_ts,
                       t.last_ts - t.first_ts,
                       U(lost),
                       !t.trace_clock.empty() ? Value{std::string_view(t.trace_clock)} : Value{},
                       info && !command.empty() ? Value{std::string_view(command)} : Value{},
                       std::string_view(Version())};
  sink.Add(Table::kTrace, row);
  for (auto [cpu, n] : t.lost_events) {
    const Value lost_row[] = {int64_t{cpu}, U(n)};
    sink.Add(Table::kLostEvents, lost_row);
  }
}

void WriteThread(const ReportView& view, const ThreadReport& r, bool in_report, RowSink& sink) {
  const Thread& th = *r.thread;
  const int64_t utid = th.id;
  const Value row[] = {utid,
                       int64_t{th.tid},
                       PidKnown(th) ? Value{int64_t{th.tgid}} : Value{},
                       std::string_view(th.comm),
                       th.first_ts,
                       th.end_ts,
                       r.Lifetime(),
                       Bool(in_report),
                       Bool(th.created_in_trace),
                       Bool(th.exiting),
                       Bool(th.lost_touched),
                       U(r.voluntary),
                       U(r.involuntary),
                       U(r.wakeups),
                       U(r.migrations)};
  sink.Add(Table::kThread, row);
  for (size_t i = 0; i < kMicrostateCount; ++i) {
    const Value m[] = {utid, kMicrostateNames[i].key, r.microstates[i]};
    sink.Add(Table::kMicrostate, m);
  }
  for (auto& [nr, s] : r.syscalls) {
    const std::string name = view.syscalls->Name(nr);
    const Value row_s[] = {utid, std::string_view(name), U(s.calls), U(s.blocked), s.time_ns};
    sink.Add(Table::kSyscall, row_s);
  }
  for (auto& [name, s] : r.irqs) {
    const Value row_i[] = {utid, std::string_view(*name), U(s.count), s.time_ns};
    sink.Add(Table::kIrq, row_i);
  }
}

void WriteCheck(const ReportView& view, const KernelCheckResult& check, RowSink& sink) {
  if (!check.has_counters) return;
  // CheckAgainstKernel compares the selection in order, one ThreadCheck per thread.
  for (size_t i = 0; i < check.threads.size() && i < view.threads.size(); ++i) {
    const ThreadCheck& c = check.threads[i];
    const Value row[] = {int64_t{view.threads[i]->thread->id},
                         int64_t{c.tid},
                         CheckStatusName(c.status),
                         c.traced.voluntary,
                         c.kernel.voluntary,
                         c.traced.involuntary,
                         c.kernel.involuntary,
                         c.traced.on_cpu_ns,
                         c.kernel.on_cpu_ns,
                         c.traced.wait_cpu_ns,
                         c.kernel.wait_cpu_ns,
                         c.unknown_ns,
                         c.on_cpu_tolerance_ns,
                         c.wait_tolerance_ns,
                         Bool(c.switches_ok),
                         Bool(c.on_cpu_ok),
                         Bool(c.wait_ok),
                         Bool(c.times_judged),
                         c.note.empty() ? Value{} : Value{std::string_view(c.note)}};
    sink.Add(Table::kKernelCheck, row);
  }
}

}  // namespace

void WriteSummaryRows(const ReportView& report, const KernelCheckResult* check, RowSink& sink) {
  const ReportModel& model = *report.model;
  WriteTrace(model.trace, sink);

  // Every thread the trace saw, as `report --all-threads` lists them.
  std::unordered_set<const ThreadReport*> selected(report.threads.begin(), report.threads.end());
  ViewOptions everything;
  everything.all_threads = true;
  const ReportView all = BuildView(model, *report.syscalls, everything);
  std::unordered_set<int32_t> selected_pids;
  for (const ProcessTotals& p : report.processes) selected_pids.insert(p.pid);
  for (const ProcessTotals& p : all.processes) {
    const Value row[] = {int64_t{p.pid}, p.ppid != 0 ? Value{int64_t{p.ppid}} : Value{},
                         std::string_view(p.comm), int64_t{p.threads},
                         Bool(selected_pids.contains(p.pid))};
    sink.Add(Table::kProcess, row);
  }
  for (const ThreadReport* r : all.threads) WriteThread(all, *r, selected.contains(r), sink);
  if (check) WriteCheck(report, *check, sink);
}

}  // namespace cstool
