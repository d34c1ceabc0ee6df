#include <fmt/core.h>

#include "analysis/blocking_site.h"
#include "counters/derived_metrics.h"
#include "output/check_output.h"
#include "output/output.h"

namespace cstool {
namespace {

nlohmann::json MicrostatesJson(const MicrostateTimes& m) {
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < kMicrostateCount; ++i) j[std::string(kMicrostateNames[i].key)] = m[i];
  return j;
}

nlohmann::json SwitchesJson(const ReportView& view, const ThreadReport& r) {
  nlohmann::json causes = nlohmann::json::object();
  for (auto& [label, n] : view.Causes(r)) causes[label] = n;
  nlohmann::json at = nlohmann::json::object();
  for (size_t i = 0; i < kPreemptedAtCount; ++i)
    at[std::string(kPreemptedAtKeys[i])] = r.preempted_at[i];
  return {{"voluntary", r.voluntary},
          {"involuntary", r.involuntary},
          {"after_exit",
           {{"voluntary", r.voluntary_after_exit}, {"involuntary", r.involuntary_after_exit}}},
          {"involuntary_to_recorder", r.involuntary_to_recorder},
          {"causes", causes},
          {"preempted_at", at}};
}

// The longest wait for a CPU as traced (wakeup or preemption to switch-in), of how many.
nlohmann::json LongestWaitJson(const ThreadReport& r) {
  return {{"waits", r.waits_ended},
          {"ns", r.longest_wait_ns},
          {"from_ts", r.longest_wait_from >= 0 ? nlohmann::json(r.longest_wait_from) : nullptr}};
}

nlohmann::json SyscallsJson(const ReportView& view, const ThreadReport& r) {
  nlohmann::json j = nlohmann::json::object();
  for (auto& [nr, s] : r.syscalls)
    j[view.syscalls->Name(nr)] = {
        {"calls", s.calls}, {"blocked", s.blocked}, {"time_ns", s.time_ns}};
  return j;
}

// Where the kernel's accounting put the thread's switches, against the trace: the
// microstates follow the kernel; these say how far the traced switches were.
nlohmann::json PlacementJson(const Thread::SwitchPlacement& p) {
  return {{"wakeup_to_switch_in_ns", p.in_early_ns},
          {"wakeup_to_switch_out_ns", p.out_early_ns},
          {"untraced_switch_ins", p.untraced_switch_ins},
          {"untraced_switch_outs", p.untraced_switch_outs},
          {"asleep_queued_ns", p.asleep_queued_ns},
          {"asleep_maybe_queued_ns", p.asleep_maybe_queued_ns},
          {"host_steal_on_cpu_ns", p.stolen_ns}};
}

// A process with all its descendants (the command tree's totals).
nlohmann::json SubtreeJson(const SubtreeTotals& t) {
  return {{"processes", t.processes},
          {"threads", t.threads},
          {"wall_ns", t.Wall()},
          {"microstates_ns", MicrostatesJson(t.microstates)},
          {"switches", {{"voluntary", t.voluntary}, {"involuntary", t.involuntary}}}};
}

// The anomalies that concerned the thread, by name (the trace's table, per thread).
nlohmann::json AnomaliesJson(const AnomalyCounters& a) {
  nlohmann::json j = nlohmann::json::object();
  a.ForEachNonZero([&](std::string_view name, uint64_t n) { j[std::string(name)] = n; });
  return j;
}

nlohmann::json IrqsJson(const ThreadReport& r) {
  nlohmann::json j = nlohmann::json::object();
  for (auto& [name, s] : r.irqs) j[*name] = {{"count", s.count}, {"time_ns", s.time_ns}};
  return j;
}

// record --stacks: where the thread slept, by cause and blocking site, with the
// symbolized call chains (innermost frame first).
nlohmann::json BlockingSitesJson(const ReportView& view, const ThreadReport& r) {
  nlohmann::json j = nlohmann::json::array();
  for (const BlockingSiteRow& row : BlockingSites(*view.model, r)) {
    const std::string cause = view.syscalls->CauseLabel(SwitchCause::Unpack(row.cause));
    nlohmann::json stacks = nlohmann::json::array();
    for (const BlockedStackStats* s : row.stacks)
      stacks.push_back({{"count", s->count},
                        {"blocked_ns", s->blocked_ns},
                        {"frames", view.model->stacks[s->stack].frames}});
    j.push_back({{"cause", cause},
                 {"site", row.site},
                 {"label", cause + " @ " + row.site},
                 {"count", row.count},
                 {"blocked_ns", row.blocked_ns},
                 {"stacks", stacks}});
  }
  return j;
}

// A waker or runner: the thread (or, in a process's totals, its process), or a named
// source that is no thread ("irq:24 virtio0", "idle", "unknown").
nlohmann::json PartyJson(const WaitParty& p, bool as_process) {
  if (!p.thread) return {{"source", p.source}};
  const Thread& t = *p.thread;
  nlohmann::json pid = PidKnown(t) ? nlohmann::json(t.tgid) : nullptr;
  if (as_process) return {{"pid", pid}, {"comm", t.comm}};
  return {{"tid", t.tid}, {"pid", pid}, {"comm", t.comm}};
}

nlohmann::json WokenByJson(const ThreadReport& r, bool as_process) {
  nlohmann::json j = nlohmann::json::array();
  for (const WokenBy& w : r.woken_by) {
    nlohmann::json e = PartyJson(w.waker, as_process);
    e["wakeups"] = w.wakeups;
    e["blocked_ns"] = w.blocked_ns;
    j.push_back(std::move(e));
  }
  return j;
}

nlohmann::json WaitedBehindJson(const ThreadReport& r, bool as_process) {
  nlohmann::json j = nlohmann::json::array();
  for (const WaitedBehind& w : r.waited_behind) {
    nlohmann::json e = PartyJson(w.running, as_process);
    e["time_ns"] = w.time_ns;
    j.push_back(std::move(e));
  }
  return j;
}

// The wait_cpu_* microstates split by what ended the wait's parts: its parts sum to
// wait_cpu_wakeup + wait_cpu_preempted.
nlohmann::json WaitCpuJson(const ThreadReport& r) {
  const int64_t wakeup = r.microstates[static_cast<size_t>(Microstate::kWaitCpuWakeup)];
  const int64_t preempted = r.microstates[static_cast<size_t>(Microstate::kWaitCpuPreempted)];
  return {{"wakeup", wakeup - r.wait_before_migration_wakeup_ns},
          {"preempted", preempted - r.wait_before_migration_preempted_ns},
          {"before_migration",
           r.wait_before_migration_wakeup_ns + r.wait_before_migration_preempted_ns}};
}

nlohmann::json MigrationPairsJson(const ThreadReport& r) {
  nlohmann::json j = nlohmann::json::object();
  for (auto& [pair, n] : r.migration_pairs) j[fmt::format("{}->{}", pair.first, pair.second)] = n;
  return j;
}

// record -c/-V: a thread's or process's counts over its counted span, per second of it,
// and the metrics derived from them.
nlohmann::json CountersJson(const ReportView& view, const CounterTotals& c) {
  nlohmann::json values = nlohmann::json::object();
  nlohmann::json rates = nlohmann::json::object();
  for (size_t i = 0; i < view.counter_names.size() && i < c.values.size(); ++i) {
    values[view.counter_names[i]] = c.values[i];
    rates[view.counter_names[i]] = c.Rate(i);
  }
  nlohmann::json derived = nlohmann::json::object();
  for (const auto& [key, v] : DerivedMetrics(view.counter_names, c.values)) derived[key] = v;
  return {{"values", values},
          {"per_second", rates},
          {"derived", derived},
          {"scaled", c.scaled},
          {"first_ts", c.first_ts},
          {"last_ts", c.last_ts},
          {"span_ns", c.last_ts - c.first_ts},
          {"samples", c.samples},
          {"exited", c.exited}};
}

// record -c EVENT:ebs=N: a thread's (process's) ring counts and, for a thread, every
// overflow with the perf columns' values at that moment.
nlohmann::json SamplingJson(const ReportView& view, const SamplingThreadStats& t,
                            const std::vector<CounterOverflow>* overflows) {
  nlohmann::json j = {{"event", view.sampling.event}, {"period", view.sampling.period},
                      {"samples", t.samples},         {"lost", t.lost},
                      {"throttles", t.throttles},     {"unthrottles", t.unthrottles}};
  if (!overflows) return j;
  nlohmann::json list = nlohmann::json::array();
  for (const CounterOverflow& o : *overflows) {
    nlohmann::json values = nlohmann::json::object();
    for (size_t i = 0; i < o.values.size() && i < view.counter_names.size(); ++i)
      values[view.counter_names[i]] = o.values[i];
    list.push_back({{"ts", o.ts},
                    {"cpu", o.cpu},
                    {"ip", fmt::format("{:#x}", o.ip)},
                    {"values", values},
                    {"scaled", o.scaled}});
  }
  j["overflows"] = list;
  return j;
}

class JsonOutput : public Output {
 public:
  explicit JsonOutput(std::ostream& os) : os_(os) {}
  void Render(const ReportView& view) override {
    // Names (comm, file) come from the trace file and need not be UTF-8: replace bad bytes.
    os_ << ReportToJson(view).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }

