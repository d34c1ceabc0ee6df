// What `cstool record` knows about a recording beyond the ring-buffer pages: the
// target, per-CPU loss accounting, thread identities and (later) the kernel's own
// counters. It travels inside the trace.dat file (see trace_file_writer.h) as JSON.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cstool {

struct CpuRecordStats {
  int32_t cpu = 0;
  uint64_t events = 0;       // records written for this CPU
  uint64_t pages = 0;        // ring-buffer pages written
  uint64_t bytes = 0;        // bytes of event data in those pages
  uint64_t lost_events = 0;  // sum of counts the ring buffer reported as missed
  uint64_t lost_pages = 0;   // pages flagged "events missed before this page"
  uint64_t overrun = 0;      // per_cpu/cpuN/stats "overrun" at stop
  uint64_t dropped = 0;      // per_cpu/cpuN/stats "dropped events" at stop
  // The time of the first page read but not written (--max-size reached, the disk
  // full): this CPU's events from then on are not in the file. 0: all were written.
  int64_t unwritten_from_ts = 0;
};

// kthreadd, the parent of every kernel thread: its pid in the initial namespace, which
// the trace's and /proc's pids are of.
inline constexpr int32_t kKthreaddTid = 2;

struct ThreadIdentity {
  int32_t tid = 0;
  int32_t tgid = 0;
  std::string comm;
  int32_t ppid = 0;            // the process's parent as /proc showed it; 0 when not read
  bool kernel_thread = false;  // PF_KTHREAD in /proc's flags
};

// The kernel's own switch counters for the `-- CMD` child process: a baseline read
// from /proc while the child was blocked waiting to be released (its switch-out is
// already counted there), and wait4()'s rusage when it was reaped. exit - baseline is
// what the trace window saw, up to the one uncounted final switch of each exited
// non-leader thread.
struct ChildCounters {
  int32_t pid = 0;
  bool reaped = false;
  int32_t wait_status = 0;
  uint64_t baseline_nvcsw = 0;
  uint64_t baseline_nivcsw = 0;
  uint64_t exit_nvcsw = 0;   // ru_nvcsw from wait4 (all threads of the process)
  uint64_t exit_nivcsw = 0;  // ru_nivcsw from wait4
  int64_t utime_ns = 0;
  int64_t stime_ns = 0;
};

// A thread of a -p process as /proc showed it just before tracing began: the report
// starts it in that state (asleep in its syscall, stopped, ...) rather than unknown, so
// a process that stays asleep still has its rows.
struct AttachSeed {
  int32_t tid = 0;
  int32_t tgid = 0;
  std::string comm;
  std::string state;     // the /proc state letter ("S", "D", "R", ...)
  int64_t syscall = -2;  // blocked in this syscall; -1 outside one; -2 running or unknown
  int32_t cpu = -1;
  bool kernel_thread = false;  // kthreadd or its child: never in a syscall
};

// Steal time of one CPU while tracing was live (RecordingInfo::steal_source, see
// kernel/cpu_steal.h): time its virtual CPU had work while the hypervisor ran something else.
struct CpuSteal {
  int32_t cpu = 0;
  int64_t start_ns = 0;  // the CPU's steal counter when tracing went live
  int64_t end_ns = 0;    // and when it stopped
  // 0 for values no reading gives (a damaged file): negative, or going back.
  int64_t Stolen() const { return start_ns >= 0 && end_ns >= start_ns ? end_ns - start_ns : 0; }
};

// CPU bandwidth throttling of one cgroup with a quota while tracing was live (its cpu.stat,
// see kernel/cpu_throttling.h): its threads were held off the CPUs, runnable.
struct CgroupThrottling {
  int version = 2;       // cgroup v1 (the cpu controller's hierarchy) or v2
  std::string cgroup;    // its path in the hierarchy
  int64_t quota_ns = 0;  // CPU time per period
  int64_t period_ns = 0;
  uint64_t periods = 0;      // periods in which it ran
  uint64_t throttled = 0;    // periods that used the quota up
  int64_t throttled_ns = 0;  // summed over its CPUs' runqueues
  // After tracing went live, when a cgroup first seen later (or given its quota later)
  // was first read: its counts are from then on. 0: from the start.
  int64_t since_ns = 0;
  // The recorded processes the recorder saw in it, or in a cgroup below it (0.5 s scans).
  std::vector<int32_t> pids;
};

