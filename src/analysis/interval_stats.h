// Per-interval microstates and switch counts for live `cstool msa`: the driver cuts
// every thread's segments at each interval boundary (StateMachine::CutSegments), reads
// this observer's numbers, then calls Reset.
#pragma once

#include <unordered_map>
#include <utility>
#include <vector>

#include "model/microstate.h"
#include "model/switch_cause.h"
#include "sched/observer.h"

namespace cstool {

struct IntervalThreadStats {
  MicrostateTimes microstates{};
  uint64_t voluntary = 0;
  uint64_t involuntary = 0;
  uint64_t syscalls = 0;
  std::vector<std::pair<uint32_t, uint64_t>> causes;  // packed SwitchCause -> count

  int64_t Accounted() const {
    int64_t sum = 0;
    for (int64_t v : microstates) sum += v;
    return sum;
  }
};

class IntervalStatsObserver : public Observer {
 public:
  // Segments that end up reported late (a pending user/sys question answered in a
  // later interval) are clipped to the current interval so shares never pass 100%.
  uint32_t Hooks() const override {
    return HookBit(Hook::kStateSegment) | HookBit(Hook::kSwitch) | HookBit(Hook::kSyscall);
  }
  void Begin(int64_t interval_start) { start_ = interval_start; }
  void Reset(int64_t interval_start) {
    stats_.clear();
    start_ = interval_start;
  }

  void OnStateSegment(const Thread& t, Microstate s, int32_t /*cpu*/, int64_t start,
                      int64_t end) override {
    start = std::max(start, start_);
    if (end > start) stats_[t.id].microstates[static_cast<size_t>(s)] += end - start;
  }
  void OnSwitch(const SwitchEvent& e) override {
    if (!e.prev) return;
    IntervalThreadStats& st = stats_[e.prev->id];
    (e.voluntary ? st.voluntary : st.involuntary)++;
    uint32_t key = e.cause.Pack();
    for (auto& [k, n] : st.causes)
      if (k == key) {
        ++n;
        return;
      }
    st.causes.emplace_back(key, 1);
  }
  void OnSyscall(const SyscallInterval& s) override {
    if (s.completed) ++stats_[s.thread->id].syscalls;
  }

  const std::unordered_map<uint32_t, IntervalThreadStats>& stats() const { return stats_; }

 private:
  int64_t start_ = 0;
  std::unordered_map<uint32_t, IntervalThreadStats> stats_;
};

}  // namespace cstool
