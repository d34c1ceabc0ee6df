// Reads a recorded trace and summarises its interrupts (analysis/irq_summary) into an
// IrqReport for `cstool irq`, and for both `cstool irq --noise` and `cstool nmi-inject
// --noise` the osnoise view of it (analysis/irq_noise).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/irq_report_model.h"

namespace cstool {

// What the noise view (IrqReport::noise) measures: the window [start, end) in trace-clock
// ns, or the whole recording when `whole_trace`, cut into periods of `period_ns`.
struct IrqNoiseOptions {
  bool whole_trace = true;
  int64_t start = 0;
  int64_t end = 0;
  int64_t period_ns = 1000000000;
};

// `cpus`: the CPUs that were traced (all of the file's CPUs when empty). With `noise`,
// also fills IrqReport::noise. Throws cstool::Error for unreadable or corrupt files.
IrqReport AnalyzeIrqTrace(const std::string& file, std::vector<int32_t> cpus,
                          const IrqNoiseOptions* noise = nullptr);

}  // namespace cstool