 private:
  std::ostream& os_;
};

}  // namespace

nlohmann::json ReportToJson(const ReportView& view) {
  const TraceSummary& t = view.model->trace;
  nlohmann::json lost = nlohmann::json::object();
  for (auto [cpu, n] : t.lost_events) lost[std::to_string(cpu)] = n;
  const uint64_t lost_total = t.LostOnReadCpus();  // as the table's total (unread: unknown)
  nlohmann::json anomalies = nlohmann::json::object();
  for (auto& [name, n] : t.anomalies) anomalies[name] = n;
  nlohmann::json trace = {{"file", t.file},
                          {"events", t.events},
                          {"cpus", t.cpus},
                          {"first_ts", t.first_ts},
                          {"duration_ns", t.last_ts - t.first_ts},
                          {"lost_events", lost},
                          {"lost_events_total", lost_total},
                          {"anomalies", anomalies},
                          {"anomaly_details", t.anomaly_details},
                          {"missing_events", t.missing_events},
                          {"notes", t.notes}};
  if (std::string note = view.UngroupedNote(); !note.empty()) trace["notes"].push_back(note);
  if (!t.damage.empty()) {  // report --salvage read past damage
    trace["salvaged"] = true;
    trace["damage"] = t.damage;
    trace["unread_cpus"] = t.unread_cpus;
  }
  trace["trace_clock"] = t.trace_clock.empty() ? nlohmann::json() : nlohmann::json(t.trace_clock);
  if (t.has_recording_info) {
    trace["command"] = t.recording.command;
    trace["target_pids"] = t.recording.target_pids;
    trace["system_wide"] = t.recording.system_wide;
    if (t.recording.child.pid != 0) {
      trace["child"] = t.recording.child;
      // Not reaped (a recovered recording: its recorder was killed first): how it ended
      // and what it used are unknown, not 0.
      if (!t.recording.child.reaped)
        for (const char* key : {"wait_status", "exit_nvcsw", "exit_nivcsw", "utime_ns", "stime_ns"})
          trace["child"][key] = nullptr;
    }
    if (t.recording.window_start_ts != 0)
      trace["flight_dump"] = {
          {"window_start_ts", t.recording.window_start_ts},
          {"window_end_ts", t.recording.end_ts},
          {"trigger", t.recording.trigger},
          // (Dumps of older versions: their end.)
          {"trigger_ts", t.recording.trigger_ts > 0 ? t.recording.trigger_ts : t.recording.end_ts}};
    if (!t.recording.ended_early.empty()) trace["ended_early"] = t.recording.ended_early;
    if (t.unfiltered_runtime.present)
      trace["unfiltered_runtime"] = {
          {"other_context_increments", t.unfiltered_runtime.other_context_increments},
          {"lost_events", t.unfiltered_runtime.lost_events},
          {"increments_used", t.unfiltered_runtime.increments_used},
          {"migrations_used", t.unfiltered_runtime.migrations_used},
          {"all_increments", t.unfiltered_runtime.all_increments}};
    if (t.wakelist_flushes.traced)
      trace["wakelist_flushes"] = {
          {"flushes", t.wakelist_flushes.flushes},
          {"enqueues_after_flush", t.wakelist_flushes.enqueues_after_flush}};
    if (!t.recording.steal.empty()) {
      nlohmann::json per_cpu = nlohmann::json::object();
      for (const CpuSteal& c : t.recording.steal) per_cpu[std::to_string(c.cpu)] = c.Stolen();
      trace["host_steal"] = {
          {"total_ns", t.recording.TotalStolenNs()},
          {"step_ns", t.recording.steal_step_ns},
          {"source",
           t.recording.steal_source.empty() ? std::string("/proc/stat") : t.recording.steal_source},
          {"per_cpu_ns", per_cpu}};
    }
    if (!t.recording.throttling.empty()) trace["cpu_throttling"] = t.recording.throttling;
    if (!view.counter_names.empty()) {
      trace["counter_names"] = view.counter_names;
      trace["counter_interval_ns"] = view.counter_interval_ns;
      trace["counter_notes"] = view.counter_notes;
      if (view.sampling.period != 0)
        trace["counter_sampling"] = {{"event", view.sampling.event},
                                     {"period", view.sampling.period}};
    }
  }

  nlohmann::json threads = nlohmann::json::array();
  for (const ThreadReport* r : view.threads) {
    const Thread& th = *r->thread;
    nlohmann::json j = {{"tid", th.tid},
                        {"pid", PidKnown(th) ? nlohmann::json(th.tgid) : nullptr},
                        {"comm", th.comm},
                        {"lifetime_ns", r->Lifetime()},
                        {"unknown_ns", r->microstates[static_cast<size_t>(Microstate::kUnknown)]},
                        {"lost_events_touched", th.lost_touched},
                        {"created_in_trace", th.created_in_trace},
                        {"exited", th.exiting},
                        {"switches", SwitchesJson(view, *r)},
                        {"microstates_ns", MicrostatesJson(r->microstates)},
                        {"syscalls", SyscallsJson(view, *r)},
                        {"irqs", IrqsJson(*r)},
                        {"wakeups", r->wakeups},
                        {"migrations", r->migrations},
                        {"migration_pairs", MigrationPairsJson(*r)},
                        {"wait_cpu_ns", WaitCpuJson(*r)},
                        {"woken_by", WokenByJson(*r, false)},
                        {"waited_behind", WaitedBehindJson(*r, false)},
                        {"longest_wait", LongestWaitJson(*r)},
                        {"switch_placement", PlacementJson(r->placement)},
                        {"anomalies", AnomaliesJson(r->thread->anomalies)}};
    if (!r->kernel.is_null()) j["kernel"] = r->kernel;
    if (th.tid_before_exec != 0) j["tid_before_exec"] = th.tid_before_exec;
    if (view.model->has_stacks) j["blocking_sites"] = BlockingSitesJson(view, *r);
    if (const CounterTotals* c = view.CountersOf(th)) {
      j["counters"] = CountersJson(view, *c);
      if (const SamplingThreadStats* t = view.SamplingOf(th))
        j["counters"]["ebs"] = SamplingJson(view, *t, &view.OverflowsOf(th));
    }
    threads.push_back(std::move(j));
  }
  nlohmann::json processes = nlohmann::json::array();
  for (size_t i = 0; i < view.processes.size(); ++i) {
    const ProcessTotals& p = view.processes[i];
    processes.push_back({{"pid", p.pid},
                         {"ppid", p.ppid != 0 ? nlohmann::json(p.ppid) : nullptr},
                         {"comm", p.comm},
                         {"threads", p.threads},
                         {"lifetime_ns", p.lifetime_sum},
                         {"lost_events_touched", p.lost_touched},
                         {"switches", SwitchesJson(view, p.sum)},
                         {"microstates_ns", MicrostatesJson(p.sum.microstates)},
                         {"syscalls", SyscallsJson(view, p.sum)},
                         {"irqs", IrqsJson(p.sum)},
                         {"migrations", p.sum.migrations},
                         {"migration_pairs", MigrationPairsJson(p.sum)},
                         {"wait_cpu_ns", WaitCpuJson(p.sum)},
                         {"woken_by", WokenByJson(p.sum, true)},
                         {"waited_behind", WaitedBehindJson(p.sum, true)},
                         {"longest_wait", LongestWaitJson(p.sum)},
                         {"switch_placement", PlacementJson(p.sum.placement)},
                         {"tree", SubtreeJson(view.tree.subtree[i])}});
    if (const CounterTotals* c = view.CountersOfProcess(p.pid)) {
      processes.back()["counters"] = CountersJson(view, *c);
      if (auto it = view.process_sampling.find(p.pid); it != view.process_sampling.end())
        processes.back()["counters"]["ebs"] = SamplingJson(view, it->second, nullptr);
    }
  }
  nlohmann::json roots = nlohmann::json::array();
  for (size_t i : view.tree.roots) roots.push_back(view.processes[i].pid);
  nlohmann::json report = {
      {"trace", trace}, {"threads", threads}, {"processes", processes}, {"tree_roots", roots}};
  if (view.check) report["check"] = CheckToJson(*view.check);
  return report;
}

std::unique_ptr<Output> MakeJsonOutput(std::ostream& os) {
  return std::make_unique<JsonOutput>(os);
}

}  // namespace cstool
