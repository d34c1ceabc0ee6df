#pragma once

#include "analysis/report_model.h"
#include "sched/observer.h"

namespace cstool {

// Counts switches by the kernel's voluntary/involuntary rule, by cause, and by where
// involuntary ones happened.
class SwitchCauseObserver : public Observer {
 public:
  explicit SwitchCauseObserver(ReportModel& model) : model_(model) {}
  uint32_t Hooks() const override { return HookBit(Hook::kSwitch); }
  void OnSwitch(const SwitchEvent& e) override {
    if (!e.prev) return;
    ThreadReport& r = model_.For(*e.prev);
    if (e.prev->exiting) ++(e.voluntary ? r.voluntary_after_exit : r.involuntary_after_exit);
    if (e.voluntary) {
      ++r.voluntary;
    } else {
      ++r.involuntary;
      ++r.preempted_at[static_cast<size_t>(e.preempted_at)];
      if (e.next != nullptr && e.next->recorder) ++r.involuntary_to_recorder;
    }
    r.CountCause(e.cause);
  }

 private:
  ReportModel& model_;
};

}  // namespace cstool
