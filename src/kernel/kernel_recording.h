// The ground-truth part of a recording (RecordingInfo::kernel_counters): the kernel's
// per-thread counters (kernel/kernel_counters.h) plus when the recorder sampled them.
//
// `cstool record` samples /proc twice while tracing is live: a start snapshot right after
// tracing began (threads that already existed: their counters at that instant) and an
// end snapshot right before tracing stops (threads still alive). Taskstats delivers the
// final counters of every thread that exits in between. A /proc record is a start
// sample when taken_at <= start_snapshot_end_ns and an end sample when taken_at >=
// end_snapshot_begin_ns; the report cuts its reconstruction at those same instants.
//
// JSON: KernelCounterSet::ToJson() plus {"start_snapshot": {"begin_ns","end_ns"},
// "end_snapshot": {...}, "taskstats": "...", "delay_accounting": "..."}.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "kernel/kernel_counters.h"

namespace cstool {

struct SnapshotPhase {
  int64_t begin_ns = -1;  // CLOCK_MONOTONIC before the first read; -1: not taken
  int64_t end_ns = -1;    // ... after the last read
  bool taken() const { return begin_ns >= 0; }
};

struct KernelRecording {
  KernelCounterSet counters;
  SnapshotPhase start_snapshot;
  SnapshotPhase end_snapshot;
  std::string taskstats;         // TaskstatsListener::status()
  std::string delay_accounting;  // DelayAccountingState name

  bool IsStartSample(const KernelTaskCounters& c) const;
  bool IsEndSample(const KernelTaskCounters& c) const;

  nlohmann::json ToJson() const;
  // null gives an empty recording; throws cstool::Error on a malformed value.
  static KernelRecording FromJson(const nlohmann::json& j);
};

}  // namespace cstool
