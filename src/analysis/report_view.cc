#include "analysis/report_view.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <map>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "base/errors.h"
#include "base/saturating_add.h"

namespace cstool {
namespace {

// Whether a thread comes before another by a key (ties fall to the order the threads
// were made in).
using SortKey = std::function<bool(const ThreadReport&, const ThreadReport&)>;

// Largest value first (times, counts; a negated id sorts ascending).
SortKey Largest(std::function<int64_t(const ThreadReport&)> value) {
  return [value = std::move(value)](const ThreadReport& a, const ThreadReport& b) {
    return value(a) > value(b);
  };
}

int64_t Micro(const ThreadReport& r, Microstate m) { return r.microstates[static_cast<size_t>(m)]; }

std::map<std::string, SortKey> SortTable() {
  std::map<std::string, SortKey> t = {
      {"switches",
       Largest([](const ThreadReport& r) { return int64_t(r.voluntary + r.involuntary); })},
      {"voluntary", Largest([](const ThreadReport& r) { return int64_t(r.voluntary); })},
      {"involuntary", Largest([](const ThreadReport& r) { return int64_t(r.involuntary); })},
      {"lifetime", Largest([](const ThreadReport& r) { return r.Lifetime(); })},
      {"migrations", Largest([](const ThreadReport& r) { return int64_t(r.migrations); })},
      {"before_migration",  // the waits for a CPU that ended in a move (JSON wait_cpu's)
       Largest([](const ThreadReport& r) {
         return r.wait_before_migration_wakeup_ns + r.wait_before_migration_preempted_ns;
       })},
      {"longest_wait",  // the longest single wait for a CPU (MAXWAIT; perf sched's max delay)
       Largest([](const ThreadReport& r) { return r.longest_wait_ns; })},
      {"tid", Largest([](const ThreadReport& r) { return -int64_t(r.thread->tid); })},
      {"comm",  // by name, ascending like tid and pid; an unnamed thread last
       [](const ThreadReport& a, const ThreadReport& b) {
         const std::string& ca = a.thread->comm;
         const std::string& cb = b.thread->comm;
         return ca.empty() != cb.empty() ? cb.empty() : ca < cb;
       }},
      {"pid", Largest([](const ThreadReport& r) {  // ascending; unknown last
         return PidKnown(*r.thread) ? -int64_t(r.thread->tgid) : INT64_MIN;
       })},
      {"oncpu", Largest([](const ThreadReport& r) {
         return Micro(r, Microstate::kUser) + Micro(r, Microstate::kSys) +
                Micro(r, Microstate::kIrq) + Micro(r, Microstate::kSoftirq);
       })},
      {"wait", Largest([](const ThreadReport& r) { return r.WaitCpuNs(); })},
      {"asleep",  // every sleep state ("sleep" is the plain one), not stopped
       Largest([](const ThreadReport& r) {
         int64_t asleep = 0;
         for (size_t i = 0; i < kMicrostateCount; ++i)
           if (const auto m = static_cast<Microstate>(i);
               IsSleeping(m) && m != Microstate::kStopped)
             asleep += r.microstates[i];
         return asleep;
       })},
  };
  for (size_t i = 0; i < kMicrostateCount; ++i) {
    Microstate m = static_cast<Microstate>(i);
    t[std::string(kMicrostateNames[i].key)] =
        Largest([m](const ThreadReport& r) { return Micro(r, m); });
  }
  return t;
}

// The key `name` stands for: a key of SortTable, or the title of the THREADS table's
// column that shows it (USR, LATW, VCX, LIFE(ms), ...), in any case, since users type
// what they see. "" when it is neither.
std::string SortKeyNamed(std::string_view name, const std::map<std::string, SortKey>& table) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (table.contains(lower)) return lower;
  for (const MicrostateNames& m : kMicrostateNames)
    if (std::equal(lower.begin(), lower.end(), m.column.begin(), m.column.end(),
                   [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); }))
      return std::string(m.key);
  // The THREADS table's titles, then WAKERS's.
  static constexpr std::pair<std::string_view, std::string_view> kTitles[] = {
      {"vcx", "voluntary"},
      {"icx", "involuntary"},
      {"life", "lifetime"},
      {"life(ms)", "lifetime"},
      {"migr", "migrations"},
      {"premig", "before_migration"},
      {"premig(ms)", "before_migration"},
      {"maxwait", "longest_wait"},
      {"maxwait(ms)", "longest_wait"},
  };
  for (auto [title, key] : kTitles)
    if (lower == title) return std::string(key);
  return "";
}

