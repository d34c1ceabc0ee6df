#include "kernel/kernel_capture.h"

#include <fmt/core.h>

#include "kernel/proc_task_counters.h"

namespace cstool {

KernelCapture::KernelCapture(const KernelCaptureOptions& options)
    : accept_all_(options.accept_all),
      listener_(TaskstatsListenerOptions{
          .accept_all = options.accept_all, .pids = options.pids, .follow_children = true}) {
  if (!delay_.active()) warnings_.push_back(delay_.message());
  if (!listener_.available())
    warnings_.push_back(
        fmt::format("kernel counters: taskstats {}; threads that exit will have no kernel counters",
                    listener_.status()));
  recording_.taskstats = listener_.status();
  recording_.delay_accounting = DelayAccountingStateName(delay_.state());
}

void KernelCapture::Snapshot(std::span<const int32_t> pids, SnapshotPhase* phase,
                             const char* what) {
  phase->begin_ns = MonotonicNowNs();
  ProcSnapshot snap = accept_all_ ? SnapshotAllProcTasks() : SnapshotProcTasks(pids);
  phase->end_ns = MonotonicNowNs();
  recording_.counters.AddAll(snap.tasks);
  recording_.counters.AddCounter(fmt::format("{}_snapshot_threads", what), snap.tasks.size());
  recording_.counters.AddCounter(fmt::format("{}_snapshot_vanished", what), snap.vanished_threads);
  for (size_t i = 0; i < snap.errors.size() && i < 3; ++i)
    recording_.counters.AddNote(fmt::format("{} snapshot: {}", what, snap.errors[i]));
}

void KernelCapture::SnapshotStart(std::span<const int32_t> pids) {
  Snapshot(pids, &recording_.start_snapshot, "start");
}

void KernelCapture::SnapshotEnd(std::span<const int32_t> pids) {
  Snapshot(pids, &recording_.end_snapshot, "end");
}

nlohmann::json KernelCapture::Finish() {
  if (!finished_) {
    finished_ = true;
    listener_.Stop();
    listener_.ExportTo(&recording_.counters);
    if (!delay_.active())
      recording_.counters.AddNote(delay_.message());
    else if (!delay_.Restore())
      warnings_.push_back(delay_.message());
  }
  return recording_.ToJson();
}

}  // namespace cstool
