#pragma once

#include "core/report_model.h"
#include "plugins/plugin.h"

namespace cstool {

// Sums each thread's state segments into its microstate times.
class MicrostatePlugin : public Plugin {
 public:
  explicit MicrostatePlugin(ReportModel& model) : model_(model) {}
  uint32_t Hooks() const override {
    return HookBit(Hook::kThreadNew) | HookBit(Hook::kStateSegment) | HookBit(Hook::kWakeup) |
           HookBit(Hook::kMigrate);
  }
  void OnThreadNew(const Thread& t) override { model_.For(t); }
  void OnStateSegment(const Thread& t, Microstate s, int64_t start, int64_t end) override {
    model_.For(t).microstates[static_cast<size_t>(s)] += end - start;
  }
  void OnWakeup(const WakeupEvent& w) override { ++model_.For(*w.wakee).wakeups; }
  void OnMigrate(const Thread& t, int32_t, int32_t, int64_t) override {
    ++model_.For(t).migrations;
  }

 private:
  ReportModel& model_;
};

}  // namespace cstool
