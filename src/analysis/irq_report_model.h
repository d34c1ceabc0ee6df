// What `cstool irq` reports, independent of rendering: per interrupt source (device
// IRQ line, x86 vector, softirq, NMI) its count and time, overall and per CPU, and the
// tasks that lost the most time to interrupts. analysis/irq_summary fills it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/irq_noise.h"
#include "sched/observer.h"

namespace cstool {

struct IrqCount {
  uint64_t count = 0;
  int64_t time_ns = 0;
};

struct IrqSourceSummary {
  std::string name;  // "irq:24 virtio0", "vector:local_timer", "softirq:TIMER", "nmi"
  IrqKind kind = IrqKind::kHardirq;
  uint64_t count = 0;
  int64_t time_ns = 0;
  int64_t max_ns = 0;
  std::map<int32_t, IrqCount> per_cpu;  // every traced CPU is listed, even with 0
  int64_t MeanNs() const { return count ? time_ns / static_cast<int64_t>(count) : 0; }
};

struct IrqTaskSummary {
  int32_t tid = 0;
  int32_t pid = 0;
  std::string comm;
  // Time the task was on a CPU while that CPU handled interrupts (its irq and softirq
  // microstates): nested interrupts count once.
  int64_t irq_ns = 0;
  int64_t softirq_ns = 0;
  uint64_t count = 0;                       // interrupts that hit it
  std::map<std::string, IrqCount> sources;  // by source name; nested time counts in each
  int64_t LostNs() const { return irq_ns + softirq_ns; }
};

struct IrqReport {
  std::string file;  // the raw trace, or empty when it was a temporary file
  uint64_t events = 0;
  int64_t duration_ns = 0;
  std::vector<int32_t> cpus;                // traced CPUs
  std::map<int32_t, uint64_t> lost_events;  // per CPU
  std::vector<std::string> notes;
  std::vector<IrqSourceSummary> sources;  // most total time first
  std::vector<IrqTaskSummary> tasks;      // most lost time first
  // Hardirqs, vectors and NMIs that hit an idle CPU: the `irq` microstate's interrupts.
  IrqCount idle;
  IrqCount idle_softirq;  // softirqs an idle CPU ran (the `softirq` microstate's kind)
  // The recorder's own threads (not in `tasks`), summed as a task's are (its `sources`
  // unused): the tasks' IRQ_US, the idle line's time and this one's irq_ns add up to the
  // hardirq sources' time.
  IrqTaskSummary recorder;
  std::optional<NoiseReport> noise;  // the osnoise view, when asked for
};

// "hardirq", "vector", "softirq", "nmi".
std::string_view IrqKindName(IrqKind kind);

}  // namespace cstool
