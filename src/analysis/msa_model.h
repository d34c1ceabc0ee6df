// What `cstool msa` shows for one interval (or for the whole run): one row per thread
// or per process with the share of the row's accounted time in each microstate and
// the interval's switch and syscall counts. Built from IntervalStatsObserver numbers;
// renderers (output/msa_output.h) only read it.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/interval_stats.h"
#include "model/microstate.h"
#include "model/syscall_table.h"
#include "sched/thread.h"

namespace cstool {

struct MsaRow {
  int32_t pid = 0;
  int32_t tid = 0;       // 0 for a process row (-A)
  uint32_t threads = 1;  // threads summed into the row
  std::string comm;
  MicrostateTimes ns{};
  // Sum of `ns`: the time the state machine accounted to the row in the interval.
  // Normally the interval length (times the number of threads for a process row);
  // less for threads born or gone inside it, or while a state is still unresolved.
  int64_t accounted_ns = 0;
  // Percent of accounted_ns per microstate; they add up to 100 (0 everywhere when
  // accounted_ns is 0).
  std::array<double, kMicrostateCount> shares{};
  uint64_t voluntary = 0;
  uint64_t involuntary = 0;
  uint64_t syscalls = 0;                                 // completed in the interval
  std::vector<std::pair<std::string, uint64_t>> causes;  // largest count first
  // -c/-V: the row's counts in the interval, one per MsaFrame::counter_names (empty
  // when the thread was not counted); scaled: multiplexed, the values are estimates.
  std::vector<uint64_t> counters;
  bool counters_scaled = false;

  // The most frequent switch cause, or "-" when there was no switch.
  std::string TopCause() const { return causes.empty() ? "-" : causes.front().first; }
};

// The kernel's own switch counters of the target's threads at one point of the trace
// timeline (see commands/msa_command.h for how that point is made exact).
struct KernelSwitchSnapshot {
  struct Counts {
    int32_t tid = 0;
    uint64_t nvcsw = 0;
    uint64_t nivcsw = 0;
  };
  int64_t ts = 0;      // CLOCK_MONOTONIC = trace time the counters hold for
  bool exact = false;  // no switch of the target happened while they were read
  std::vector<Counts> threads;
};

// -c EVENT:ebs=N: one overflow of the sampling event on a counted thread (PMCTrack's EBS
// row: nsample, pid, event, the counters' values).
struct MsaSample {
  uint64_t n = 0;  // 1-based, over the whole run
  int32_t pid = 0;
  int32_t tid = 0;
  int64_t ts = 0;  // trace time (CLOCK_MONOTONIC)
  uint32_t cpu = 0;
  uint64_t ip = 0;
  // The perf columns (the first values.size() of MsaFrame::counter_names) at the
  // overflow, cumulative since msa began counting the thread.
  std::vector<uint64_t> values;
  bool scaled = false;
};

struct MsaFrame {
  enum class Kind { kInterval, kTotal };
  Kind kind = Kind::kInterval;
  int32_t pid = 0;
  std::string comm;
  uint64_t index = 0;    // 1-based interval number (total: intervals shown)
  int64_t start_ns = 0;  // trace time (CLOCK_MONOTONIC)
  int64_t end_ns = 0;
  int64_t wall_offset_ns = 0;  // CLOCK_REALTIME - CLOCK_MONOTONIC, for clock times
  bool per_process = false;    // -A
  std::vector<MsaRow> rows;
  uint64_t lost_events = 0;  // ring-buffer losses seen in the frame
  std::optional<KernelSwitchSnapshot> kernel_attach;
  std::optional<KernelSwitchSnapshot> kernel_end;
  std::string end_reason;  // total: "exited", "signal", "count"
  // -c/-V: the counter columns of the rows, and when they were read (the interval's
  // cut, up to the cut margin after end_ns).
  std::vector<std::string> counter_names;
  int64_t counters_ts = 0;
  std::optional<uint64_t> energy_uj;  // -V energy: the package energy in the frame
  // -c EVENT:ebs=N (period 0: no sampling): the overflows in the frame (the total: those
  // after the last interval shown), time order; in the whole frame, how many samples
  // there were, how many the kernel dropped (ring buffer full) and how often it
  // throttled the event.
  std::string ebs_event;
  uint64_t ebs_period = 0;
  std::vector<MsaSample> samples;
  uint64_t ebs_samples = 0;
  uint64_t ebs_lost = 0;
  uint64_t ebs_throttles = 0;
};

// Fills row.shares from row.ns.
void ComputeShares(MsaRow& row);

// One row per tracked thread that has accounted time, switches or syscalls in `stats`
// (keyed by Thread::id into `threads`), sorted by pid then tid.
std::vector<MsaRow> BuildThreadRows(const std::unordered_map<uint32_t, IntervalThreadStats>& stats,
                                    const std::deque<Thread>& threads,
                                    const SyscallTable& syscalls);

// Sums thread rows into one row per process (pid order); comm is the process
// leader's when it has a row, else the first thread's.
std::vector<MsaRow> AggregateByProcess(const std::vector<MsaRow>& thread_rows);

}  // namespace cstool
