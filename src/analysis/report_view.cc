#include "analysis/report_view.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>

#include "base/errors.h"

namespace cstool {
namespace {

using SortKey = std::function<int64_t(const ThreadReport&)>;

int64_t Micro(const ThreadReport& r, Microstate m) { return r.microstates[static_cast<size_t>(m)]; }

std::map<std::string, SortKey> SortTable() {
  std::map<std::string, SortKey> t = {
      {"switches", [](const ThreadReport& r) { return int64_t(r.voluntary + r.involuntary); }},
      {"voluntary", [](const ThreadReport& r) { return int64_t(r.voluntary); }},
      {"involuntary", [](const ThreadReport& r) { return int64_t(r.involuntary); }},
      {"lifetime", [](const ThreadReport& r) { return r.Lifetime(); }},
      {"tid", [](const ThreadReport& r) { return -int64_t(r.thread->tid); }},
      {"pid",
       [](const ThreadReport& r) {  // ascending; unknown last
         return PidKnown(*r.thread) ? -int64_t(r.thread->tgid) : INT64_MIN;
       }},
      {"oncpu",
       [](const ThreadReport& r) {
         return Micro(r, Microstate::kUser) + Micro(r, Microstate::kSys) +
                Micro(r, Microstate::kIrq) + Micro(r, Microstate::kSoftirq);
       }},
      {"wait",
       [](const ThreadReport& r) {
         return Micro(r, Microstate::kWaitCpuWakeup) + Micro(r, Microstate::kWaitCpuPreempted);
       }},
  };
  for (size_t i = 0; i < kMicrostateCount; ++i) {
    Microstate m = static_cast<Microstate>(i);
    t[std::string(kMicrostateNames[i].key)] = [m](const ThreadReport& r) { return Micro(r, m); };
  }
  return t;
}

void Accumulate(ThreadReport& into, const ThreadReport& r) {
  for (size_t i = 0; i < kMicrostateCount; ++i) into.microstates[i] += r.microstates[i];
  into.voluntary += r.voluntary;
  into.involuntary += r.involuntary;
  into.placement.in_early_ns += r.placement.in_early_ns;
  into.placement.out_early_ns += r.placement.out_early_ns;
  into.placement.untraced_switch_ins += r.placement.untraced_switch_ins;
  into.placement.untraced_switch_outs += r.placement.untraced_switch_outs;
  into.voluntary_after_exit += r.voluntary_after_exit;
  into.involuntary_after_exit += r.involuntary_after_exit;
  for (auto [k, n] : r.causes) {
    bool found = false;
    for (auto& [k2, n2] : into.causes)
      if (k2 == k) n2 += n, found = true;
    if (!found) into.causes.emplace_back(k, n);
  }
  for (size_t i = 0; i < kPreemptedAtCount; ++i) into.preempted_at[i] += r.preempted_at[i];
  for (auto& [nr, s] : r.syscalls) {
    SyscallStats& d = into.syscalls[nr];
    d.calls += s.calls;
    d.blocked += s.blocked;
    d.time_ns += s.time_ns;
  }
  for (auto& [name, s] : r.irqs) {
    IrqStats& d = into.irqs[name];
    d.count += s.count;
    d.time_ns += s.time_ns;
  }
  into.wakeups += r.wakeups;
  into.migrations += r.migrations;
}

}  // namespace

std::vector<std::string> SortKeys() {
  std::vector<std::string> keys;
  for (auto& [k, f] : SortTable()) keys.push_back(k);
  return keys;
}

std::vector<std::pair<std::string, uint64_t>> ReportView::Causes(const ThreadReport& r) const {
  std::vector<std::pair<std::string, uint64_t>> out;
  for (auto [k, n] : r.causes) out.emplace_back(syscalls->CauseLabel(SwitchCause::Unpack(k)), n);
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  return out;
}

std::string ReportView::UngroupedNote() const {
  if (ungrouped_threads == 0) return {};
  return fmt::format(
      "processes could not be grouped for {} thread{}: the file has no thread-group ids for "
      "them (nor did a traced fork with clone flags or an exec show them); their PID is "
      "unknown (-) and PROCESSES leaves them out",
      ungrouped_threads, ungrouped_threads == 1 ? "" : "s");
}

bool SelectsThread(const ViewOptions& options, const Thread& t) {
  if (!options.tids.empty() &&
      std::find(options.tids.begin(), options.tids.end(), t.tid) == options.tids.end())
    return false;
  // A thread whose process is unknown is in none of them (its tid says nothing of it).
  if (!options.pids.empty() && (!PidKnown(t) || std::find(options.pids.begin(), options.pids.end(),
                                                          t.tgid) == options.pids.end()))
    return false;
  // Explicit -p/-t selections may name threads outside the recorded workload.
  return t.tracked || options.all_threads || !options.pids.empty() || !options.tids.empty();
}

ReportView BuildView(const ReportModel& model, const SyscallTable& syscalls,
                     const ViewOptions& options) {
  auto table = SortTable();
  auto key = table.find(options.sort);
  if (key == table.end()) {
    std::string valid;
    for (auto& [k, f] : table) valid += (valid.empty() ? "" : ", ") + k;
    throw Error(fmt::format("unknown sort key '{}' (valid: {})", options.sort, valid),
                ExitCode::kUsage);
  }
  ReportView view;
  view.model = &model;
  view.syscalls = &syscalls;
  auto wanted = [&](const Thread& t) { return SelectsThread(options, t); };
  for (const ThreadReport& r : model.threads)
    if (r.thread && wanted(*r.thread)) view.threads.push_back(&r);
  std::stable_sort(view.threads.begin(), view.threads.end(),
                   [&](const ThreadReport* a, const ThreadReport* b) {
                     int64_t ka = key->second(*a), kb = key->second(*b);
                     if (ka != kb) return ka > kb;
                     return a->thread->id < b->thread->id;
                   });

  std::map<int32_t, ProcessTotals> procs;
  for (const ThreadReport* r : view.threads) {
    const Thread& t = *r->thread;
    // Threads of unknown processes are left out rather than summed into one "-" row: such
    // a row would add up unrelated processes (kernel threads, daemons, the workload) and
    // rank as one process; each of them still has its own row under THREADS.
    if (!PidKnown(t)) {
      ++view.ungrouped_threads;
      continue;
    }
    ProcessTotals& p = procs[t.tgid];
    p.pid = t.tgid;
    if (p.comm.empty() || t.tid == p.pid) p.comm = t.comm;
    ++p.threads;
    p.lifetime_sum += r->Lifetime();
    p.lost_touched = p.lost_touched || t.lost_touched;
    Accumulate(p.sum, *r);
  }
  for (auto& [pid, p] : procs) view.processes.push_back(std::move(p));
  std::stable_sort(view.processes.begin(), view.processes.end(), [](auto& a, auto& b) {
    return a.sum.voluntary + a.sum.involuntary > b.sum.voluntary + b.sum.involuntary;
  });
  return view;
}

}  // namespace cstool
