// `cstool msa PID`: live microstate accounting of a running process, prstat -m style.
//
// Data flow: a private tracefs instance follows the process's threads (and the tasks
// they create); every CPU's ring buffer is read without blocking (LiveCpuSource),
// records are merged by time and decoded into the same StateMachine `report` uses,
// with an IntervalStatsObserver per interval and one for the whole run.
//
// Ordering: buffers are polled every few ms, but an interval [start, end) is only
// processed once the clock has passed end + kCutMarginNs, and then only records with
// ts <= end are fed to the state machine; later ones stay queued for the next batch.
// Every CPU was drained after end + margin, so no record of any CPU with ts <= end can
// still arrive (the margin covers events reserved but not yet committed), and the
// merged stream stays in time order across batches.
//
// Exact kernel-counter window: at attach (and at the end of the last interval of -n)
// the threads' voluntary/nonvoluntary_ctxt_switches are read from /proc between
// CLOCK_MONOTONIC times t0 and t1 (the trace clock is mono too). The kernel increments
// the counter just before it emits sched_switch, so a switch traced before t0 is in
// the read values and one traced after t1 + kSwitchSlackNs is not. The snapshot is
// placed at W = t1 + slack: the intervals count exactly the switches with ts > W (attach)
// and ts <= W (end). A switch of the target inside [t0, W] would be ambiguous, so the
// read is repeated until a window holds none (or lost events), a few times at most;
// the snapshot says whether it is exact.
//
// Counters (-c/-V): one perf group per thread, opened for the threads at attach and for
// each thread the state machine starts tracking (new threads and forked processes) at
// the next wake-up of the loop; read when the loop wakes at an interval's end (before
// the cut margin), and the reading time is shown. A thread born and gone between two
// wake-ups is not counted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

#include "base/messages.h"

namespace cstool {

inline constexpr int64_t kCutMarginNs = 2000000;   // 2 ms
inline constexpr int64_t kSwitchSlackNs = 100000;  // 100 us

struct MsaOptions {
  int32_t pid = 0;
  double interval_s = 1.0;   // -T
  uint64_t count = 0;        // -n; 0 = until the process exits or a signal
  bool per_process = false;  // -A
  bool children = false;     // --children: also the process's existing descendants
  std::string format = "table";
  std::string output;  // -o: also save the raw trace (trace.dat v6)
  size_t buffer_kb = 4096;
  std::string counters;          // -c: perf events per thread (counters/event_list.h)
  std::string virtual_counters;  // -V: read-bytes, write-bytes, energy
};

// Throws cstool::Error (usage) for invalid options.
void ValidateMsaOptions(const MsaOptions& options);

// Runs until the process exits, `count` intervals were shown, or SIGINT/SIGTERM.
// `in_place`: refresh the table in place (stdout is a terminal). Returns the exit
// status; a process that does not exist is cstool::Error with exit status 2. Warnings
// and status lines (the trace saved, the process exited) go to `messages`.
int RunMsa(const MsaOptions& options, std::ostream& out, bool in_place, Messages& messages);

}  // namespace cstool
