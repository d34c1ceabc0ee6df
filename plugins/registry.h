// The explicit list of analyses a report runs. Adding one is a new file plus one line
// in registry.cc; the state machine and the report driver stay untouched.
#pragma once

#include <memory>
#include <vector>

#include "core/report_model.h"
#include "plugins/plugin.h"

namespace cstool {

std::vector<std::unique_ptr<Plugin>> MakeReportPlugins(ReportModel& model);

}  // namespace cstool
