// The explicit list of analyses a report runs. Adding one is a new file plus one line
// in registry.cc; the state machine and the report driver stay untouched.
#pragma once

#include <memory>
#include <vector>

#include "core/report_model.h"
#include "plugins/plugin.h"

namespace cstool {

// `kernel_windows`: also cut each thread's times where the kernel's counters were
// sampled (for report --check); without it only the exit times the matching needs.
std::vector<std::unique_ptr<Plugin>> MakeReportPlugins(ReportModel& model,
                                                       bool kernel_windows = true);

}  // namespace cstool
