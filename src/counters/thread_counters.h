// Per-thread counting for a set of threads that grows as they are discovered: one perf
// group per thread (counters/perf_group.h) plus the per-thread virtual counters. Each
// reading has one value per column: the perf events in -c order, then the per-thread
// virtual counters in -V order. Values are cumulative since the thread was followed
// (virtual counters too: /proc's values minus those read when following began).
//
//   ThreadCounters tc(events, virtuals);
//   tc.Follow(tgid, tid);                  // for every thread, as it is seen
//   for (auto& s : tc.ReadAll(now)) ...    // live threads, and the final values of
//                                          // the ones that exited (dropped after)
//   for (auto& s : tc.DrainSamples()) ...  // -c EVENT:ebs=N: the overflows since the
//                                          // last drain, exited threads' included
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "counters/counter_samples.h"  // CounterOverflow
#include "counters/event_list.h"
#include "counters/perf_group.h"
#include "counters/virtual_counters.h"

namespace cstool {

struct ThreadReading {
  int32_t tid = 0;
  int32_t tgid = 0;
  int64_t ts = 0;  // CLOCK_MONOTONIC when read (the trace clock "mono")
  std::vector<uint64_t> values;
  bool scaled = false;  // the perf values were multiplexed and scaled
  bool exited = false;  // final values: the thread had exited
};

class ThreadCounters {
 public:
  ThreadCounters(std::vector<CounterEvent> events, std::vector<VirtualCounter> virtuals);

  // Column names: the events, then the per-thread virtual counters.
  const std::vector<std::string>& names() const { return names_; }
  size_t perf_columns() const { return events_.size(); }

  // Starts counting `tid` now (no-op if followed already or once followed and gone).
  // False when the thread is gone. Throws cstool::Error when the kernel refuses an
  // event for another reason than the thread being gone.
  bool Follow(int32_t tgid, int32_t tid);
  bool Followed(int32_t tid) const { return seen_.count(tid) != 0; }
  size_t live() const { return threads_.size(); }

  // Every followed thread; the ones found exited give their final values and are no
  // longer followed.
  std::vector<ThreadReading> ReadAll(int64_t ts);
  // Only the threads that exited since the last read (their final values).
  std::vector<ThreadReading> ReadExited(int64_t ts);

  // -c EVENT:ebs=N: which column is sampled (nullopt: none) and its period.
  std::optional<size_t> sampled_column() const { return sampled_column_; }
  uint64_t sampling_period() const {
    return sampled_column_ ? events_[*sampled_column_].ebs_period : 0;
  }
  // The samples written since the last drain, per thread in time order (the rings of
  // threads dropped by a read were drained into it then).
  std::vector<CounterOverflow> DrainSamples();
  // Per thread ever followed with sampling: the ring's counts so far (lost samples,
  // throttling), as of the last drain or read.
  const std::map<int32_t, RingStats>& sampling_stats() const { return sampling_stats_; }
  // Stops every group (final readings and samples that hold still); for the end.
  void StopAll();

  // A thread released at its exit left no /proc entry for the final read: its "exit"
  // reading's virtual counters are those of its last read until the final counts (the
  // kernel's exit record, taskstats) are given here. False when the thread's exit
  // reading was final already (or there is none).
  bool IoUnreadAtExit(int32_t tid) const { return io_unread_at_exit_.count(tid) != 0; }
  // Rewrites the virtual columns of the exit reading `values` from the final counts
  // (which may be rounded down: the larger of them and the last read is kept).
  void SetFinalIo(int32_t tid, const ThreadIo& final, std::vector<uint64_t>& values) const;

 private:
  struct Counted {
    int32_t tgid = 0;
    std::optional<PerfGroup> group;
    ThreadIo base_io;  // when followed: the virtual counters count from there
    ThreadIo last_io;  // the last /proc read, kept for after the thread is gone
  };
  ThreadReading Read(int32_t tid, Counted& f, int64_t ts, bool* exited);
  // Moves a thread's samples into pending_samples_ and its ring's counts into
  // sampling_stats_.
  void DrainInto(int32_t tid, Counted& f);

  std::vector<CounterEvent> events_;
  std::vector<VirtualCounter> virtuals_;  // per-thread ones only
  std::vector<std::string> names_;
  std::map<int32_t, Counted> threads_;
  std::set<int32_t> seen_;  // every tid ever followed
  std::optional<size_t> sampled_column_;
  std::vector<CounterOverflow> pending_samples_;
  std::map<int32_t, RingStats> sampling_stats_;
  std::vector<GroupSample> drained_;               // reused between drains
  std::map<int32_t, ThreadIo> io_unread_at_exit_;  // tid -> base_io (IoUnreadAtExit)
};

}  // namespace cstool