bool SameProcess(const WaitParty& a, const WaitParty& b) {
  if (a.thread && b.thread && PidKnown(*a.thread) && PidKnown(*b.thread))
    return a.thread->tgid == b.thread->tgid;
  return a == b;
}

void Accumulate(ThreadReport& into, const ThreadReport& r) {
  for (size_t i = 0; i < kMicrostateCount; ++i)
    into.microstates[i] = SaturatingAdd(into.microstates[i], r.microstates[i]);
  into.voluntary += r.voluntary;
  into.involuntary += r.involuntary;
  into.placement.in_early_ns = SaturatingAdd(into.placement.in_early_ns, r.placement.in_early_ns);
  into.placement.out_early_ns =
      SaturatingAdd(into.placement.out_early_ns, r.placement.out_early_ns);
  into.placement.untraced_switch_ins += r.placement.untraced_switch_ins;
  into.placement.untraced_switch_outs += r.placement.untraced_switch_outs;
  into.placement.asleep_queued_ns =
      SaturatingAdd(into.placement.asleep_queued_ns, r.placement.asleep_queued_ns);
  into.placement.asleep_maybe_queued_ns =
      SaturatingAdd(into.placement.asleep_maybe_queued_ns, r.placement.asleep_maybe_queued_ns);
  into.placement.stolen_ns = SaturatingAdd(into.placement.stolen_ns, r.placement.stolen_ns);
  into.voluntary_after_exit += r.voluntary_after_exit;
  into.involuntary_after_exit += r.involuntary_after_exit;
  into.involuntary_to_recorder += r.involuntary_to_recorder;
  for (auto [k, n] : r.causes) {
    bool found = false;
    for (auto& [k2, n2] : into.causes)
      if (k2 == k) n2 += n, found = true;
    if (!found) into.causes.emplace_back(k, n);
  }
  for (size_t i = 0; i < kPreemptedAtCount; ++i) into.preempted_at[i] += r.preempted_at[i];
  for (auto& [nr, s] : r.syscalls) into.syscalls[nr] += s;
  for (auto& [name, s] : r.irqs) into.irqs[name] += s;
  into.wakeups += r.wakeups;
  into.waits_ended += r.waits_ended;
  if (r.longest_wait_ns > into.longest_wait_ns) {  // a process's longest is its threads'
    into.longest_wait_ns = r.longest_wait_ns;
    into.longest_wait_from = r.longest_wait_from;
  }
  into.migrations += r.migrations;
  for (auto& [pair, n] : r.migration_pairs) into.migration_pairs[pair] += n;
  into.wait_before_migration_wakeup_ns =
      SaturatingAdd(into.wait_before_migration_wakeup_ns, r.wait_before_migration_wakeup_ns);
  into.wait_before_migration_preempted_ns =
      SaturatingAdd(into.wait_before_migration_preempted_ns, r.wait_before_migration_preempted_ns);
  // A process's wakers and runners are processes: threads of one process share an entry.
  for (const WokenBy& w : r.woken_by) {
    auto it = std::find_if(into.woken_by.begin(), into.woken_by.end(),
                           [&](const WokenBy& x) { return SameProcess(x.waker, w.waker); });
    if (it == into.woken_by.end()) {
      into.woken_by.push_back(w);
    } else {
      it->wakeups += w.wakeups;
      it->blocked_ns = SaturatingAdd(it->blocked_ns, w.blocked_ns);
    }
  }
  for (const WaitedBehind& w : r.waited_behind) {
    auto it =
        std::find_if(into.waited_behind.begin(), into.waited_behind.end(),
                     [&](const WaitedBehind& x) { return SameProcess(x.running, w.running); });
    if (it == into.waited_behind.end())
      into.waited_behind.push_back(w);
    else
      it->time_ns = SaturatingAdd(it->time_ns, w.time_ns);
  }
}

// The parent process as `t` tells it: the process of the thread that forked it, when
// that is another process (a thread's creator is in its own process), or 0.
int32_t ForkParent(const Thread& t) {
  const Thread* creator = t.forked_by;
  return creator && PidKnown(*creator) && creator->tgid != t.tgid ? creator->tgid : 0;
}

// The parents /proc showed the recorder (processes alive before the trace), by pid.
std::unordered_map<int32_t, int32_t> ProcParents(const TraceSummary& trace) {
  std::unordered_map<int32_t, int32_t> out;
  if (!trace.has_recording_info) return out;
  for (const ThreadIdentity& t : trace.recording.threads)
    if (t.tid == t.tgid && t.ppid != 0) out.emplace(t.tgid, t.ppid);
  return out;
}

