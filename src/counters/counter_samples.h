// The counter readings a recording stores (`record -c`): per thread, one sample when
// counting began, one every -T interval, and the final one when the thread exited or
// the recording ended. They travel in the trace.dat file inside cstool's recording
// info (model/recording_info.h, key "perf_counters"), so trace-cmd still reads the
// file. Timestamps are CLOCK_MONOTONIC, the trace clock "mono": the samples sit on the
// trace timeline.
//
// `-c EVENT:ebs=N` adds the overflows of the sampling event: one per N events of a
// thread, each with the perf columns' values at that moment (cumulative since the
// thread's "start" sample), on the same clock; and per thread how many the ring buffer
// delivered, lost and how often the kernel throttled the event.
//
// JSON: {"version": 1, "names": [...], "perf_columns": N, "interval_ns": T,
//        "samples": [{"tid","tgid","ts","kind","values","scaled"}, ...], "notes": [...],
//        "sampling": {"event", "period", "threads": [{"tid","tgid","samples","lost",
//                     "throttles","unthrottles"}, ...]},
//        "overflows": [{"tid","tgid","ts","cpu","ip","values","scaled"}, ...]}
// (files without "sampling"/"overflows", from before sampling existed, read as none).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cstool {

struct CounterSample {
  int32_t tid = 0;
  int32_t tgid = 0;
  int64_t ts = 0;
  std::string kind;  // "start", "interval", "exit", "end"
  std::vector<uint64_t> values;
  bool scaled = false;
};

// One overflow of the sampling event on a followed thread: the perf columns' values at
// that moment (cumulative since the thread was followed, like the samples').
struct CounterOverflow {
  int32_t tid = 0;
  int32_t tgid = 0;
  int64_t ts = 0;
  uint32_t cpu = 0;
  uint64_t ip = 0;
  std::vector<uint64_t> values;
  bool scaled = false;
};

struct SamplingThreadStats {
  int32_t tid = 0;
  int32_t tgid = 0;
  uint64_t samples = 0;      // delivered (the overflows stored)
  uint64_t lost = 0;         // dropped by the kernel: the ring buffer was full
  uint64_t throttles = 0;    // times the kernel throttled the event
  uint64_t unthrottles = 0;  // ... and let it run again
};

struct CounterSampling {
  std::string event;    // the sampled event (one of `names`); empty = no sampling
  uint64_t period = 0;  // a sample every `period` events
  std::vector<SamplingThreadStats> threads;
};

struct CounterRecording {
  int version = 1;
  std::vector<std::string> names;  // columns: perf events, then virtual counters
  size_t perf_columns = 0;         // how many of `names` are perf events
  int64_t interval_ns = 0;         // -T; 0 = start and end only
  std::vector<CounterSample> samples;
  std::vector<std::string> notes;
  CounterSampling sampling;
  std::vector<CounterOverflow> overflows;  // in time order
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CounterSample, tid, tgid, ts, kind, values, scaled)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CounterOverflow, tid, tgid, ts, cpu, ip, values,
                                                scaled)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SamplingThreadStats, tid, tgid, samples, lost,
                                                throttles, unthrottles)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CounterSampling, event, period, threads)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(CounterRecording, version, names, perf_columns,
                                                interval_ns, samples, notes, sampling, overflows)

// One thread's counts over the recording: its last sample minus its first.
struct CounterTotals {
  int32_t tid = 0;
  int32_t tgid = 0;
  int64_t first_ts = 0;
  int64_t last_ts = 0;
  std::vector<uint64_t> values;
  bool scaled = false;  // some sample was scaled
  bool exited = false;  // the last sample is the thread's exit
  size_t samples = 0;
  // Per second of [first_ts, last_ts]; 0 when the span is empty.
  double Rate(size_t column) const;
};

// Per thread (tid order); a thread with a single sample has zero counts. Throws
// cstool::Error when a sample's values do not match the names, or an overflow's do not
// match the perf columns.
std::vector<CounterTotals> TotalsByThread(const CounterRecording& recording);
// Sums of `threads` per process (tgid order): counts add up, the span is the union.
std::vector<CounterTotals> SumByProcess(const std::vector<CounterTotals>& threads);

}  // namespace cstool
