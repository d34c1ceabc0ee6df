#include <fmt/core.h>
#include <fmt/ostream.h>

#include <array>
#include <string_view>

#include "analysis/blocking_site.h"
#include "check/kernel_check.h"
#include "check/kernel_match.h"
#include "output/output.h"
#include "output/text_escape.h"

namespace cstool {
namespace {

std::string Quote(std::string_view s) { return CsvQuote(s); }

// --check's columns: the window and verdict, then the traced figure beside the kernel's
// over the window the check compares (empty for a thread not compared).
constexpr std::array<std::string_view, 10> kCheckColumns = {
    "check_window",      "check_status",       "check_voluntary", "kernel_nvcsw",
    "check_involuntary", "kernel_nivcsw",      "check_on_cpu_ns", "kernel_exec_runtime_ns",
    "check_wait_cpu_ns", "kernel_run_delay_ns"};

// The check of the view's `i`th thread (CheckAgainstKernel checks the view's threads, in
// order).
const ThreadCheck* CheckOf(const KernelCheckResult& check, size_t i) {
  return i < check.threads.size() ? &check.threads[i] : nullptr;
}

std::string CheckColumns(const ThreadCheck* c) {
  if (c == nullptr) return std::string(kCheckColumns.size(), ',');
  std::string out = fmt::format(",{},{}", WindowModeName(c->mode), CheckStatusName(c->status));
  if (c->mode == WindowMode::kNone) return out + std::string(kCheckColumns.size() - 2, ',');
  return out + fmt::format(",{},{},{},{},{},{},{},{}", c->traced.voluntary, c->kernel.voluntary,
                           c->traced.involuntary, c->kernel.involuntary, c->traced.on_cpu_ns,
                           c->kernel.on_cpu_ns, c->traced.wait_cpu_ns, c->kernel.wait_cpu_ns);
}

class CsvOutput : public Output {
 public:
  explicit CsvOutput(std::ostream& os) : os_(os) {}
  void Render(const ReportView& view) override {
    std::string header = "tid,pid,ppid,comm,lifetime_ns";
    for (const MicrostateNames& n : kMicrostateNames) header += fmt::format(",{}_ns", n.key);
    header += ",voluntary,involuntary";
    for (auto key : kPreemptedAtKeys) header += fmt::format(",preempted_at_{}", key);
    // causes and lost_events_touched come after the wakers' columns, as before they came;
    // record -c/-V adds each counter's total over the thread's counted span (empty: not
    // counted), record --stacks "CAUSE @ SITE=COUNT/BLOCKED_NS;..." (most blocked time first).
    header +=
        ",migrations,wait_before_migration_ns,woken_by,waited_behind,causes,lost_events_touched";
    // JSON's longest_wait, flattened: the longest wait for a CPU (perf sched latency's max
    // delay), where it began, and how many waits ended.
    header += ",longest_wait_ns,longest_wait_from_ts,longest_wait_waits";
    for (const std::string& name : view.counter_names) header += ",counter:" + name;
    // record -c EVENT:ebs=N: the overflows the thread's ring delivered.
    const bool sampling = view.sampling.period != 0;
    if (sampling) header += ",ebs_samples";
    const bool sites = view.model->has_stacks;
    if (sites) header += ",blocking_sites";
    // --check: each thread's comparison with the kernel's counters, in its own row (one
    // table, for whatever reads CSV); the verdict goes to standard error.
    if (view.check)
      for (std::string_view column : kCheckColumns) header += fmt::format(",{}", column);
    header += "\n";
    os_ << header;
    for (size_t i = 0; i < view.threads.size(); ++i) {
      const ThreadReport* r = view.threads[i];
      const Thread& t = *r->thread;
      // An unknown process (or parent) leaves the field empty.
      const int32_t ppid = view.PpidOf(t);
      std::string row =
          fmt::format("{},{},{},{},{}", t.tid, PidKnown(t) ? std::to_string(t.tgid) : "",
                      ppid != 0 ? std::to_string(ppid) : "", Quote(t.comm), r->Lifetime());
      for (int64_t v : r->microstates) row += fmt::format(",{}", v);
      row += fmt::format(",{},{}", r->voluntary, r->involuntary);
      for (uint64_t v : r->preempted_at) row += fmt::format(",{}", v);
      // Like causes: "waker=wakeups/blocked_ns;..." and "runner=ns;...", each party a
      // thread's "tid:comm" or a source's name.
      std::string woken, behind;
      for (const WokenBy& w : r->woken_by)
        woken += fmt::format("{}{}={}/{}", woken.empty() ? "" : ";", PartyText(w.waker), w.wakeups,
                             w.blocked_ns);
      for (const WaitedBehind& w : r->waited_behind)
        behind +=
            fmt::format("{}{}={}", behind.empty() ? "" : ";", PartyText(w.running), w.time_ns);
      row += fmt::format(",{},{},{},{}", r->migrations,
                         r->wait_before_migration_wakeup_ns + r->wait_before_migration_preempted_ns,
                         Quote(woken), Quote(behind));
      std::string causes;
      for (auto& [label, n] : view.Causes(*r))
        causes += fmt::format("{}{}={}", causes.empty() ? "" : ";", label, n);
      row += fmt::format(",{},{}", Quote(causes), t.lost_touched ? 1 : 0);
      row += fmt::format(
          ",{},{},{}", r->longest_wait_ns,
          r->longest_wait_from >= 0 ? std::to_string(r->longest_wait_from) : std::string(),
          r->waits_ended);
      const CounterTotals* c = view.CountersOf(t);
      for (size_t i = 0; i < view.counter_names.size(); ++i)
        row += c && i < c->values.size() ? fmt::format(",{}", c->values[i]) : std::string(",");
      if (sampling) {
        const SamplingThreadStats* st = view.SamplingOf(t);
        row += st ? fmt::format(",{}", st->samples) : std::string(",");
      }
      if (sites) {
        std::string text;
        for (const BlockingSiteRow& s : BlockingSites(*view.model, *r))
          text += fmt::format("{}{} @ {}={}/{}", text.empty() ? "" : ";",
                              view.syscalls->CauseLabel(SwitchCause::Unpack(s.cause)), s.site,
                              s.count, s.blocked_ns);
        row += "," + Quote(text);
      }
      if (view.check) row += CheckColumns(CheckOf(*view.check, i));
      row += "\n";
      os_ << row;
    }
  }

 private:
  std::ostream& os_;
};

}  // namespace

std::unique_ptr<Output> MakeCsvOutput(std::ostream& os) { return std::make_unique<CsvOutput>(os); }

}  // namespace cstool
