// What a report says, independent of how it is rendered: observers fill it from the
// state machine's callbacks; output/ renders it as table, JSON or CSV.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/counter_window.h"
#include "base/saturating_add.h"
#include "model/microstate.h"
#include "model/recording_info.h"
#include "model/switch_cause.h"
#include "sched/thread.h"

namespace cstool {

struct SyscallStats {
  uint64_t calls = 0;    // sys_enter seen in the trace
  uint64_t blocked = 0;  // voluntary switches inside it
  int64_t time_ns = 0;   // time inside it within the trace window

  // A process's or a diff side's total is the sum of its threads'.
  SyscallStats& operator+=(const SyscallStats& o) {
    calls += o.calls;
    blocked += o.blocked;
    time_ns = SaturatingAdd(time_ns, o.time_ns);
    return *this;
  }
};

struct IrqStats {
  uint64_t count = 0;
  int64_t time_ns = 0;

  IrqStats& operator+=(const IrqStats& o) {
    count += o.count;
    time_ns = SaturatingAdd(time_ns, o.time_ns);
    return *this;
  }
};

// record --stacks: one distinct kernel call chain of a sleep (ReportModel::stacks).
struct KernelStackInfo {
  std::vector<uint64_t> addrs;      // innermost first, as recorded
  std::vector<std::string> frames;  // symbolized with the file's kallsyms ("fn+0x1f")
  std::string site;                 // the blocking function (analysis/blocking_site.h)
};

// The sleeps of one thread with the same cause and kernel call chain: how many, and
// the time from each switch-out to its wakeup (to its switch-in when no wakeup was seen).
struct BlockedStackStats {
  uint32_t cause = 0;  // packed SwitchCause
  uint32_t stack = 0;  // index into ReportModel::stacks
  uint64_t count = 0;
  int64_t blocked_ns = 0;
};

// Who a thread's time is owed to: another thread, or a named source that is no thread
// ("irq:24 virtio0", "softirq:TIMER", "idle", "unknown").
struct WaitParty {
  const Thread* thread = nullptr;
  std::string_view source;  // when thread is null; static or interned for the analysis
  bool operator==(const WaitParty&) const = default;
};
inline constexpr std::string_view kPartyIdle = "idle";
inline constexpr std::string_view kPartyUnknown = "unknown";

// The sleeps a waker ended: how many, and the blocked time they had lasted.
struct WokenBy {
  WaitParty waker;
  uint64_t wakeups = 0;
  int64_t blocked_ns = 0;
};

// Time runnable while `running` held the CPU the thread was queued on.
struct WaitedBehind {
  WaitParty running;
  int64_t time_ns = 0;
};

struct ThreadReport {
  const Thread* thread = nullptr;
  MicrostateTimes microstates{};
  uint64_t voluntary = 0;
  uint64_t involuntary = 0;
  // Switches at or after sched_process_exit (included above). The kernel stops counting
  // a non-leader thread's switches once it is released, part way through its exit.
  uint64_t voluntary_after_exit = 0;
  uint64_t involuntary_after_exit = 0;
  // Involuntary switches to the recording cstool's own threads (included above): what
  // recording the thread cost it.
  uint64_t involuntary_to_recorder = 0;
  std::vector<std::pair<uint32_t, uint64_t>> causes;  // packed SwitchCause -> count
  std::array<uint64_t, kPreemptedAtCount> preempted_at{};
  std::unordered_map<int64_t, SyscallStats> syscalls;
  std::unordered_map<const std::string*, IrqStats> irqs;
  uint64_t wakeups = 0;  // times it was woken
  uint64_t migrations = 0;
  std::map<std::pair<int32_t, int32_t>, uint64_t> migration_pairs;  // (from, to) CPU -> count
  // Of the wait_cpu_wakeup and wait_cpu_preempted time, what was spent queued on a CPU
  // the thread was then migrated away from (perf sched timehist -P's pre-migration time).
  int64_t wait_before_migration_wakeup_ns = 0;
  int64_t wait_before_migration_preempted_ns = 0;
  std::vector<WokenBy> woken_by;
  std::vector<WaitedBehind> waited_behind;
  // Its waits for a CPU as traced, each from the wakeup (or preemption) to the switch-in,
  // as perf sched latency measures them: how many ended, and the longest (with its start;
  // -1 with none). A thread lost events may have touched has none after the loss.
  uint64_t waits_ended = 0;
  int64_t longest_wait_ns = 0;
  int64_t longest_wait_from = -1;
  Thread::SwitchPlacement placement;  // kernel switch instants vs the traced ones
  nlohmann::json kernel;              // the kernel's own counters, when recorded
  CounterWindow counter_window;       // the reconstruction cut where the kernel was sampled
  std::vector<BlockedStackStats> blocked_stacks;  // record --stacks

