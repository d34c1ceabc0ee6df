#include "pipeline/irq_analysis.h"

#include <fmt/core.h>

#include <optional>

#include "analysis/irq_noise_observer.h"
#include "analysis/irq_summary.h"
#include "model/syscall_table.h"
#include "pipeline/analyze_trace.h"
#include "sched/state_machine.h"

namespace cstool {

IrqReport AnalyzeIrqTrace(const std::string& file, std::vector<int32_t> cpus,
                          const IrqNoiseOptions* noise) {
  SyscallTable syscalls;
  // Registered here, explicitly, rather than in every report (analysis/registry.cc).
  // Without `cpus`, per-CPU splits list the CPUs that saw interrupts.
  auto summary = std::make_unique<IrqSummaryObserver>(cpus);
  std::optional<IrqNoiseObserver> noise_observer;
  AnalyzeOptions options{.extra_observers = {summary.get()}};
  if (noise) options.extra_observers.push_back(&noise_observer.emplace(cpus));
  auto analyzed = AnalyzeTrace(file, syscalls, options);
  const TraceSummary& t = analyzed->model.trace;

  IrqReport report;
  report.events = t.events;
  // The recording's span, up to where a recording cut short holds every CPU's events.
  const int64_t recorded_end =
      t.recording.CompleteUntilTs() > 0 ? t.recording.CompleteUntilTs() : t.recording.end_ts;
  report.duration_ns = t.last_ts - t.first_ts;
  if (t.has_recording_info && recorded_end > t.recording.start_ts)
    report.duration_ns = recorded_end - t.recording.start_ts;
  if (cpus.empty())
    for (int32_t c = 0; c < t.cpus; ++c) cpus.push_back(c);
  report.cpus = cpus;
  uint64_t lost = 0;
  for (int32_t c : cpus) {
    auto it = t.lost_events.find(c);
    report.lost_events[c] = it == t.lost_events.end() ? 0 : it->second;
    lost += report.lost_events[c];
  }
  if (lost > 0)
    report.notes.push_back(
        fmt::format("{} events were lost: counts and times are lower bounds", lost));
  for (const auto& [name, n] : t.anomalies)
    if (name.rfind("irq", 0) == 0) report.notes.push_back(fmt::format("anomaly {}: {}", name, n));
  summary->Fill(report);
  if (noise) {
    NoiseWindow window{noise->start, noise->end, noise->period_ns};
    if (noise->whole_trace) {
      window.start = t.first_ts;
      window.end = t.last_ts;
      if (t.has_recording_info && recorded_end > t.recording.start_ts) {
        window.start = t.recording.start_ts;
        window.end = recorded_end;
      }
    }
    report.noise = noise_observer->Measure(window);
  }
  return report;
}

}  // namespace cstool
