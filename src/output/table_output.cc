#include <fmt/core.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/blocking_site.h"
#include "base/errors.h"
#include "counters/derived_metrics.h"
#include "model/anomalies.h"
#include "model/microstate.h"
#include "output/check_output.h"
#include "output/output.h"
#include "output/section_title.h"

namespace cstool {

std::unique_ptr<Output> MakeJsonOutput(std::ostream& os);
std::unique_ptr<Output> MakeCsvOutput(std::ostream& os);

namespace {

std::string Percent(int64_t part, int64_t whole) {
  if (part == 0 || whole <= 0) return "-";
  return fmt::format("{:.1f}", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

// A trace timestamp as trace-cmd report prints it (seconds, microseconds rounded to the
// nearest), to find it there.
std::string TraceSeconds(int64_t ts) {
  const int64_t us = (ts + 500) / 1000;
  return fmt::format("{}.{:06}", us / 1'000'000, us % 1'000'000);
}

std::string TopCauses(const ReportView& view, const ThreadReport& r, size_t n) {
  std::string out;
  size_t i = 0;
  for (auto& [label, count] : view.Causes(r)) {
    if (i++ == n) break;
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", label, count);
  }
  return out;
}

// What the microstate columns stand for, in their order, from the same table as the
// titles: a reader new to prstat -m's letters has them under the title they head.
std::string MicrostateLegend() {
  std::string legend;
  for (const MicrostateNames& m : kMicrostateNames)
    legend += fmt::format("{}{}={}", legend.empty() ? "" : ", ", m.column, m.key);
  return legend;
}

std::string Ms(int64_t ns) { return fmt::format("{:.3f}", static_cast<double>(ns) / 1e6); }

// A microstate's time for --ms: "-" for none, as the percentages show it.
std::string MsOrDash(int64_t ns) { return ns == 0 ? "-" : Ms(ns); }

// The largest few wakers ("waker wakeups/blocked ms") and runners ("runner ms").
std::string WaitersText(const ThreadReport& r, bool as_process, size_t n) {
  std::string woken;
  for (size_t i = 0; i < r.woken_by.size() && i < n; ++i)
    woken += fmt::format("{}{} {}/{}", woken.empty() ? "" : ", ",
                         PartyText(r.woken_by[i].waker, as_process), r.woken_by[i].wakeups,
                         Ms(r.woken_by[i].blocked_ns));
  std::string behind;
  for (size_t i = 0; i < r.waited_behind.size() && i < n; ++i)
    behind += fmt::format("{}{} {}", behind.empty() ? "" : ", ",
                          PartyText(r.waited_behind[i].running, as_process),
                          Ms(r.waited_behind[i].time_ns));
  return fmt::format("{} | {}", woken.empty() ? "-" : woken, behind.empty() ? "-" : behind);
}

class TableOutput : public Output {
 public:
  explicit TableOutput(std::ostream& os) : os_(os) {}

  void Render(const ReportView& view) override {
    const TraceSummary& t = view.model->trace;
    uint64_t lost_total = 0;
    std::string lost;
    for (auto [cpu, n] : t.lost_events) {
      if (!view.CpuTraced(cpu)) continue;
      if (!t.CpuUnread(cpu)) lost_total += n;
      lost += fmt::format("{}cpu{} {}", lost.empty() ? "" : ", ", cpu, view.LostText(cpu, n));
    }
    os_ << fmt::format("{}: {} events on {} over {:.3f} s; lost events: {}\n", t.file, t.events,
                       view.CpusText(), static_cast<double>(t.last_ts - t.first_ts) / 1e9,
                       lost.empty() ? "none recorded" : lost);
    if (t.has_recording_info && !t.recording.command.empty()) {
      std::string cmd;
      for (auto& a : t.recording.command) cmd += (cmd.empty() ? "" : " ") + a;
      os_ << fmt::format("command: {}\n", cmd);
    }
    if (std::string note = view.UngroupedNote(); !note.empty()) os_ << "NOTE: " << note << "\n";
    in_ms_ = view.microstates_in_ms;
    os_ << "\n"
        << SectionTitle(fmt::format(
               "THREADS (microstates in {} each thread's observed lifetime: {}; a dash: none; "
               "VCX/ICX: voluntary/involuntary switches; ! = lost events may have touched it)",
               in_ms_ ? "ms of" : "% of", MicrostateLegend()));
    Header("TID", "PID");
    for (const ThreadReport* r : view.threads) {
      const Thread& th = *r->thread;
      Row(fmt::format("{}{}", th.tid, th.lost_touched ? "!" : ""), PidText(th), th.comm,
          r->Lifetime(), *r, TopCauses(view, *r, 3));
    }
    os_ << "\n"
        << SectionTitle(
               "PROCESSES (sums over the threads above; LIFE is the sum of thread "
               "lifetimes)");
    Header("PID", "THR");
    for (const ProcessTotals& p : view.processes)
      Row(fmt::format("{}{}", p.pid, p.lost_touched ? "!" : ""), std::to_string(p.threads), p.comm,
          p.lifetime_sum, p.sum, TopCauses(view, p.sum, 3));
    if (view.processes.size() >= 2) Tree(view);
    Wakers(view);
    Syscalls(view);
    if (view.model->has_stacks) Sites(view);
    if (!view.counter_names.empty()) Counters(view);

    os_ << fmt::format("\nLOST EVENTS: {} total", lost_total);
    for (auto [cpu, n] : t.lost_events)
      os_ << fmt::format(", cpu{} {}", cpu, view.LostText(cpu, n));
    os_ << "\n";
    Anomalies(t);
    for (auto& d : t.anomaly_details) os_ << "  anomaly " << d << "\n";
    if (!t.anomaly_details.empty())
      for (auto& [name, n] : t.anomalies)
        if (const AnomalyInfo* info = FindAnomaly(name))
          os_ << fmt::format("  {} ({}): {}\n", name, NameOf(info->severity), info->description);
    if (!t.missing_events.empty()) {
      os_ << "MISSING EVENTS:";
      for (auto& e : t.missing_events) os_ << " " << e;
      os_ << "\n";
    }
    for (auto& note : t.notes) os_ << "NOTE: " << note << "\n";
    if (view.check) RenderCheckTable(*view.check, os_);
    for (auto& d : t.damage) os_ << "SALVAGED: " << d << "\n";
  }

 private:
  // One line per severity, the worst first: a pid-filtered recording on a recent kernel
  // has some corrected ones every time, and they must not read like damage or loss.
  void Anomalies(const TraceSummary& t) {
    if (t.anomalies.empty()) {
      os_ << "ANOMALIES: none\n";
      return;
    }
    for (AnomalySeverity severity :
         {AnomalySeverity::kError, AnomalySeverity::kDataLoss, AnomalySeverity::kInfo}) {
      std::string line;
      for (auto& [name, n] : t.anomalies) {
        const AnomalyInfo* info = FindAnomaly(name);
        if ((info ? info->severity : AnomalySeverity::kError) == severity)
          line += fmt::format(" {}={}", name, n);
      }
      if (!line.empty())
        os_ << fmt::format("ANOMALIES, {} ({}):{}\n", NameOf(severity), MeaningOf(severity), line);
    }
  }

  // Who made each thread (and process) wait, and its migrations.
  void Wakers(const ReportView& view) {
    os_ << "\n"
        << SectionTitle(
               "WAKERS (WOKEN BY: who ended its sleeps, wakeups/blocked ms; WAITED BEHIND: what "
               "ran on the CPU it was queued on, ms; largest 3 each; MIGR: migrations; PREMIG: "
               "time queued on a CPU it then moved away from; MAXWAIT: its longest wait, "
               "sched_waking or preemption to switch-in, ms, which began AT, s on the trace's "
               "clock as trace-cmd report shows it)");
    auto header = [this](std::string_view id) {
      os_ << fmt::format("{:>8} {:<16} {:>6} {:>10} {:>11} {:>15}  {}\n", id, "COMM", "MIGR",
                         "PREMIG(ms)", "MAXWAIT(ms)", "AT(s)", "WOKEN BY | WAITED BEHIND");
    };
    auto row = [this](const std::string& id, const std::string& comm, const ThreadReport& r,
                      bool as_process) {
      const bool waited = r.waits_ended > 0;
      os_ << fmt::format(
          "{:>8} {:<16} {:>6} {:>10} {:>11} {:>15}  {}\n", id, comm.substr(0, 16), r.migrations,
          Ms(r.wait_before_migration_wakeup_ns + r.wait_before_migration_preempted_ns),
          waited ? Ms(r.longest_wait_ns) : std::string("-"),
          waited && r.longest_wait_from >= 0 ? TraceSeconds(r.longest_wait_from) : std::string("-"),
          WaitersText(r, as_process, 3));
    };
    header("TID");
    for (const ThreadReport* r : view.threads)
      row(std::to_string(r->thread->tid), r->thread->comm, *r, false);
    header("PID");
    for (const ProcessTotals& p : view.processes) row(std::to_string(p.pid), p.comm, p.sum, true);
  }

  // strace -c's view, per thread and per process: all syscalls, then the ones with the
  // most time inside. None without syscall events in the trace.
  void Syscalls(const ReportView& view) {
    if (!view.AnySyscalls()) return;
    os_ << "\n"
        << SectionTitle(
               fmt::format("SYSCALLS (calls and time inside, ms; the {} with the most time: NAME "
                           "calls/blocks/ms, blocks = sleeps inside; --format json lists all)",
                           ReportView::kTopSyscalls));
    auto header = [this](std::string_view id) {
      os_ << fmt::format("{:>8} {:<16} {:>9} {:>10}  {}\n", id, "COMM", "CALLS", "INSIDE(ms)",
                         "TOP");
    };
    auto row = [&](const std::string& id, const std::string& comm, const ThreadReport& r) {
      const ReportView::SyscallSummary summary = view.TopSyscalls(r, ReportView::kTopSyscalls);
      os_ << fmt::format("{:>8} {:<16} {:>9} {:>10}  {}\n", id, comm.substr(0, 16),
                         summary.total.calls, Ms(summary.total.time_ns),
                         ReportView::TopSyscallsText(summary));
    };
    header("TID");
    for (const ThreadReport* r : view.threads)
      row(std::to_string(r->thread->tid), r->thread->comm, *r);
    header("PID");
    for (const ProcessTotals& p : view.processes) row(std::to_string(p.pid), p.comm, p.sum);
  }

  // The command tree: each row a process with all its descendants, same-named siblings
  // folded into one row; then the kernel's own total for the command (wait4's rusage
  // covers the descendants it waited for), the figure /usr/bin/time prints.
  void Tree(const ReportView& view) {
    os_ << "\nCOMMAND TREE (each row: processes with all their descendants; same-named "
           "siblings share a row, xN)\n";
    os_ << fmt::format(
        "{:>8} {:>8} {:>6} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7} {:>7}  {}\n", "PID",
        "PPID", "PROCS", "THR", "WALL(ms)", "ONCPU(ms)", "USR(ms)", "SYS(ms)", "WAIT(ms)", "VCX",
        "ICX", "COMMAND");
    auto ms = [](int64_t ns) { return fmt::format("{:.3f}", static_cast<double>(ns) / 1e6); };
    auto micro = [](const SubtreeTotals& t, Microstate m) {
      return t.microstates[static_cast<size_t>(m)];
    };
    constexpr uint32_t kMaxIndent = 16;
    for (const ProcessTreeRow& row : FoldedTreeRows(view.tree, view.processes)) {
      const ProcessTotals& first = view.processes[row.members.front()];
      bool one_parent = true;
      for (size_t m : row.members) one_parent = one_parent && view.processes[m].ppid == first.ppid;
      const SubtreeTotals& t = row.totals;
      const int64_t user = micro(t, Microstate::kUser), sys = micro(t, Microstate::kSys);
      const int64_t oncpu =
          user + sys + micro(t, Microstate::kIrq) + micro(t, Microstate::kSoftirq);
      const int64_t wait =
          micro(t, Microstate::kWaitCpuWakeup) + micro(t, Microstate::kWaitCpuPreempted);
      const std::string pid =
          fmt::format("{}{}",
                      row.members.size() == 1 ? std::to_string(first.pid)
                                              : fmt::format("x{}", row.members.size()),
                      t.lost_touched ? "!" : "");
      const std::string ppid = !one_parent       ? "*"
                               : first.ppid != 0 ? std::to_string(first.ppid)
                                                 : "-";
      os_ << fmt::format(
          "{:>8} {:>8} {:>6} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7} {:>7}  {}{}\n", pid,
          ppid, t.processes, t.threads, ms(t.Wall()), ms(oncpu), ms(user), ms(sys), ms(wait),
          t.voluntary, t.involuntary, std::string(2 * std::min(row.depth, kMaxIndent), ' '),
          first.comm);
    }
    const TraceSummary& trace = view.model->trace;
    const ChildCounters& child = trace.recording.child;
    // rusage splits user from sys by where the tick found the task, so compare their sum
    // with ONCPU; the switch counts are exact.
    if (trace.has_recording_info && child.pid != 0 && child.reaped)
      os_ << fmt::format(
          "kernel (wait4 rusage of {} and the descendants it waited for): user+sys {} ms (user {}, "
          "sys {}: split by the tick's samples), VCX {}, ICX {} while traced\n",
          child.pid, ms(child.utime_ns + child.stime_ns), ms(child.utime_ns), ms(child.stime_ns),
          child.exit_nvcsw - child.baseline_nvcsw, child.exit_nivcsw - child.baseline_nivcsw);
  }

  // record --stacks: per thread, where it slept (the first kernel frame below the
  // scheduler and wait helpers), by cause; BLOCKED runs from switch-out to wakeup.
  void Sites(const ReportView& view) {
    constexpr size_t kMaxRows = 5;
    os_ << "\nBLOCKING SITES (record --stacks; per thread, the top " << kMaxRows
        << " by blocked time: CAUSE @ kernel function it slept in)\n";
    os_ << fmt::format("{:>8} {:<16} {:>8} {:>12}  {}\n", "TID", "COMM", "COUNT", "BLOCKED(ms)",
                       "SITE");
    for (const ThreadReport* r : view.threads) {
      std::vector<BlockingSiteRow> rows = BlockingSites(*view.model, *r);
      for (size_t i = 0; i < rows.size() && i < kMaxRows; ++i)
        os_ << fmt::format("{:>8} {:<16} {:>8} {:>12.3f}  {} @ {}\n", r->thread->tid,
                           r->thread->comm.substr(0, 16), rows[i].count,
                           static_cast<double>(rows[i].blocked_ns) / 1e6,
                           view.syscalls->CauseLabel(SwitchCause::Unpack(rows[i].cause)),
                           rows[i].site);
      if (rows.size() > kMaxRows)
        os_ << fmt::format(
            "{:>8} {:<16} ({} more sites; --format json lists them all, with "
            "their stacks)\n",
            "", "", rows.size() - kMaxRows);
    }
  }

  // record -c/-V: per thread and per process, each counter's total over the counted span
  // and its rate per second of that span; the derived metrics where their inputs were
  // counted.
  void Counters(const ReportView& view) {
    os_ << "\n"
        << SectionTitle(
               "COUNTERS (totals over each thread's counted span, /s per second of it; a clock's "
               "total in ms, its rate in CPUs, as perf stat shows them; * scaled: multiplexed, an "
               "estimate)");
    // The process rows get a head of their own, as in THREADS and PROCESSES: under the
    // threads' "TID PID" the pid read as a tid and the thread count as the pid.
    auto head = [&](std::string_view id1, std::string_view id2) {
      std::string h = fmt::format("{:>8} {:>7} {:<16} {:>9}", id1, id2, "COMM", "SPAN(ms)");
      for (const std::string& n : view.counter_names)
        h += fmt::format(" {:>14} {:>12}", CounterTitle(n), "/s");
      os_ << h << "  DERIVED\n";
    };
    head("TID", "PID");
    auto line = [&](const std::string& id1, const std::string& id2, const std::string& comm,
                    const CounterTotals& c) {
      std::string out = fmt::format("{:>8} {:>7} {:<16} {:>9.3f}", id1, id2, comm.substr(0, 16),
                                    static_cast<double>(c.last_ts - c.first_ts) / 1e6);
      for (size_t i = 0; i < view.counter_names.size(); ++i)
        out += fmt::format(
            " {:>14} {:>12}",
            i >= c.values.size() ? "-" : TotalText(view.counter_names[i], c.values[i], c.scaled, 3),
            RateText(view.counter_names[i], c.Rate(i)));
      std::string derived;
      for (const auto& [key, v] : DerivedMetrics(view.counter_names, c.values))
        derived += fmt::format("{}{} {:.3f}", derived.empty() ? "" : ", ", key, v);
      os_ << out << "  " << (derived.empty() ? "-" : derived) << "\n";
    };
    for (const ThreadReport* r : view.threads)
      if (const CounterTotals* c = view.CountersOf(*r->thread))
        line(std::to_string(r->thread->tid), PidText(*r->thread), r->thread->comm, *c);
    bool process_head = false;
    for (const ProcessTotals& p : view.processes)
      if (const CounterTotals* c = view.CountersOfProcess(p.pid)) {
        if (!std::exchange(process_head, true)) head("PID", "THR");
        line(std::to_string(p.pid), std::to_string(p.threads), p.comm, *c);
      }
    if (view.sampling.period != 0) Sampling(view);
    for (const std::string& note : view.counter_notes) os_ << "NOTE: " << note << "\n";
  }

  // record -c EVENT:ebs=N: how many overflows each thread's ring delivered, lost and
  // how often the kernel throttled the event; every sample is in --format json.
  void Sampling(const ReportView& view) {
    os_ << fmt::format(
        "\n  event-based sampling: a sample every {} {} (LOST: dropped, the ring buffer was "
        "full; THROTTLED: times over perf_event_max_sample_rate; every sample: --format json)\n",
        view.sampling.period, view.sampling.event);
    auto head = [&](std::string_view id1, std::string_view id2) {
      os_ << fmt::format("{:>8} {:>7} {:<16} {:>9} {:>9} {:>9}  {}\n", id1, id2, "COMM", "SAMPLES",
                         "LOST", "THROTTLED", "FIRST..LAST SAMPLE (ms into the trace)");
    };
    head("TID", "PID");
    auto line = [&](const std::string& id1, const std::string& id2, const std::string& comm,
                    const SamplingThreadStats& t, const std::vector<CounterOverflow>* overflows) {
      std::string span = "-";
      if (overflows && !overflows->empty())
        span = fmt::format(
            "{:.3f}..{:.3f}",
            static_cast<double>(overflows->front().ts - view.model->trace.first_ts) / 1e6,
            static_cast<double>(overflows->back().ts - view.model->trace.first_ts) / 1e6);
      os_ << fmt::format("{:>8} {:>7} {:<16} {:>9} {:>9} {:>9}  {}\n", id1, id2, comm.substr(0, 16),
                         t.samples, t.lost, t.throttles, span);
    };
    for (const ThreadReport* r : view.threads)
      if (const SamplingThreadStats* t = view.SamplingOf(*r->thread))
        line(std::to_string(r->thread->tid), PidText(*r->thread), r->thread->comm, *t,
             &view.OverflowsOf(*r->thread));
    bool process_head = false;
    for (const ProcessTotals& p : view.processes)
      if (auto it = view.process_sampling.find(p.pid); it != view.process_sampling.end()) {
        if (!std::exchange(process_head, true)) head("PID", "THR");
        line(std::to_string(p.pid), std::to_string(p.threads), p.comm, it->second, nullptr);
      }
  }

  void Header(std::string_view id1, std::string_view id2) {
    std::string line = fmt::format("{:>8} {:>7} {:<16} {:>10}", id1, id2, "COMM", "LIFE(ms)");
    for (const MicrostateNames& n : kMicrostateNames)
      line += fmt::format(" {:>{}}", n.column, in_ms_ ? kMsWidth : kPercentWidth);
    line += fmt::format(" {:>7} {:>7}  {}\n", "VCX", "ICX", "TOP CAUSES");
    os_ << line;
  }
  void Row(const std::string& id1, const std::string& id2, const std::string& comm,
           int64_t lifetime, const ThreadReport& r, const std::string& causes) {
    std::string line = fmt::format("{:>8} {:>7} {:<16} {:>10.3f}", id1, id2, comm.substr(0, 16),
                                   static_cast<double>(lifetime) / 1e6);
    for (int64_t v : r.microstates)
      line += in_ms_ ? fmt::format(" {:>{}}", MsOrDash(v), kMsWidth)
                     : fmt::format(" {:>{}}", Percent(v, lifetime), kPercentWidth);
    line += fmt::format(" {:>7} {:>7}  {}\n", r.voluntary, r.involuntary, causes);
    os_ << line;
  }
  // Wide enough for 99.9 and for 99999.999 ms (longer runs widen their row).
  static constexpr int kPercentWidth = 5;
  static constexpr int kMsWidth = 9;
  std::ostream& os_;
  bool in_ms_ = false;
};

}  // namespace

std::unique_ptr<Output> MakeOutput(std::string_view format, std::ostream& os) {
  if (format == "table") return std::make_unique<TableOutput>(os);
  if (format == "json") return MakeJsonOutput(os);
  if (format == "csv") return MakeCsvOutput(os);
  throw Error(fmt::format("unknown format '{}' (valid: table, json, csv)", format),
              ExitCode::kUsage);
}

}  // namespace cstool
