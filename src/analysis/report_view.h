// The rendered selection of a ReportModel: which threads (filters), in which order
// (--sort), with per-process totals. Renderers only read this.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/process_tree.h"
#include "analysis/report_model.h"
#include "counters/counter_samples.h"
#include "model/syscall_table.h"

namespace cstool {

// A thread's process is known when the file tells its tgid (sched/thread_groups.h); a
// report then shows it as unknown (PidText "-", JSON null), never as the tid.
inline bool PidKnown(const Thread& t) { return t.tgid != 0; }

struct ViewOptions {
  std::vector<int32_t> pids;  // -p: only these processes
  std::vector<int32_t> tids;  // -t: only these threads
  std::string sort = "switches";
  bool all_threads = false;  // also untracked threads
  // --tree: processes in tree order (parents before children, siblings by creation) and
  // threads by their process in that order, instead of by `sort`.
  bool tree = false;
  // --ms: the table's microstate columns in milliseconds instead of % of the lifetime.
  bool microstates_in_ms = false;
};

struct ProcessTotals {
  int32_t pid = 0;
  int32_t ppid = 0;  // the parent process; 0 when neither the trace nor /proc told it
  std::string comm;
  uint32_t threads = 0;
  ThreadReport sum;  // thread == nullptr; lifetimes summed over threads
  int64_t lifetime_sum = 0;
  int64_t first_ts = INT64_MAX;  // the earliest start and latest end of its threads
  int64_t end_ts = INT64_MIN;
  bool lost_touched = false;
};

struct KernelCheckResult;

struct ReportView {
  const ReportModel* model = nullptr;
  const SyscallTable* syscalls = nullptr;
  const KernelCheckResult* check = nullptr;  // --check result, rendered when set
  bool microstates_in_ms = false;            // ViewOptions::microstates_in_ms
  std::vector<const ThreadReport*> threads;
  std::vector<ProcessTotals> processes;  // of the threads whose process is known
  ProcessTree tree;                      // over `processes`, indexed like them
  uint32_t ungrouped_threads = 0;        // threads whose process is not known

  std::unordered_map<int32_t, int32_t> ppids;  // pid -> ppid of `processes`

  // record -c/-V: the counter columns, each counted thread's totals (by tid) and their
  // sums per process over the shown threads (by pid). Empty without counters.
  std::vector<std::string> counter_names;
  int64_t counter_interval_ns = 0;
  std::unordered_map<int32_t, CounterTotals> thread_counters;
  std::unordered_map<int32_t, CounterTotals> process_counters;
  const CounterTotals* CountersOf(const Thread& t) const {
    auto it = thread_counters.find(t.tid);
    return it == thread_counters.end() ? nullptr : &it->second;
  }
  const CounterTotals* CountersOfProcess(int32_t pid) const {
    auto it = process_counters.find(pid);
    return it == process_counters.end() ? nullptr : &it->second;
  }
  std::vector<std::string> counter_notes;  // the recording's (lost samples, throttling)
  // record -c EVENT:ebs=N: the sampled event and period (period 0: no sampling), each
  // sampled thread's ring counts and overflows (time order), and the counts summed per
  // process over the shown threads.
  CounterSampling sampling;
  std::unordered_map<int32_t, SamplingThreadStats> thread_sampling;
  std::unordered_map<int32_t, std::vector<CounterOverflow>> thread_overflows;
  std::unordered_map<int32_t, SamplingThreadStats> process_sampling;
  const SamplingThreadStats* SamplingOf(const Thread& t) const {
    auto it = thread_sampling.find(t.tid);
    return it == thread_sampling.end() ? nullptr : &it->second;
  }
  const std::vector<CounterOverflow>& OverflowsOf(const Thread& t) const {
    static const std::vector<CounterOverflow> kNone;
    auto it = thread_overflows.find(t.tid);
    return it == thread_overflows.end() ? kNone : it->second;
  }

  // The parent of the process of `t` (0: unknown).
  int32_t PpidOf(const Thread& t) const {
    auto it = PidKnown(t) ? ppids.find(t.tgid) : ppids.end();
    return it == ppids.end() ? 0 : it->second;
  }

  // What the header says when some threads could not be grouped; empty when none.
  std::string UngroupedNote() const;
  // The file's CPUs for the summary line: "2 CPUs", or with -C "CPU 1 (of 2; -C left out
  // CPU 0)": a CPU left out has an empty buffer in the file, not a traced one.
  std::string CpusText() const;
  bool CpuTraced(int32_t cpu) const;
  // A CPU's lost events for the text outputs: the count, or "not read" for a CPU none of
  // whose data was left (report --salvage), whose losses are unknown.
  std::string LostText(int32_t cpu, uint64_t n) const;

  // The cause labels of r, largest count first.
  std::vector<std::pair<std::string, uint64_t>> Causes(const ThreadReport& r) const;

  // Whether a thread of the view made a syscall the trace shows (else no SYSCALLS table).
  bool AnySyscalls() const {
    return std::any_of(threads.begin(), threads.end(),
                       [](const ThreadReport* r) { return !r->syscalls.empty(); });
  }
  // The syscalls the SYSCALLS table names per row.
  static constexpr size_t kTopSyscalls = 3;
  // r's syscalls summed, and the `n` with the most time inside (then the most calls, then
  // by name): the SYSCALLS table's row.
  struct SyscallSummary {
    SyscallStats total;
    std::vector<std::pair<std::string, SyscallStats>> top;
  };
  SyscallSummary TopSyscalls(const ThreadReport& r, size_t n) const;
  // Its top as the SYSCALLS table's TOP cell: "futex 4/2/1.915, read 9/0/0.040" (name
  // calls/blocks/ms), or "-" without syscalls.
  static std::string TopSyscallsText(const SyscallSummary& s);
};

// Whether a thread is part of the view: the recorded workload (or all threads with
// --all-threads), narrowed by -p/-t. Pictures (timeline, barscopes) use it too.
bool SelectsThread(const ViewOptions& options, const Thread& t);

// Throws cstool::Error (usage) for an unknown sort key.
ReportView BuildView(const ReportModel& model, const SyscallTable& syscalls,
                     const ViewOptions& options);

// Valid --sort keys, for help text and errors.
std::vector<std::string> SortKeys();

inline std::string PidText(const Thread& t) { return PidKnown(t) ? std::to_string(t.tgid) : "-"; }
// Pictures need a number to group a thread's track under: its process, or the thread
// itself when that is unknown. A track key, never shown as the thread's pid.
inline int32_t TrackPid(const Thread& t) { return PidKnown(t) ? t.tgid : t.tid; }

// "tid:comm" (with as_process, for a process's totals: "pid:comm", the tid when its
// process is not known), "tid" when the comm is not known, or the source's name.
inline std::string PartyText(const WaitParty& p, bool as_process = false) {
  if (!p.thread) return std::string(p.source);
  const Thread& t = *p.thread;
  std::string id = std::to_string(as_process && PidKnown(t) ? t.tgid : t.tid);
  return t.comm.empty() ? id : id + ":" + t.comm;
}

}  // namespace cstool