  int64_t Lifetime() const { return thread->end_ts - thread->first_ts; }
  // Runnable and waiting for a CPU, after a wakeup or a preemption.
  int64_t WaitCpuNs() const {
    return SaturatingAdd(microstates[static_cast<size_t>(Microstate::kWaitCpuWakeup)],
                         microstates[static_cast<size_t>(Microstate::kWaitCpuPreempted)]);
  }
  void CountCause(SwitchCause c) {
    uint32_t key = c.Pack();
    for (auto& [k, n] : causes)
      if (k == key) {
        ++n;
        return;
      }
    causes.emplace_back(key, 1);
  }
  void AddWokenBy(const WaitParty& waker, uint64_t wakeups, int64_t blocked_ns) {
    for (WokenBy& w : woken_by)
      if (w.waker == waker) {
        w.wakeups += wakeups;
        w.blocked_ns += blocked_ns;
        return;
      }
    woken_by.push_back({waker, wakeups, blocked_ns});
  }
  void NoteWaitEnded(int64_t from, int64_t ns) {
    ++waits_ended;
    if (ns > longest_wait_ns || waits_ended == 1) {  // (the first names when, if 0 ns long)
      longest_wait_ns = ns;
      longest_wait_from = from;
    }
  }
  void AddWaitedBehind(const WaitParty& running, int64_t ns) {
    for (WaitedBehind& w : waited_behind)
      if (w.running == running) {
        w.time_ns += ns;
        return;
      }
    waited_behind.push_back({running, ns});
  }
};

struct TraceSummary {
  std::string file;
  uint64_t events = 0;
  int32_t cpus = 0;
  int64_t first_ts = 0;
  int64_t last_ts = 0;
  std::string trace_clock;                  // as the file names it ("mono", "local"); "": unknown
  std::map<int32_t, uint64_t> lost_events;  // per CPU (always listed, even 0)
  // Whether they are a lower bound: gaps whose size the kernel did not record (a killed
  // recording's last pages) count as one event each, and no count of the kernel's at the
  // end covers them (LostEventsPerCpu).
  bool lost_at_least = false;
  // report --salvage: CPUs none of whose data could be read; lost_events counts each as a
  // gap of unknown size (1), as ANOMALIES does.
  std::vector<int32_t> unread_cpus;
  bool CpuUnread(int32_t cpu) const {
    return std::find(unread_cpus.begin(), unread_cpus.end(), cpu) != unread_cpus.end();
  }
  // The events lost on the CPUs that were read (an unread CPU's are unknown).
  uint64_t LostOnReadCpus() const {
    uint64_t n = 0;
    for (auto [cpu, lost] : lost_events)
      if (!CpuUnread(cpu)) n += lost;
    return n;
  }
  std::map<std::string, uint64_t> anomalies;
  std::vector<std::string> anomaly_details;  // with --explain-anomalies: "ts cpu tid name"
  std::vector<std::string> missing_events;   // default events the file lacks
  std::vector<std::string> notes;            // how missing events changed the analysis
  std::vector<std::string> damage;           // report --salvage: what of a damaged file was skipped
  bool has_recording_info = false;
  RecordingInfo recording;
  // The unfiltered run-time buffer beside the trace (tracefile::kUnfilteredRuntimeBuffer):
  // whether the file has one, its increments done in another task's context than the
  // accounted one's, what its ring buffer lost, the increments of followed threads only it
  // had, and whether with it every increment was in the file to the end (steal inside a
  // run known: TraceCapabilities::all_increments).
  struct UnfilteredRuntime {
    bool present = false;
    uint64_t other_context_increments = 0;
    uint64_t lost_events = 0;
    uint64_t increments_used = 0;
    bool all_increments = false;
    uint64_t migrations_used = 0;  // moves of followed threads only it had
  } unfiltered_runtime;
  // The wakelist flushes `record` traced (RecordingInfo::wakelist_function), and the
  // enqueues dated at their sched_wakeup that one of them bounded.
  struct WakelistFlushes {
    bool traced = false;
    uint64_t flushes = 0;
    uint64_t enqueues_after_flush = 0;
  } wakelist_flushes;
  // Threads the file did not name as the kernel's that the analysis took for kernel
  // threads (never in a syscall or in user mode, two or more traced sleeps).
  uint64_t inferred_kernel_threads = 0;
};

struct ReportModel {
  TraceSummary trace;
  // Owns the names ThreadReport::irqs is keyed by (set nodes never move).
  std::set<std::string, std::less<>> irq_names;
  std::vector<ThreadReport> threads;  // indexed by Thread::id
  // ThreadReport::counter_window was filled (AnalyzeOptions::counter_windows).
  bool has_kernel_windows = false;
  // The file can hold kernel stacks (its formats have ftrace:kernel_stack); after the
  // analysis: it held stacks of sleeps (record --stacks), and blocking sites are shown.
  bool has_stacks = false;
  std::vector<KernelStackInfo> stacks;
  // With the kernel windows: how long after the enqueue's clock sched_wakeup is written,
  // learnt from the wakeups with no run delay (CounterWindowObserver fills it).
  EnqueueLag enqueue_lag;

  ThreadReport& For(const Thread& t) {
    if (t.id >= threads.size()) [[unlikely]]
      Grow(t.id);
    ThreadReport& r = threads[t.id];
    r.thread = &t;
    return r;
  }
  // The first growth reserves room for kThreadsReserved reports (about 4 MiB of address space,
  // whose pages are first touched as reports are added): below that the vector never
  // moves. Doubling from small moved every report at each step and touched twice the
  // final size (a 64-CPU trace of 1 810 threads: 400 page faults, 5 ms on a VM); a deque
  // would not move either, but its indexing at every observer call cost 2 % more
  // instructions in a report.
  static constexpr size_t kThreadsReserved = 4096;
  [[gnu::noinline]] void Grow(uint32_t id) {
    if (threads.capacity() < kThreadsReserved) threads.reserve(kThreadsReserved);
    threads.resize(id + 1);
  }
};

}  // namespace cstool