// --tree: processes in the tree's preorder, threads by their process's place in it
// (creation order within), threads of unknown processes last.
void OrderAsTree(ReportView& view) {
  std::vector<ProcessTotals> ordered;
  ordered.reserve(view.processes.size());
  for (size_t i : view.tree.preorder) ordered.push_back(std::move(view.processes[i]));
  view.processes = std::move(ordered);
  view.tree = BuildProcessTree(view.processes);
  std::unordered_map<int32_t, size_t> rank;
  for (size_t i = 0; i < view.processes.size(); ++i) rank.emplace(view.processes[i].pid, i);
  auto rank_of = [&rank](const Thread& t) {
    auto it = PidKnown(t) ? rank.find(t.tgid) : rank.end();
    return it == rank.end() ? SIZE_MAX : it->second;
  };
  std::stable_sort(view.threads.begin(), view.threads.end(),
                   [&](const ThreadReport* a, const ThreadReport* b) {
                     const size_t ra = rank_of(*a->thread), rb = rank_of(*b->thread);
                     return ra != rb ? ra < rb : a->thread->id < b->thread->id;
                   });
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

ReportView::SyscallSummary ReportView::TopSyscalls(const ThreadReport& r, size_t n) const {
  SyscallSummary out;
  std::vector<std::pair<int64_t, SyscallStats>> all(r.syscalls.begin(), r.syscalls.end());
  for (const auto& [nr, st] : all) out.total += st;
  const auto more_time = [this](const auto& a, const auto& b) {
    if (a.second.time_ns != b.second.time_ns) return a.second.time_ns > b.second.time_ns;
    if (a.second.calls != b.second.calls) return a.second.calls > b.second.calls;
    return syscalls->Name(a.first) < syscalls->Name(b.first);
  };
  const size_t shown = std::min(n, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(shown), all.end(),
                    more_time);
  for (size_t i = 0; i < shown; ++i)
    out.top.emplace_back(syscalls->Name(all[i].first), all[i].second);
  return out;
}

std::string ReportView::TopSyscallsText(const SyscallSummary& s) {
  std::string text;
  for (const auto& [name, st] : s.top)
    text += fmt::format("{}{} {}/{}/{:.3f}", text.empty() ? "" : ", ", name, st.calls, st.blocked,
                        static_cast<double>(st.time_ns) / 1e6);
  return text.empty() ? "-" : text;
}

bool ReportView::CpuTraced(int32_t cpu) const {
  const TraceSummary& t = model->trace;
  if (!t.has_recording_info) return true;
  const std::vector<int32_t>& out = t.recording.untraced_cpus;
  return std::find(out.begin(), out.end(), cpu) == out.end();
}

std::string ReportView::CpusText() const {
  const TraceSummary& t = model->trace;
  std::vector<int32_t> traced, left_out;
  for (int32_t cpu = 0; cpu < t.cpus; ++cpu) (CpuTraced(cpu) ? traced : left_out).push_back(cpu);
  if (left_out.empty()) return fmt::format("{} CPUs", t.cpus);
  return fmt::format("{} {} (of {}; -C left out {} {})", traced.size() == 1 ? "CPU" : "CPUs",
                     fmt::join(traced, ","), t.cpus, left_out.size() == 1 ? "CPU" : "CPUs",
                     fmt::join(left_out, ","));
}

std::string ReportView::LostText(int32_t cpu, uint64_t n) const {
  return model->trace.CpuUnread(cpu) ? std::string("not read") : std::to_string(n);
}

std::string ReportView::UngroupedNote() const {
  if (ungrouped_threads == 0) return {};
  return fmt::format(
      "processes could not be grouped for {} thread{}: the file has no thread-group ids for "
      "them (nor did a traced fork with clone flags or an exec show them); their PID is "
      "unknown (-) and PROCESSES leaves them out (a trace-cmd recording tells them when "
      "it has the task events, -e task, from before the program started)",
      ungrouped_threads, ungrouped_threads == 1 ? "" : "s");
}

bool SelectsThread(const ViewOptions& options, const Thread& t) {
  if (!options.tids.empty() && std::none_of(options.tids.begin(), options.tids.end(),
                                            [&](int32_t tid) { return t.GoesBy(tid); }))
    return false;
  // A thread whose process is unknown is in none of them (its tid says nothing of it).
  if (!options.pids.empty() && (!PidKnown(t) || std::find(options.pids.begin(), options.pids.end(),
                                                          t.tgid) == options.pids.end()))
    return false;
  // Explicit -p/-t selections may name threads outside the recorded workload.
  return t.tracked || options.all_threads || !options.pids.empty() || !options.tids.empty();
}

namespace {

// The recorder opens a thread's counters when it finds the thread: a new thread at its
// next look (every 10 ms), a new process at its /proc scan (every 0.5 s). What that
// leaves out would show only as a short SPAN, and counts read as 10-90 % low beside
// time(1)'s or the switch counts. Only threads created in the trace can be found late
// (the others' counters open before the trace or the command starts); with -a only the
// command's processes are counted, so a thread without counters is no surprise there.
void NoteCountersOpenedLate(ReportView& view) {
  constexpr int64_t kNotedLateNs = 1'000'000;
  const bool every_process_counted = !view.model->trace.recording.system_wide;
  int late = 0, without = 0;
  int64_t latest_ns = 0;
  for (const ThreadReport* r : view.threads) {
    const Thread& t = *r->thread;
    if (!t.tracked || !t.seen_running || !t.created_in_trace) continue;
    const CounterTotals* c = view.CountersOf(t);
    if (c == nullptr) {
      if (every_process_counted) ++without;
    } else if (c->first_ts - t.first_ts > kNotedLateNs) {
      ++late;
      latest_ns = std::max(latest_ns, c->first_ts - t.first_ts);
    }
  }
  if (late > 0)
    view.counter_notes.push_back(fmt::format(
        "{} thread{} counted from up to {:.1f} ms after {} started (SPAN): the recorder opens a "
        "thread's counters when it finds it, a new thread at its next look (every 10 ms), a "
        "new process at its /proc scan (every 0.5 s)",
        late, late == 1 ? " was" : "s were", static_cast<double>(latest_ns) / 1e6,
        late == 1 ? "it" : "they"));
  if (without > 0)
    view.counter_notes.push_back(fmt::format(
        "{} thread{} that ran {} no counters: {} ended before the recorder found {} (a process "
        "is found at its /proc scan, every 0.5 s)",
        without, without == 1 ? "" : "s", without == 1 ? "has" : "have",
        without == 1 ? "it" : "they", without == 1 ? "it" : "them"));
}

// record -c/-V: the totals of the counted threads, and their sums over the shown
// threads of each process.
void AddCounters(ReportView& view) {
  const RecordingInfo& info = view.model->trace.recording;
  if (!view.model->trace.has_recording_info || info.perf_counters.is_null()) return;
  CounterRecording recording;
  try {
    recording = info.perf_counters.get<CounterRecording>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("counter samples: malformed JSON: ") + e.what());
  }
  view.counter_names = recording.names;
  view.counter_interval_ns = recording.interval_ns;
  for (CounterTotals& t : TotalsByThread(recording))
    view.thread_counters.emplace(t.tid, std::move(t));
  // Rates are per second of the life the trace shows. An exited thread's last sample is
  // read after its exit, at the recorder's next look (up to -T later): its counts are
  // final, but the span ends at its final switch-out (the trace's), where its counters
  // stopped; a pid filter drops that switch once the thread left the followed pids, and
  // then its exit record's instant (sched_process_exit at the latest) is the nearest the
  // trace has. A first sample is read when the recorder opens the counter, which can be
  // well before the trace shows the thread (0.1-22 ms for a recorded command, the
  // recorder's set-up between): the span starts where the thread's life in the trace does.
  for (const ThreadReport* r : view.threads)
    if (auto it = view.thread_counters.find(r->thread->tid); it != view.thread_counters.end()) {
      CounterTotals& c = it->second;
      const Thread& t = *r->thread;
      const int64_t exit_ts = t.exit_switch_ts >= 0 ? t.exit_switch_ts : t.exit_record_ts;
      if (c.exited && exit_ts > c.first_ts && exit_ts < c.last_ts) c.last_ts = exit_ts;
      if (t.first_ts > c.first_ts && t.first_ts < c.last_ts) c.first_ts = t.first_ts;
    }
  std::vector<CounterTotals> shown;
  for (const ThreadReport* r : view.threads)
    if (const CounterTotals* c = view.CountersOf(*r->thread); c && PidKnown(*r->thread)) {
      shown.push_back(*c);
      shown.back().tgid = r->thread->tgid;
    }
  for (CounterTotals& p : SumByProcess(shown)) view.process_counters.emplace(p.tgid, std::move(p));

  view.counter_notes = recording.notes;
  NoteCountersOpenedLate(view);
  if (recording.sampling.period == 0) return;
  for (CounterOverflow& o : recording.overflows)
    view.thread_overflows[o.tid].push_back(std::move(o));
  for (const SamplingThreadStats& t : recording.sampling.threads) view.thread_sampling[t.tid] = t;
  recording.sampling.threads.clear();
  view.sampling = std::move(recording.sampling);
  for (const ThreadReport* r : view.threads) {
    const SamplingThreadStats* t = view.SamplingOf(*r->thread);
    if (!t || !PidKnown(*r->thread)) continue;
    SamplingThreadStats& p = view.process_sampling[r->thread->tgid];
    p.tgid = r->thread->tgid;
    p.samples += t->samples;
    p.lost += t->lost;
    p.throttles += t->throttles;
    p.unthrottles += t->unthrottles;
  }
}

}  // namespace

