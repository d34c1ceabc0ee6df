// The recorder's ground-truth capture: for the duration of a recording, a
// taskstats exit listener (following the traced processes and their descendants, or
// every task with -a) and delay accounting switched on; /proc samples of the traced
// threads right after tracing starts and right before it stops. Finish() gives the JSON
// stored in RecordingInfo::kernel_counters (kernel/kernel_recording.h).
//
//   KernelCapture kc({.pids = targets});      // before any traced thread can exit
//   for (auto& w : kc.warnings()) print(w);   // once each
//   session.Start(); kc.SnapshotStart(targets);
//   ...
//   kc.SnapshotEnd(tgids); session.Stop();
//   ... reap the child ...
//   info.kernel_counters = kc.Finish();
//
// Never throws for kernel-side problems: missing taskstats or delay accounting become
// warnings and notes in the recording.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "kernel/delay_accounting.h"
#include "kernel/kernel_recording.h"
#include "kernel/taskstats_listener.h"

namespace cstool {

struct KernelCaptureOptions {
  std::vector<int32_t> pids;  // processes followed (with their descendants)
  bool accept_all = false;    // -a: every thread on the system
};

class KernelCapture {
 public:
  explicit KernelCapture(const KernelCaptureOptions& options);
  KernelCapture(const KernelCapture&) = delete;
  KernelCapture& operator=(const KernelCapture&) = delete;

  // One line each, for the user, about what will be missing.
  const std::vector<std::string>& warnings() const { return warnings_; }

  void AddPid(int32_t pid) { listener_.AddPid(pid); }
  // The thread dying threads wake once their exit record is taken (0: none).
  int32_t exit_listener_tid() const { return listener_.receiver_tid(); }
  // /proc samples of every thread of `pids` (every thread on the system with accept_all).
  void SnapshotStart(std::span<const int32_t> pids);
  void SnapshotEnd(std::span<const int32_t> pids);

  // Stops the listener (call after the traced command was reaped, so its exits are in),
  // restores delay accounting and returns the recording's kernel_counters JSON.
  nlohmann::json Finish();
  // After Finish: the records kept, exits included.
  const KernelCounterSet& counters() const { return recording_.counters; }

 private:
  void Snapshot(std::span<const int32_t> pids, SnapshotPhase* phase, const char* what);

  bool accept_all_;
  DelayAccountingGuard delay_;  // on before the listener starts, restored after it stops
  TaskstatsListener listener_;
  KernelRecording recording_;
  std::vector<std::string> warnings_;
  bool finished_ = false;
};

}  // namespace cstool
