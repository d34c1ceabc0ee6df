#pragma once

#include "analysis/report_model.h"
#include "sched/observer.h"

namespace cstool {

// Interrupts that hit a thread while it ran: count and time per source.
class IrqTimeObserver : public Observer {
 public:
  explicit IrqTimeObserver(ReportModel& model) : model_(model) {}
  uint32_t Hooks() const override { return HookBit(Hook::kIrq); }
  void OnIrq(const IrqInterval& iv) override {
    if (!iv.interrupted) return;
    // The model owns the names its keys point to: the observer dies before the model
    // is rendered (a key into the observer's own storage dangled: use after free).
    IrqStats& st = model_.For(*iv.interrupted).irqs[NameKey(iv.name)];
    ++st.count;
    st.time_ns += iv.end - iv.start;
  }

 private:
  const std::string* NameKey(std::string_view name) {
    auto it = model_.irq_names.find(name);
    if (it == model_.irq_names.end()) it = model_.irq_names.emplace(name).first;
    return &*it;
  }
  ReportModel& model_;
};

}  // namespace cstool
