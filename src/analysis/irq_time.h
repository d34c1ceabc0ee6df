// The report's per-thread interrupts (ThreadReport::irqs): `cstool irq`'s attribution of
// each source's time to the tasks it stole from, so that a thread's sources and its irq
// and softirq microstates tell the same story in both commands.
#pragma once

#include "analysis/irq_summary.h"
#include "analysis/report_model.h"
#include "sched/observer.h"

namespace cstool {

// Interrupts that hit a thread while it ran, count and time per source; the rest of an
// interrupt inside which the kernel switched to another task is that task's (see
// IrqSummaryObserver).
class IrqTimeObserver : public Observer {
 public:
  explicit IrqTimeObserver(ReportModel& model) : model_(model), summary_({}) {}
  uint32_t Hooks() const override { return summary_.Hooks() | HookBit(Hook::kTraceEnd); }
  void OnIrq(const IrqInterval& iv) override { summary_.OnIrq(iv); }
  void OnCpuCurrent(const CpuCurrentEvent& e) override { summary_.OnCpuCurrent(e); }
  void OnInterruptSegment(const Thread& t, Microstate s, int32_t cpu, int64_t start,
                          int64_t end) override {
    summary_.OnInterruptSegment(t, s, cpu, start, end);
  }
  void OnTraceEnd(int64_t ts) override;

 private:
  ReportModel& model_;
  IrqSummaryObserver summary_;
};

}  // namespace cstool
