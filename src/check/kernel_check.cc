#include "check/kernel_check.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "analysis/report_view.h"
#include "base/cpu_list.h"
#include "base/enum_names.h"
#include "base/errors.h"
#include "model/host_steal_text.h"

namespace cstool {
namespace {

CheckQuantities Kernel(const KernelTaskCounters& c) {
  return {static_cast<int64_t>(c.nvcsw), static_cast<int64_t>(c.nivcsw), c.exec_runtime_ns,
          c.run_delay_ns};
}

CheckQuantities Minus(const CheckQuantities& a, const CheckQuantities& b) {
  return {a.voluntary - b.voluntary, a.involuntary - b.involuntary, a.on_cpu_ns - b.on_cpu_ns,
          a.wait_cpu_ns - b.wait_cpu_ns};
}

void Add(CheckQuantities& into, const CheckQuantities& q) {
  into.voluntary += q.voluntary;
  into.involuntary += q.involuntary;
  into.on_cpu_ns += q.on_cpu_ns;
  into.wait_cpu_ns += q.wait_cpu_ns;
}

double Pct(int64_t diff, int64_t base) {
  return base != 0 ? 100.0 * static_cast<double>(diff) / static_cast<double>(base) : 0.0;
}

// The least time a thread's note on what the check left out or may miss names: under
// it a note would be noise beside the 0.2 ms floor of the tolerance.
constexpr int64_t kNotedNs = 10'000;

// `wait_maybe_more`: run delay the kernel may have counted beyond the traced wait (sleep
// after an untraced move between CPUs), so the kernel's may exceed it by that much more.
void Judge(const CheckQuantities& traced, const CheckQuantities& kernel, int64_t on_cpu_tol,
           int64_t wait_tol, int64_t wait_maybe_more, bool* switches_ok, bool* on_cpu_ok,
           bool* wait_ok) {
  *switches_ok = traced.voluntary == kernel.voluntary && traced.involuntary == kernel.involuntary;
  *on_cpu_ok = std::llabs(traced.on_cpu_ns - kernel.on_cpu_ns) <= on_cpu_tol;
  const int64_t wait_diff = traced.wait_cpu_ns - kernel.wait_cpu_ns;
  *wait_ok = wait_diff <= wait_tol && -wait_diff <= wait_tol + wait_maybe_more;
}

void NoteWorst(int32_t tid, int64_t traced, int64_t kernel, int64_t tolerance,
               KernelCheckResult::WorstThread* worst) {
  const int64_t diff = traced - kernel;
  const double of_tolerance =
      static_cast<double>(std::llabs(diff)) / static_cast<double>(std::max<int64_t>(tolerance, 1));
  if (worst->tid != 0 && of_tolerance <= worst->of_tolerance) return;
  *worst = {tid, diff, Pct(diff, kernel), of_tolerance, kernel};
}

std::string WorstText(const char* what, const KernelCheckResult::WorstThread& w) {
  if (w.tid == 0) return fmt::format("{} -", what);
  const double ms = ShownDiff(static_cast<double>(w.diff_ns) / 1e6, 3);
  if (w.kernel_ns == 0)
    return fmt::format("{} {:+.3f} ms (the kernel's: 0, tid {})", what, ms, w.tid);
  // The percentage's sign is the shown difference's, also where it rounds to 0.00
  // (-0.003 ms of a long run is "-0.00%", not "+0.00%").
  return fmt::format("{} {:+.3f} ms ({}{:.2f}%, tid {})", what, ms, ms < 0 ? '-' : '+',
                     std::abs(ShownDiff(w.pct, 2)), w.tid);
}

// Switch counts are cut where /proc's status read ended; the switches traced inside a
// read came before or after its counts, and which is not known: the traced counts are
// those at some instant inside each read that make them equal the kernel's, if there is
// one (the fewest switches moved; one per read at most, mostly), else those at the ends.
// `exit_end`: the end's totals when the end is an exit record (no read).
void PlaceSwitchesDuringReads(const CounterWindow& w, const KernelMatch& m,
                              const WindowTotals* exit_end, ThreadCheck* c) {
  const SwitchesDuringRead* start_read = nullptr;
  WindowTotals start, end;
  if (m.start) {
    const int64_t to = m.start->SwitchesRead().to;
    start = w.Before(to);
    start_read = w.Read(to);
  }
  const SwitchesDuringRead* end_read = nullptr;
  if (exit_end) {
    end = *exit_end;
  } else {
    const int64_t to = m.end->SwitchesRead().to;
    end = w.Before(to);
    end_read = w.Read(to);
  }
  c->traced.voluntary = static_cast<int64_t>(end.voluntary - start.voluntary);
  c->traced.involuntary = static_cast<int64_t>(end.involuntary - start.involuntary);
  const std::vector<std::pair<int64_t, int64_t>> none{{0, 0}};
  const auto missed_at_start = start_read ? start_read->MissedCounts() : none;
  const auto missed_at_end = end_read ? end_read->MissedCounts() : none;
  c->switches_during_reads =
      static_cast<uint32_t>(missed_at_start.size() + missed_at_end.size() - 2);
  // The kernel's delta = traced + what the start's counts missed - what the end's missed.
  int64_t best_moved = -1;
  CheckQuantities best = c->traced;
  for (const auto& [sv, si] : missed_at_start)
    for (const auto& [ev, ei] : missed_at_end) {
      const int64_t vol = c->traced.voluntary + sv - ev;
      const int64_t invol = c->traced.involuntary + si - ei;
      const int64_t moved = sv + si + ev + ei;
      if (vol != c->kernel.voluntary || invol != c->kernel.involuntary) continue;
      if (best_moved >= 0 && moved >= best_moved) continue;
      best_moved = moved;
      best.voluntary = vol;
      best.involuntary = invol;
    }
  if (best_moved <= 0) return;
  c->traced = best;
  c->switches_placed_after_reads = static_cast<uint32_t>(best_moved);
}

// Notes on a thread's check go in one line, "; " between them.
void AddNote(ThreadCheck& c, std::string_view text) {
  if (!c.note.empty()) c.note += "; ";
  c.note += text;
}

}  // namespace

double ShownDiff(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  const double rounded = std::round(value * scale) / scale;
  return rounded == 0 ? 0.0 : rounded;  // (-0.0 == 0)
}

int64_t CheckTolerance::TimeFor(int64_t kernel_ns, int64_t unknown_ns) const {
  auto rel =
      static_cast<int64_t>(std::llround(time_rel * static_cast<double>(std::llabs(kernel_ns))));
  return std::max(time_abs_ns, rel) + std::max<int64_t>(unknown_ns, 0);
}

constexpr EnumNames<CheckStatus, 6> kCheckStatusNames{
    {"agree", "DISAGREE", "lost", "untraced", "partial", "none"}, "none"};
static_assert(static_cast<size_t>(CheckStatus::kNoCounters) + 1 == kCheckStatusNames.size());

std::string_view CheckStatusName(CheckStatus s) { return kCheckStatusNames(s); }

ThreadCheck CompareThread(const ThreadReport& r, const KernelMatch& m, const CheckTolerance& tol,
                          const std::vector<int32_t>& untraced_cpus) {
  ThreadCheck c;
  const Thread& t = *r.thread;
  c.tid = t.tid;
  c.pid = TrackPid(t);
  c.pid_known = PidKnown(t);
  c.comm = t.comm;
  c.mode = m.mode;
  c.note = m.why;
  if (!m.end) return c;  // kNoCounters

  const CounterWindow& w = r.counter_window;
  c.kernel = Kernel(*m.end);
  if (m.start) c.kernel = Minus(c.kernel, Kernel(*m.start));
  const bool at_exit = m.end->source == KernelTaskCounters::Source::kTaskstatsExit;
  const WindowTotals* after_exit = &w.after_exit;
  WindowTotals start = m.start ? w.Before(m.start->taken_at_ns) : WindowTotals{};
  if (at_exit && w.exit_before_tick_ts >= 0 && w.exit_before_tick_ts < w.exit_ts) {
    // A tick came between the exit's start and the record, which the trace cannot place
    // on either side of the tick: the record says which, by its switch counts first (a
    // switch between the two, a tracer's stop in the exit, is surely before the record),
    // then by its exec runtime.
    auto off = [&](const WindowTotals& after) {
      const WindowTotals before_record = w.total - after - start;
      const int64_t switches =
          std::llabs(static_cast<int64_t>(before_record.voluntary) - c.kernel.voluntary) +
          std::llabs(static_cast<int64_t>(before_record.involuntary) - c.kernel.involuntary);
      return std::pair{switches, std::llabs(before_record.on_cpu_ns - c.kernel.on_cpu_ns)};
    };
    if (off(w.after_exit_before_tick) < off(w.after_exit)) {
      after_exit = &w.after_exit_before_tick;
      AddNote(c, fmt::format("exit record read before an increment in the exit ({:.3f} ms not "
                             "in it)",
                             static_cast<double>(w.exit_ts - w.exit_before_tick_ts) / 1e6));
    }
  }
  WindowTotals end = at_exit ? w.total - *after_exit : w.Before(m.end->taken_at_ns);
  WindowTotals traced = end - start;
  c.traced = {static_cast<int64_t>(traced.voluntary), static_cast<int64_t>(traced.involuntary),
              traced.on_cpu_ns, traced.QueuedWaitNs()};
  PlaceSwitchesDuringReads(w, m, at_exit ? &end : nullptr, &c);
  c.unknown_ns = traced.unknown_ns;
  if (at_exit) {
    c.exit_adjust = after_exit->voluntary + after_exit->involuntary;
    c.exit_cut_on_cpu_ns = after_exit->on_cpu_ns;
  }

  c.asleep_queued_ns = traced.asleep_queued_ns;
  c.preempted_asleep_ns = traced.wait_preempted_asleep_ns;
  c.between_runqueues_ns = traced.wait_between_runqueues_ns;
  c.stolen_ns = traced.stolen_ns;
  c.enqueue_maybe_earlier_ns = traced.enqueue_maybe_earlier_ns;
  c.wait_maybe_more_ns = traced.asleep_maybe_queued_ns + c.enqueue_maybe_earlier_ns;
  c.on_cpu_tolerance_ns = tol.TimeFor(c.kernel.on_cpu_ns, c.unknown_ns);
  c.wait_tolerance_ns = tol.TimeFor(c.kernel.wait_cpu_ns, c.unknown_ns);
  Judge(c.traced, c.kernel, c.on_cpu_tolerance_ns, c.wait_tolerance_ns, c.wait_maybe_more_ns,
        &c.switches_ok, &c.on_cpu_ok, &c.wait_ok);
  const int64_t moved_maybe_ns = traced.asleep_maybe_queued_ns;
  if (c.asleep_queued_ns > 0 || moved_maybe_ns > 0) {
    AddNote(c,
            moved_maybe_ns > 0
                ? fmt::format("WAIT holds {:.3f} ms asleep the kernel counts as run delay (moved "
                              "between CPUs asleep), and up to {:.3f} ms more (a move not traced)",
                              static_cast<double>(c.asleep_queued_ns) / 1e6,
                              static_cast<double>(moved_maybe_ns) / 1e6)
                : fmt::format("WAIT holds {:.3f} ms asleep the kernel counts as run delay (moved "
                              "between CPUs asleep)",
                              static_cast<double>(c.asleep_queued_ns) / 1e6));
  }
  if (c.preempted_asleep_ns >= kNotedNs) {
    AddNote(c, fmt::format("WAIT leaves out {:.3f} ms queued after preemptions on the way to "
                           "sleep (woken while preempted), which the kernel does not count as "
                           "run delay",
                           static_cast<double>(c.preempted_asleep_ns) / 1e6));
  }
  if (c.between_runqueues_ns >= kNotedNs) {
    AddNote(c, fmt::format("WAIT leaves out {:.3f} ms between runqueues, moved in load "
                           "balancers' batches, which the kernel does not count as run delay",
                           static_cast<double>(c.between_runqueues_ns) / 1e6));
  }
  if (c.stolen_ns >= kNotedNs) {
    AddNote(c,
            fmt::format(
                "ONCPU leaves out {:.3f} ms of steal while it ran (the run-time clock stood still)",
                static_cast<double>(c.stolen_ns) / 1e6));
  }
  // A stall of the virtual CPU between an enqueue's clock read and its sched_wakeup is
  // invisible in a trace (40 us and 2 ms seen), but the enqueue's wakelist flush, or the
  // sched_waking that began the same call, bounds it.
  if (c.enqueue_maybe_earlier_ns >= kNotedNs && c.traced.wait_cpu_ns < c.kernel.wait_cpu_ns) {
    AddNote(
        c, fmt::format(
               "WAIT may be up to {:.3f} ms short: enqueues dated at their sched_wakeup began at a "
               "wakelist flush, or within a wakeup call that stalled, up to that much earlier in "
               "all",
               static_cast<double>(c.enqueue_maybe_earlier_ns) / 1e6));
  }
  if (m.start) {
    const WindowCut* cut = w.Cut(m.start->taken_at_ns);
    c.times_judged = cut && cut->TimeCovered();
    if (!c.times_judged) {
      AddNote(c, "times not judged: running or queued, unseen, at the start sample");
    }
  }
  // The exit record samples the run time early in the exit; only the exit's syscall (or a
  // fatal signal's exit after a syscall) shows where. Without it, the run after the
  // record is in ONCPU and not in EXEC.
  if (c.times_judged && at_exit && t.accounted_at_exit < 0) {
    c.times_judged = false;
    AddNote(c,
            "times not judged: where the exit record read the run time is unknown (no exit "
            "syscall in the trace: raw_syscalls not recorded, or the thread died inside a "
            "syscall)");
  }
  // Unknown time widens the tolerance; past the base tolerance it would hide anything.
  const int64_t base =
      std::min(tol.TimeFor(c.kernel.on_cpu_ns, 0), tol.TimeFor(c.kernel.wait_cpu_ns, 0));
  if (c.times_judged && c.unknown_ns > base) {
    c.times_judged = false;
    AddNote(c, fmt::format("times not judged: {:.3f} ms the trace could not classify",
                           static_cast<double>(c.unknown_ns) / 1e6));
  }
  // With CPUs left out of the recording (-C), a thread may have run there unseen (a switch
  // in there is no counted switch, and an exit's final one is left out): the kernel's
  // times hold what the trace could not see. Its switch counts are still judged.
  if (c.times_judged && !untraced_cpus.empty()) {
    c.times_judged = false;
    AddNote(
        c, fmt::format("times not judged: CPU {} not recorded (-C)", FormatCpuList(untraced_cpus)));
  }
  if (c.switches_placed_after_reads > 0) {
    AddNote(
        c,
        fmt::format(
            "{} switch{} traced during a /proc read counted after it, as the kernel's counts say",
            c.switches_placed_after_reads, c.switches_placed_after_reads == 1 ? "" : "es"));
  }
  const uint64_t untraced = t.placement.untraced_switch_outs;
  if (untraced > 0) {
    AddNote(c, fmt::format("{} switch-out{} the kernel did not record (inferred)", untraced,
                           untraced == 1 ? "" : "s"));
  }
  const bool times_ok = !c.times_judged || (c.on_cpu_ok && c.wait_ok);
  if (m.mode == WindowMode::kPartial) {
    c.status = CheckStatus::kPartial;
  } else if (t.lost_touched) {
    c.status = CheckStatus::kLostEvents;
  } else if (c.switches_ok && times_ok) {
    c.status = CheckStatus::kAgree;
  } else {
    // Switches the kernel did not record are inferred, and what ran unseen is unknown:
    // such a thread is shown, not judged.
    // (an inferred switch may have been given the wrong kind, or one inferred that was not)
    const auto off = static_cast<uint64_t>(std::llabs(c.traced.voluntary - c.kernel.voluntary) +
                                           std::llabs(c.traced.involuntary - c.kernel.involuntary));
    // Nor is one the trace never showed on a CPU, though the kernel switched it: this
    // kernel records nothing of some tasks' switches (seen for the guest agent's threads
    // in system-wide recordings), and none of its time could be classified.
    const bool never_seen =
        !t.seen_running && c.traced.voluntary == 0 && c.traced.involuntary == 0 && !c.times_judged;
    if (never_seen) {
      AddNote(c, "never shown on a CPU by the trace: its switches were not recorded");
    }
    // A thread short of the kernel's switches with CPUs left out (-C) ran there too.
    const bool ran_untraced_cpus = !untraced_cpus.empty() && off > 0 &&
                                   c.traced.voluntary <= c.kernel.voluntary &&
                                   c.traced.involuntary <= c.kernel.involuntary;
    if (ran_untraced_cpus) {
      AddNote(c, fmt::format("{} switch{} short: it ran on CPU {} too", off, off == 1 ? "" : "es",
                             FormatCpuList(untraced_cpus)));
    }
    c.status =
        ran_untraced_cpus || (times_ok && ((untraced > 0 && off <= 2 * untraced) || never_seen))
            ? CheckStatus::kUntraced
            : CheckStatus::kDisagree;
  }
  return c;
}

KernelCheckResult CheckAgainstKernel(const ReportModel& model,
                                     const std::vector<const ThreadReport*>& threads,
                                     const CheckTolerance& tol) {
  // Comparing empty windows would report every thread as disagreeing.
  if (!model.has_kernel_windows)
    throw std::logic_error("kernel check of a model analysed without kernel windows");
  KernelCheckResult res;
  res.tolerance = tol;
  res.missing_events = model.trace.missing_events;
  KernelRecording recording;
  const RecordingInfo& info = model.trace.recording;
  if (model.trace.has_recording_info && !info.ended_early.empty()) {
    // The counters were taken at the recording's end, which the file's events stop short
    // of: every thread alive past that point would disagree by what is missing.
    res.no_counters_reason =
        "the recording ended early: the kernel's counters, taken at its end, cover more than "
        "the file's events";
  } else if (model.trace.has_recording_info && !info.kernel_counters.is_null()) {
    try {
      recording = KernelRecording::FromJson(info.kernel_counters);
      res.has_counters = true;
    } catch (const Error& e) {
      res.notes.push_back(std::string("kernel counters unreadable: ") + e.what());
      res.no_counters_reason = std::string("its kernel counters are unreadable: ") + e.what();
    }
  }
  if (!res.has_counters && res.no_counters_reason.empty())
    res.no_counters_reason =
        !model.trace.has_recording_info
            ? "the recording holds no kernel counters (cstool record takes them)"
        : info.window_start_ts > 0
            ? "a flight recorder's dump holds no kernel counters (they cover the run, not the "
              "window)"
        : info.recovered ? "a recovered recording holds no kernel counters (the recorder took "
                           "them at its end, which it never reached)"
        : info.command.size() >= 2 && info.command[0] == "cstool" && info.command[1] == "msa"
            ? "a trace saved by cstool msa holds no kernel counters"
            : "the recording holds no kernel counters";
  if (res.has_counters) {
    res.notes = recording.counters.notes();
    if (!recording.start_snapshot.taken())
      res.notes.push_back("no start snapshot: threads alive at the start are partial");
  }

  KernelMatcher matcher(recording, model.threads);
  std::map<int32_t, ProcessCheck> procs;
  for (const ThreadReport* r : threads) {
    ThreadCheck c = CompareThread(*r, matcher.Match(*r), tol, info.untraced_cpus);
    // With none in the file, a thread's missing record says nothing of it.
    if (!res.has_counters) c.note = "the file holds no kernel counters";
    switch (c.status) {
      case CheckStatus::kAgree:
        ++res.agreeing;
        [[fallthrough]];
      case CheckStatus::kDisagree: {
        ++res.compared;
        if (!c.times_judged) break;
        ++res.times_judged;
        if (c.traced.on_cpu_ns == 0 && c.kernel.on_cpu_ns == 0 && c.traced.wait_cpu_ns == 0 &&
            c.kernel.wait_cpu_ns == 0)
          ++res.times_judged_idle;
        NoteWorst(c.tid, c.traced.on_cpu_ns, c.kernel.on_cpu_ns, c.on_cpu_tolerance_ns,
                  &res.worst_on_cpu);
        {
          // Of a traced wait short of the kernel's, up to wait_maybe_more_ns is explained:
          // the worst thread is judged by the rest.
          const int64_t short_by =
              std::max<int64_t>(c.kernel.wait_cpu_ns - c.traced.wait_cpu_ns, 0);
          NoteWorst(c.tid, c.traced.wait_cpu_ns + std::min(short_by, c.wait_maybe_more_ns),
                    c.kernel.wait_cpu_ns, c.wait_tolerance_ns, &res.worst_wait);
        }
        break;
      }
      case CheckStatus::kLostEvents:
        ++res.lost;
        break;
      case CheckStatus::kUntraced:
        ++res.untraced;
        break;
      case CheckStatus::kPartial:
        ++res.partial;
        break;
      case CheckStatus::kNoCounters:
        ++res.no_counters;
        break;
    }
    bool judged_or_lost = c.status == CheckStatus::kAgree || c.status == CheckStatus::kDisagree ||
                          c.status == CheckStatus::kLostEvents ||
                          c.status == CheckStatus::kUntraced;
    if (judged_or_lost) {
      ProcessCheck& p = procs[c.pid];
      p.pid = c.pid;
      p.pid_known = p.pid_known || c.pid_known;
      if (p.comm.empty() || c.tid == c.pid) p.comm = c.comm;
      ++p.threads;
      Add(p.traced, c.traced);
      Add(p.kernel, c.kernel);
      p.unknown_ns += c.unknown_ns;
      // Worst status wins: DISAGREE over lost or untraced over agree.
      if (p.status == CheckStatus::kNoCounters || c.status == CheckStatus::kDisagree ||
          ((c.status == CheckStatus::kLostEvents || c.status == CheckStatus::kUntraced) &&
           p.status == CheckStatus::kAgree))
        p.status = c.status;
    }
    res.threads.push_back(std::move(c));
  }
  if (model.trace.has_recording_info && !info.steal.empty())
    res.host_steal_ns = info.TotalStolenNs();
  if (model.enqueue_lag.count() > 0) {
    res.enqueue_lag_ns = model.enqueue_lag.Median();
    res.enqueue_lag_wakeups = model.enqueue_lag.count();
  }
  res.times_disagree = std::any_of(res.threads.begin(), res.threads.end(), [](auto& c) {
    return c.status == CheckStatus::kDisagree && c.times_judged && !(c.on_cpu_ok && c.wait_ok);
  });
  if (res.times_disagree && res.host_steal_ns > 0)
    res.notes.push_back(fmt::format(
        "the host stole about {} of CPU time while tracing ({}): the kernel counts it in "
        "neither run time nor, after a switch-in, run delay, and the traced times hold it "
        "wherever it fell, so about that much of a time difference can be the host's",
        StealMsText(info, res.host_steal_ns), StealSourceText(info)));
  for (auto& [pid, p] : procs) {
    int64_t on_cpu_tol = 0, wait_tol = 0, wait_maybe_more = 0;
    bool times_judged = true;
    for (const ThreadCheck& c : res.threads)
      if (c.pid == pid && c.status != CheckStatus::kPartial &&
          c.status != CheckStatus::kNoCounters) {
        on_cpu_tol += c.on_cpu_tolerance_ns;
        wait_tol += c.wait_tolerance_ns;
        wait_maybe_more += c.wait_maybe_more_ns;
        times_judged = times_judged && c.times_judged;
      }
    Judge(p.traced, p.kernel, on_cpu_tol, wait_tol, wait_maybe_more, &p.switches_ok, &p.on_cpu_ok,
          &p.wait_ok);
    p.times_judged = times_judged;  // else shown, not judged (see threads)
    res.processes.push_back(std::move(p));
  }
  return res;
}

std::string KernelCheckResult::Verdict() const {
  if (!has_counters)
    return fmt::format(
        "kernel check: NOT CHECKED: nothing to compare: {}",
        no_counters_reason.empty() ? "the recording holds no kernel counters" : no_counters_reason);
  std::string others = fmt::format(
      "{} partial, {} with lost events, {} with switches the kernel did not record, {} "
      "without counters",
      partial, lost, untraced, no_counters);
  if (compared == 0)
    return fmt::format("kernel check: NOT CHECKED: nothing to compare ({})", others);
  const char* verdict = agreeing != compared ? "FAIL" : Covered() ? "PASS" : "INCOMPLETE";
  // With no thread's times compared (a recording of some CPUs only; a -p recording whose
  // only judged thread neither ran nor waited), a bare PASS read as a verdict on the
  // times; record's summary says the same.
  const char* on_what = TimesCompared() ? "" : " on switch counts only";
  return fmt::format(
             "kernel check: {}{}: {}/{} threads agree with the kernel, {} of {} checked ({}){}; "
             "worst thread (the most of its tolerance): {}, {}; tolerance max({:.1f} ms, "
             "{:.1f}%)",
             verdict, on_what, agreeing, compared, compared, Considered(), others, JudgedText(),
             WorstText("on-CPU", worst_on_cpu), WorstText("wait-for-CPU", worst_wait),
             static_cast<double>(tolerance.time_abs_ns) / 1e6, tolerance.time_rel * 100) +
         MissingEventsText();
}

// A verdict on switch counts alone must not read as one on the times too. Nor one on a
// thread that did nothing: a -p recording of a busy process judged the times of its one
// idle thread only.
std::string KernelCheckResult::JudgedText() const {
  const std::string idle =
      times_judged_idle == 0
          ? std::string()
          : fmt::format(", {} of them with nothing to compare (no run or wait inside {})",
                        times_judged_idle, times_judged_idle == 1 ? "its window" : "their windows");
  if (times_judged == compared && times_judged_idle == 0) return "";
  // With none judged, the verdict itself says "on switch counts only".
  if (times_judged == compared || times_judged == 0)
    return fmt::format("; times judged for {} of {}{}", times_judged, compared, idle);
  return fmt::format("; times judged for {} of {}{} (the rest: switch counts only)", times_judged,
                     compared, idle);
}

std::string KernelCheckResult::DisagreeingText() const {
  constexpr size_t kNamed = 3;
  std::vector<std::string> named;
  size_t disagreeing = 0;
  for (const ThreadCheck& t : threads) {
    if (t.status != CheckStatus::kDisagree) continue;
    if (++disagreeing <= kNamed)
      named.push_back(t.comm.empty() ? std::to_string(t.tid)
                                     : fmt::format("{} ({})", t.tid, t.comm));
  }
  if (disagreeing == 0) return "";
  std::string text = fmt::format("; disagreeing: {}", fmt::join(named, ", "));
  if (disagreeing > kNamed) text += fmt::format(" and {} more", disagreeing - kNamed);
  return text;
}

std::string KernelCheckResult::MissingEventsText() const {
  if (passed() || missing_events.empty()) return "";
  return fmt::format(
      "; recorded without {} (the tolerance is for cstool's default events; see the notes)",
      fmt::join(missing_events, ", "));
}

}  // namespace cstool
