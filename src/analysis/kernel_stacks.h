// record --stacks: pairs each sleep's kernel call chain with its cause and its blocked
// time, per thread (ThreadReport::blocked_stacks; the chains interned in
// ReportModel::stacks, symbolized later by the pipeline).
//
// The three facts of one sleep arrive in no fixed order: the chain right after the
// switch-out, the switch's OnSwitch (late when its cause was pending), the wakeup (it
// can come before the chain when another CPU wakes the thread within microseconds).
// Each sleep is keyed by its switch-out time and counted once it has its cause and the
// thread has been switched in again (or the trace ended).
#pragma once

#include <deque>
#include <map>
#include <vector>

#include "analysis/report_model.h"
#include "sched/observer.h"

namespace cstool {

class KernelStackObserver : public Observer {
 public:
  explicit KernelStackObserver(ReportModel& model) : model_(model) {}
  uint32_t Hooks() const override {
    return HookBit(Hook::kKernelStack) | HookBit(Hook::kSwitch) | HookBit(Hook::kWakeup) |
           HookBit(Hook::kTraceEnd);
  }
  void OnKernelStack(const KernelStackEvent& e) override;
  void OnSwitch(const SwitchEvent& e) override;
  void OnWakeup(const WakeupEvent& e) override;
  void OnTraceEnd(int64_t ts) override;
  // Sleeps not counted yet: waiting for their thread's switch-in or the trace's end.
  size_t open_sleeps() const {
    size_t n = 0;
    for (const PerThread& p : threads_) n += p.sleeps.size();
    return n;
  }

 private:
  struct Sleep {
    int64_t switch_ts = 0;
    int64_t wake_ts = -1;
    int64_t stack = -1;  // index into ReportModel::stacks
    uint32_t cause = 0;
    bool cause_known = false;
    bool switched_in = false;
  };
  struct PerThread {
    const Thread* thread = nullptr;
    std::deque<Sleep> sleeps;  // by switch_ts
  };
  PerThread& For(const Thread& t);
  Sleep& SleepAt(PerThread& p, int64_t switch_ts);
  // Counts the finished sleeps at the front (all of them when `all`).
  void Settle(PerThread& p, bool all, int64_t end_ts);

  ReportModel& model_;
  std::vector<PerThread> threads_;  // by Thread::id
  std::map<std::vector<uint64_t>, uint32_t> stack_ids_;
  std::vector<uint64_t> scratch_;
};

}  // namespace cstool