struct RecordingInfo {
  std::string tool_version;
  std::vector<std::string> command;  // argv of `-- CMD`, empty otherwise
  std::vector<int32_t> target_pids;  // processes followed (the child, or -p PIDs)
  bool system_wide = false;          // -a
  std::string trace_clock;           // e.g. "mono"
  int64_t start_ts = 0;              // trace-clock time tracing went live
  int64_t end_ts = 0;                // trace-clock time tracing stopped
  std::vector<CpuRecordStats> cpus;
  std::vector<ThreadIdentity> threads;  // tid -> tgid for threads known to the recorder
  // -a: the recorder's own threads, kept out of event tracing (set_event_notrace_pid, as
  // trace-cmd does); only other threads' switches and wakeups show them.
  std::vector<int32_t> untraced_tids;
  // The recorder's own threads otherwise: traced but not the report's (cstool irq: an
  // interrupt on its CPU counts), or not followed (a pid filter), where the workload's
  // switches to them are what recording cost it.
  std::vector<int32_t> recorder_tids;
  // -C: the online CPUs left out. A thread's switches and time there are not in the trace.
  std::vector<int32_t> untraced_cpus;
  std::vector<std::string> missing_events;  // default events this kernel lacks
  ChildCounters child;                      // pid 0 when there was no `-- CMD`
  std::vector<AttachSeed> attach_seeds;     // -p: the targets' threads before tracing
  int64_t attach_seed_ts = 0;               // trace-clock time after they were read
  nlohmann::json kernel_counters;  // the kernel's own per-thread counters, null when absent
  // record -c/-V: per-thread counter samples (counters/counter_samples.h), null when absent.
  nlohmann::json perf_counters;
  // Assembled by `record --recover` from what a killed recording left: no end, no loss
  // statistics, no kernel counters; the pages read before the kill.
  bool recovered = false;
  // A flight recorder's dump (`record --flight`): the kept window begins here (what came
  // before was given up by design, not lost), `trigger` says what asked for it and
  // `trigger_ts` when: the window holds --flight's seconds before that, and what came
  // after it until the dump was taken (0 in dumps of older versions: their end).
  int64_t window_start_ts = 0;
  std::string trigger;
  int64_t trigger_ts = 0;
  // A dump's target threads as /proc showed them just before the window was taken: any
  // change of state after that read is an event in the window, so one with no event in
  // it was in that state for the whole window (a thread blocked throughout has a row).
  std::vector<AttachSeed> window_seeds;
  // Why the recording stopped before its command ended ("the disk was full", "--max-size
  // reached"), empty otherwise; the trace ends at end_ts.
  std::string ended_early;
  // Per CPU, empty when not read (older files, recovered recordings, flight dumps); in
  // steps of `steal_step_ns`: 1 from the runqueue clocks, one USER_HZ tick from /proc/stat
  // (`steal_source`; older files: empty, /proc/stat).
  std::vector<CpuSteal> steal;
  int64_t steal_step_ns = 0;
  std::string steal_source;
  // The address of sched_ttwu_pending when `record` traced its wakelist flushes
  // (csd:csd_function_entry): in the trace with -a, in the unfiltered run-time buffer
  // otherwise. 0: not traced.
  uint64_t wakelist_function = 0;
  // The recorder's thread that receives taskstats exit records: a dying thread wakes it
  // right after the kernel took its record (0: none, or an older file).
  int32_t exit_listener_tid = 0;
  // Whether the unfiltered run-time buffer has the moves (sched_migrate_task) done in the
  // contexts the trace leaves out; without them a pid-filtered trace misses those moves.
  bool unfiltered_migrations = false;
  // The cgroups throttled while tracing was live; empty when none was (or older files).
  std::vector<CgroupThrottling> throttling;

  // Whether the steal figures are exact (the runqueue clocks) rather than in ticks.
  bool StealToTheNs() const { return steal_step_ns == 1; }

  int64_t TotalStolenNs() const {
    int64_t n = 0;
    for (const CpuSteal& c : steal) n = c.Stolen() > INT64_MAX - n ? INT64_MAX : n + c.Stolen();
    return n;
  }

  // In overwrite mode one overwritten event shows both in the page headers
  // (lost_events) and in the stop-time `overrun`; dropped events only in the stats.
  uint64_t TotalLostEvents() const {
    uint64_t n = 0;
    for (const auto& c : cpus) n += LostEvents(c);
    return n;
  }
  static uint64_t LostEvents(const CpuRecordStats& c) {
    return std::max(c.lost_events, c.overrun) + c.dropped;
  }
  // The recorder's own threads, traced or not: never a report's.
  std::vector<int32_t> RecorderThreads() const {
    std::vector<int32_t> all = untraced_tids;
    all.insert(all.end(), recorder_tids.begin(), recorder_tids.end());
    return all;
  }
  // Up to when every CPU's events are in the file: the first page a CPU read but could
  // not write (CpuRecordStats::unwritten_from_ts). 0: all were written.
  int64_t CompleteUntilTs() const {
    int64_t until = 0;
    for (const auto& c : cpus)
      if (c.unwritten_from_ts > 0 && (until == 0 || c.unwritten_from_ts < until))
        until = c.unwritten_from_ts;
    return until;
  }
};

// Field by field under the member's name; a key missing from an older file keeps the
// member's default.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CpuRecordStats, cpu, events, pages, bytes,
                                                lost_events, lost_pages, overrun, dropped,
                                                unwritten_from_ts)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ThreadIdentity, tid, tgid, comm, ppid,
                                                kernel_thread)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(AttachSeed, tid, tgid, comm, state, syscall, cpu,
                                                kernel_thread)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ChildCounters, pid, reaped, wait_status,
                                                baseline_nvcsw, baseline_nivcsw, exit_nvcsw,
                                                exit_nivcsw, utime_ns, stime_ns)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CpuSteal, cpu, start_ns, end_ns)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CgroupThrottling, version, cgroup, quota_ns,
                                                period_ns, periods, throttled, throttled_ns,
                                                since_ns, pids)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
    RecordingInfo, tool_version, command, target_pids, system_wide, trace_clock, start_ts, end_ts,
    cpus, threads, untraced_tids, recorder_tids, missing_events, child, attach_seeds,
    attach_seed_ts, kernel_counters, perf_counters, recovered, window_start_ts, trigger, trigger_ts,
    window_seeds, ended_early, steal, steal_step_ns, steal_source, wakelist_function, untraced_cpus,
    unfiltered_migrations, exit_listener_tid, throttling)

}  // namespace cstool
