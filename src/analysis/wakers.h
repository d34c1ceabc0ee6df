// Who made each thread wait: the waker that ended each of its sleeps ("woken by"), and
// what ran on the CPU it was queued on while it was runnable ("waited behind"; for the
// threads the recording follows, whose switch-ins the trace shows).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/report_model.h"
#include "sched/observer.h"

namespace cstool {

// The waker a wakeup names: its thread, else the interrupt it ran in, else the idle
// task when the CPU was known to be idle, else unknown (lost events, the CPU's first
// events).
WaitParty WakerOf(const WakeupEvent& w);

class WakerObserver : public Observer {
 public:
  explicit WakerObserver(ReportModel& model) : model_(model) {}
  uint32_t Hooks() const override {
    return HookBit(Hook::kWakeup) | HookBit(Hook::kCpuCurrent) | HookBit(Hook::kMigrate) |
           HookBit(Hook::kLostEvents) | HookBit(Hook::kTraceEnd) | HookBit(Hook::kUnfollowedRun);
  }
  void OnWakeup(const WakeupEvent& w) override;
  void OnCpuCurrent(const CpuCurrentEvent& e) override;
  void OnMigrate(const Thread& t, int32_t from_cpu, int32_t to_cpu, int64_t ts) override;
  void OnLostEvents(int32_t cpu, int64_t ts, int64_t count) override;
  void OnUnfollowedRun(const Thread& t, int32_t cpu, int64_t from, int64_t to) override;
  void OnTraceEnd(int64_t ts) override;

 private:
  // A runnable thread, queued on `cpu` since `since`, whose wait is accounted up to `mark`.
  struct Waiter {
    const Thread* thread;
    int32_t cpu;
    int64_t mark;
    int64_t since;
  };
  struct CpuView {
    const Thread* current = nullptr;
    bool known = false;
    int64_t run_end = -1;  // where `current`'s own last increment ended (-1: none)
    int64_t sign_ts = -1;  // the latest sign of what ran there
  };
  CpuView& Cpu(int32_t cpu) {
    if (static_cast<size_t>(cpu) >= cpus_.size()) [[unlikely]]
      GrowCpus(cpu);
    return cpus_[cpu];
  }
  [[gnu::noinline]] void GrowCpus(int32_t cpu);
  // At `ts` the trace shows `t` running on `cpu` with no switch to it (OnCpuCurrent).
  void Sign(int32_t cpu, int64_t ts, const Thread* t) {
    OnCpuCurrent({.ts = ts, .cpu = cpu, .current = t, .known = true});
  }
  void AddWaiter(const Thread* t, int32_t cpu, int64_t ts);
  void RemoveWaiter(const Thread* t);
  // Adds the waiter's time since its mark to whatever runs on its CPU, up to `ts`.
  void Flush(Waiter& w, int64_t ts);

  ReportModel& model_;
  std::vector<Waiter> waiters_;  // few at a time: the runnable, not running, threads
  std::vector<CpuView> cpus_;
};

}  // namespace cstool
