#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/report_model.h"
#include "plugins/plugin.h"

namespace cstool {

// Fills ThreadReport::kernel_window: each thread's switches and CPU/wait times, cut at
// the instants the recorder sampled its tid's counters from /proc (core/kernel_window.h).
class KernelWindowPlugin : public Plugin {
 public:
  // Takes the sampling instants from model.trace.recording.kernel_counters; a recording
  // without (or with unreadable) kernel counters gives no cuts.
  explicit KernelWindowPlugin(ReportModel& model);

  void OnThreadNew(const Thread& t) override;
  void OnStateSegment(const Thread& t, Microstate s, int64_t start, int64_t end) override {
    Window(t).AddSegment(s, start, end);
  }
  void OnSwitch(const SwitchEvent& e) override {
    if (e.prev) Window(*e.prev).AddSwitch(e.ts, e.voluntary);
  }
  void OnExit(const Thread& t, int64_t ts) override {
    KernelWindow& w = Window(t);
    if (w.exit_ts < 0) w.exit_ts = ts;
  }

 private:
  KernelWindow& Window(const Thread& t);

  ReportModel& model_;
  std::unordered_map<int32_t, std::vector<int64_t>> cut_times_;  // tid -> sampling instants
};

}  // namespace cstool
