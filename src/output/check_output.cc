#include "output/check_output.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "output/section_title.h"

namespace cstool {
namespace {

double Ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

std::string Problems(bool switches_ok, bool on_cpu_ok, bool wait_ok) {
  std::string out;
  auto add = [&](bool ok, const char* what) {
    if (!ok) out += fmt::format("{}{}", out.empty() ? "" : ",", what);
  };
  add(switches_ok, "switches");
  add(on_cpu_ok, "on-cpu");
  add(wait_ok, "wait");
  return out;
}

// "thread 12" or "threads 12, 13": those of the process that disagree.
std::string DisagreeingThreads(const KernelCheckResult& check, const ProcessCheck& p) {
  std::vector<int32_t> tids;
  for (const ThreadCheck& c : check.threads)
    if (c.pid == p.pid && c.status == CheckStatus::kDisagree) tids.push_back(c.tid);
  if (tids.empty()) return {};
  return fmt::format("{} {}", tids.size() == 1 ? "thread" : "threads", fmt::join(tids, ", "));
}

// A thread's or process's PID column: "-" when the file names no process (it is the tid
// then, for grouping only).
std::string PidColumn(bool known, int32_t pid) { return known ? std::to_string(pid) : "-"; }

std::string StatusText(const ThreadCheck& c) {
  std::string s(CheckStatusName(c.status));
  if (c.status == CheckStatus::kDisagree)
    s += " (" +
         Problems(c.switches_ok, c.on_cpu_ok || !c.times_judged, c.wait_ok || !c.times_judged) +
         ")";
  // A note explains an agreement or why times were not judged; beside a disagreement it
  // is an aside, not its cause ("DISAGREE (wait): ONCPU leaves out ... of steal" read as
  // the wait's explanation).
  if (!c.note.empty()) s += (c.status == CheckStatus::kDisagree ? "; " : ": ") + c.note;
  // What the exit record leaves out: the final switch, and the run the kernel had not yet
  // accounted when the record was taken (the THREADS table holds it; a third of a
  // thread's time was seen cut). Said as what ONCPU leaves out: a cut larger than the
  // ONCPU shown read as a contradiction.
  if (c.exit_adjust > 0 || c.exit_cut_on_cpu_ns > 0) {
    s += " [";
    // (The count: every switch at or after the exit record, as VCX and ICX count them.)
    if (c.exit_adjust > 0)
      s += fmt::format("{} switch{} from the exit record on left out", c.exit_adjust,
                       c.exit_adjust == 1 ? "" : "es");
    if (c.exit_adjust > 0 && c.exit_cut_on_cpu_ns > 0) s += "; ";
    if (c.exit_cut_on_cpu_ns > 0)
      s += fmt::format("ONCPU leaves out its last {:.3f} ms, not yet accounted at the exit record",
                       Ms(c.exit_cut_on_cpu_ns));
    s += "]";
  }
  return s;
}

std::string Row(const std::string& id1, const std::string& id2, const std::string& comm,
                const std::string& window, const CheckQuantities& tr, const CheckQuantities& k,
                bool have_kernel, const std::string& status) {
  if (!have_kernel)
    return fmt::format("{:>8} {:>7} {:<16} {:<8} {}\n", id1, id2, comm.substr(0, 16), window,
                       status);
  return fmt::format(
      "{:>8} {:>7} {:<16} {:<8} {:>7} {:>7} {:>5} {:>7} {:>7} {:>5} {:>10.3f} {:>10.3f} "
      "{:>8.3f} {:>10.3f} {:>10.3f} {:>8.3f}  {}\n",
      id1, id2, comm.substr(0, 16), window, tr.voluntary, k.voluntary, tr.voluntary - k.voluntary,
      tr.involuntary, k.involuntary, tr.involuntary - k.involuntary, Ms(tr.on_cpu_ns),
      Ms(k.on_cpu_ns), ShownDiff(Ms(tr.on_cpu_ns - k.on_cpu_ns), 3), Ms(tr.wait_cpu_ns),
      Ms(k.wait_cpu_ns), ShownDiff(Ms(tr.wait_cpu_ns - k.wait_cpu_ns), 3), status);
}

nlohmann::json QuantitiesJson(const CheckQuantities& q) {
  return {{"voluntary", q.voluntary},
          {"involuntary", q.involuntary},
          {"on_cpu_ns", q.on_cpu_ns},
          {"wait_cpu_ns", q.wait_cpu_ns}};
}

}  // namespace

void RenderCheckTable(const KernelCheckResult& check, std::ostream& os) {
  os << "\n"
     << SectionTitle(fmt::format(
            "KERNEL CHECK (traced vs kernel over each thread's window; VOL/ICX = switches, "
            "exact; ONCPU vs EXEC = exec runtime, WAIT vs RUNDLY = run delay (WAIT from the "
            "enqueue at sched_wakeup, as the kernel counts it), in ms, tolerance max({:.1f} ms, "
            "{:.1f}%) + unknown time)",
            Ms(check.tolerance.time_abs_ns), check.tolerance.time_rel * 100));
  std::string header = fmt::format(
      "{:>8} {:>7} {:<16} {:<8} {:>7} {:>7} {:>5} {:>7} {:>7} {:>5} {:>10} {:>10} {:>8} {:>10} "
      "{:>10} {:>8}  {}\n",
      "TID", "PID", "COMM", "WINDOW", "VOL", "K-VOL", "DIFF", "ICX", "K-ICX", "DIFF", "ONCPU",
      "EXEC", "DIFF", "WAIT", "RUNDLY", "DIFF", "STATUS");
  os << header;
  for (const ThreadCheck& c : check.threads)
    os << Row(std::to_string(c.tid), PidColumn(c.pid_known, c.pid), c.comm,
              std::string(WindowModeName(c.mode)), c.traced, c.kernel, c.mode != WindowMode::kNone,
              StatusText(c));
  if (!check.processes.empty()) {
    os << "PROCESSES (sums over the compared threads above)\n";
    for (const ProcessCheck& p : check.processes) {
      std::string status(CheckStatusName(p.status));
      if (p.status == CheckStatus::kAgree || p.status == CheckStatus::kDisagree) {
        std::string bad =
            Problems(p.switches_ok, p.on_cpu_ok || !p.times_judged, p.wait_ok || !p.times_judged);
        // The sums may agree while a thread does not: the row is its threads' worst.
        if (bad.empty() && p.status == CheckStatus::kDisagree) bad = DisagreeingThreads(check, p);
        if (!bad.empty()) status += " (" + bad + ")";
        // As its threads' notes say: an "agree" on switch counts alone.
        if (!p.times_judged) status += ": times not judged";
      }
      os << Row(PidColumn(p.pid_known, p.pid), fmt::format("{}thr", p.threads), p.comm, "sum",
                p.traced, p.kernel, true, status);
    }
  }
  for (const std::string& n : check.notes) os << "NOTE: " << n << "\n";
  os << check.Verdict() << "\n";
}

nlohmann::json WorstJson(const KernelCheckResult::WorstThread& w) {
  if (w.tid == 0) return nullptr;
  // (No percentage of a kernel value of 0.)
  return {{"tid", w.tid},
          {"diff_ns", w.diff_ns},
          {"diff_pct", w.kernel_ns != 0 ? nlohmann::json(w.pct) : nlohmann::json()}};
}

nlohmann::json CheckToJson(const KernelCheckResult& check) {
  nlohmann::json threads = nlohmann::json::array();
  for (const ThreadCheck& c : check.threads) {
    nlohmann::json j = {{"tid", c.tid},
                        {"pid", c.pid_known ? nlohmann::json(c.pid) : nullptr},
                        {"comm", c.comm},
                        {"status", CheckStatusName(c.status)},
                        {"window", WindowModeName(c.mode)}};
    if (!c.note.empty()) j["note"] = c.note;
    if (c.mode != WindowMode::kNone) {
      j["traced"] = QuantitiesJson(c.traced);
      j["kernel"] = QuantitiesJson(c.kernel);
      j["unknown_ns"] = c.unknown_ns;
      j["final_switches_excluded"] = c.exit_adjust;
      j["on_cpu_unaccounted_at_exit_record_ns"] = c.exit_cut_on_cpu_ns;
      j["switches_during_reads"] = c.switches_during_reads;
      j["switches_placed_after_reads"] = c.switches_placed_after_reads;
      j["tolerance_ns"] = {{"on_cpu", c.on_cpu_tolerance_ns}, {"wait_cpu", c.wait_tolerance_ns}};
      j["asleep_queued_ns"] = c.asleep_queued_ns;
      j["preempted_asleep_ns"] = c.preempted_asleep_ns;
      j["between_runqueues_ns"] = c.between_runqueues_ns;
      j["host_steal_on_cpu_ns"] = c.stolen_ns;
      j["wait_maybe_more_ns"] = c.wait_maybe_more_ns;
      j["enqueue_maybe_earlier_ns"] = c.enqueue_maybe_earlier_ns;
      j["ok"] = {{"switches", c.switches_ok}, {"on_cpu", c.on_cpu_ok}, {"wait_cpu", c.wait_ok}};
      j["times_judged"] = c.times_judged;
    }
    threads.push_back(std::move(j));
  }
  nlohmann::json processes = nlohmann::json::array();
  for (const ProcessCheck& p : check.processes)
    processes.push_back(
        {{"pid", p.pid_known ? nlohmann::json(p.pid) : nullptr},
         {"comm", p.comm},
         {"threads", p.threads},
         {"status", CheckStatusName(p.status)},
         {"traced", QuantitiesJson(p.traced)},
         {"kernel", QuantitiesJson(p.kernel)},
         {"ok", {{"switches", p.switches_ok}, {"on_cpu", p.on_cpu_ok}, {"wait_cpu", p.wait_ok}}},
         {"times_judged", p.times_judged}});
  return {
      {"passed", check.passed()},
      {"verdict", check.Verdict()},
      {"has_kernel_counters", check.has_counters},
      {"compared", check.compared},
      {"times_judged", check.times_judged},
      {"times_judged_idle", check.times_judged_idle},
      {"agreeing", check.agreeing},
      {"partial", check.partial},
      {"lost_events", check.lost},
      {"untraced", check.untraced},
      {"without_counters", check.no_counters},
      {"tolerance",
       {{"time_abs_ns", check.tolerance.time_abs_ns}, {"time_rel", check.tolerance.time_rel}}},
      {"covered", check.Covered()},
      {"worst_thread",
       {{"on_cpu", WorstJson(check.worst_on_cpu)}, {"wait_cpu", WorstJson(check.worst_wait)}}},
      {"host_steal_ns", check.host_steal_ns >= 0 ? nlohmann::json(check.host_steal_ns) : nullptr},
      {"enqueue_lag", check.enqueue_lag_ns >= 0
                          ? nlohmann::json{{"median_ns", check.enqueue_lag_ns},
                                           {"wakeups", check.enqueue_lag_wakeups}}
                          : nlohmann::json(nullptr)},
      {"notes", check.notes},
      {"threads", threads},
      {"processes", processes}};
}

}  // namespace cstool
