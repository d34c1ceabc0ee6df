#pragma once

#include "analysis/report_model.h"
#include "sched/observer.h"

namespace cstool {

// Each thread's microstate times (summed by the state machine, Thread::times), wakeups
// and migrations.
class MicrostateObserver : public Observer {
 public:
  explicit MicrostateObserver(ReportModel& model) : model_(model) {}
  uint32_t Hooks() const override {
    return HookBit(Hook::kThreadNew) | HookBit(Hook::kWakeup) | HookBit(Hook::kMigrate) |
           HookBit(Hook::kTraceEnd);
  }
  void OnThreadNew(const Thread& t) override { model_.For(t); }
  void OnTraceEnd(int64_t /*ts*/) override {
    for (ThreadReport& r : model_.threads)
      if (r.thread) {
        r.microstates = r.thread->times;
        r.placement = r.thread->placement;
      }
  }
  void OnWakeup(const WakeupEvent& w) override { ++model_.For(*w.wakee).wakeups; }
  void OnMigrate(const Thread& t, int32_t, int32_t, int64_t) override {
    ++model_.For(t).migrations;
  }

 private:
  ReportModel& model_;
};

}  // namespace cstool
