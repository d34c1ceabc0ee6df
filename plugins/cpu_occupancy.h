// Which thread ran on each CPU when, rebuilt from switch events, for the per-CPU
// pictures (timeline CPU tracks, the cpu barscope). A run starts at a switch-in and
// ends at the switch-out, a lost-events gap on that CPU, or the end of the trace.
// When the switch-in was not seen (the thread ran since before the trace, or after a
// gap), the run starts at the earliest time that is known to be safe and is marked
// `start_inferred`. With a pid filter, a switch between two unfollowed tasks is not
// recorded; a run that the next recorded switch on its CPU shows to be over ends
// there. Memory: one entry per thread and per CPU.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "core/thread.h"
#include "plugins/plugin.h"

namespace cstool {

struct CpuRun {
  int32_t cpu = 0;
  const Thread* thread = nullptr;
  int64_t start = 0;
  int64_t end = 0;
  bool start_inferred = false;
  const SwitchEvent* switch_out = nullptr;  // null when ended by lost events or trace end
};

class CpuOccupancy {
 public:
  using Sink = std::function<void(const CpuRun&)>;
  explicit CpuOccupancy(Sink sink) : sink_(std::move(sink)) {}

  void OnSwitch(const SwitchEvent& e);
  void OnLostEvents(int32_t cpu, int64_t ts);
  void OnTraceEnd(int64_t ts);

 private:
  static constexpr int64_t kNever = std::numeric_limits<int64_t>::min();
  struct OpenRun {
    int32_t cpu = -1;  // -1: not running (as far as switches tell)
    int64_t start = 0;
  };
  struct Cpu {
    const Thread* current = nullptr;  // switched in here by the latest in-order switch
    int64_t last_switch = kNever;
    int64_t lost_at = kNever;
  };
  Cpu& CpuAt(int32_t cpu);
  OpenRun& RunOf(const Thread& t);

  Sink sink_;
  std::vector<Cpu> cpus_;
  std::vector<OpenRun> runs_;               // by Thread::id
  std::vector<const Thread*> run_threads_;  // by Thread::id, for the trace end
};

}  // namespace cstool
