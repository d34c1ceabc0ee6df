// Reads a recorded trace and summarises its interrupts (analysis/irq_summary) into an
// IrqReport for `cstool irq`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/irq_report_model.h"

namespace cstool {

// `cpus`: the CPUs that were traced (all of the file's CPUs when empty). Throws
// cstool::Error for unreadable or corrupt files.
IrqReport AnalyzeIrqTrace(const std::string& file, std::vector<int32_t> cpus);

}  // namespace cstool
