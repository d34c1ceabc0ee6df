#pragma once

#include "core/report_model.h"
#include "plugins/plugin.h"

namespace cstool {

// Interrupts that hit a thread while it ran: count and time per source.
class IrqTimePlugin : public Plugin {
 public:
  explicit IrqTimePlugin(ReportModel& model) : model_(model) {}
  uint32_t Hooks() const override { return HookBit(Hook::kIrq); }
  void OnIrq(const IrqInterval& iv) override {
    if (!iv.interrupted) return;
    // IrqInterval::name views a string the state machine owns for the whole run, so
    // its address identifies the source.
    IrqStats& st = model_.For(*iv.interrupted).irqs[NameKey(iv.name)];
    ++st.count;
    st.time_ns += iv.end - iv.start;
  }

 private:
  const std::string* NameKey(std::string_view name) {
    auto it = names_.find(name);
    if (it == names_.end()) it = names_.emplace(std::string(name), std::string(name)).first;
    return &it->second;
  }
  ReportModel& model_;
  std::map<std::string, std::string, std::less<>> names_;
};

}  // namespace cstool