ReportView BuildView(const ReportModel& model, const SyscallTable& syscalls,
                     const ViewOptions& options) {
  auto table = SortTable();
  auto key = table.find(SortKeyNamed(options.sort, table));
  if (key == table.end()) {
    std::string valid;
    for (auto& [k, f] : table) valid += (valid.empty() ? "" : ", ") + k;
    throw Error(fmt::format("unknown sort key '{}' (valid: {}; or a column title such as "
                            "LATW, VCX, LIFE)",
                            options.sort, valid),
                ExitCode::kUsage);
  }
  ReportView view;
  view.microstates_in_ms = options.microstates_in_ms;
  view.model = &model;
  view.syscalls = &syscalls;
  auto wanted = [&](const Thread& t) { return SelectsThread(options, t); };
  for (const ThreadReport& r : model.threads)
    if (r.thread && wanted(*r.thread)) view.threads.push_back(&r);
  std::stable_sort(view.threads.begin(), view.threads.end(),
                   [&](const ThreadReport* a, const ThreadReport* b) {
                     if (key->second(*a, *b)) return true;
                     if (key->second(*b, *a)) return false;
                     return a->thread->id < b->thread->id;
                   });

  std::map<int32_t, ProcessTotals> procs;
  const std::unordered_map<int32_t, int32_t> proc_parents = ProcParents(model.trace);
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
    if (p.ppid == 0) p.ppid = ForkParent(t);
    p.first_ts = std::min(p.first_ts, t.first_ts);
    p.end_ts = std::max(p.end_ts, t.end_ts);
    p.lifetime_sum = SaturatingAdd(p.lifetime_sum, r->Lifetime());
    p.lost_touched = p.lost_touched || t.lost_touched;
    Accumulate(p.sum, *r);
  }
  // A process's wakers and runners are shown by their process: name them by its leader.
  std::unordered_map<int32_t, const Thread*> leaders;
  for (const ThreadReport& r : model.threads)
    if (r.thread && PidKnown(*r.thread) && r.thread->tid == r.thread->tgid)
      leaders[r.thread->tgid] = r.thread;
  auto by_leader = [&leaders](WaitParty& party) {
    if (!party.thread || !PidKnown(*party.thread)) return;
    if (auto it = leaders.find(party.thread->tgid); it != leaders.end()) party.thread = it->second;
  };
  for (auto& [pid, p] : procs) {
    for (WokenBy& w : p.sum.woken_by) by_leader(w.waker);
    for (WaitedBehind& w : p.sum.waited_behind) by_leader(w.running);
    std::stable_sort(
        p.sum.woken_by.begin(), p.sum.woken_by.end(),
        [](const WokenBy& a, const WokenBy& b) { return a.blocked_ns > b.blocked_ns; });
    std::stable_sort(
        p.sum.waited_behind.begin(), p.sum.waited_behind.end(),
        [](const WaitedBehind& a, const WaitedBehind& b) { return a.time_ns > b.time_ns; });
    if (p.ppid == 0)
      if (auto it = proc_parents.find(pid); it != proc_parents.end()) p.ppid = it->second;
    view.ppids.emplace(pid, p.ppid);
    view.processes.push_back(std::move(p));
  }
  std::stable_sort(view.processes.begin(), view.processes.end(), [](auto& a, auto& b) {
    return a.sum.voluntary + a.sum.involuntary > b.sum.voluntary + b.sum.involuntary;
  });
  view.tree = BuildProcessTree(view.processes);
  if (options.tree) OrderAsTree(view);
  AddCounters(view);
  return view;
}

}  // namespace cstool
