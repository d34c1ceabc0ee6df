// The explicit list of analyses a report runs. Adding one is a new file plus one line
// in registry.cc; the state machine and the report driver stay untouched.
#pragma once

#include <memory>
#include <vector>

#include "analysis/report_model.h"
#include "sched/observer.h"

namespace cstool {

// `counter_windows`: also cut each thread's times where the kernel's counters were
// sampled (for report --check); without it only the exit times the matching needs.
std::vector<std::unique_ptr<Observer>> MakeReportObservers(ReportModel& model,
                                                           bool counter_windows = true);

}  // namespace cstool
