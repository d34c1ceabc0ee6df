// A report view rendered to a string, as `cstool report --format FORMAT` prints it.
#pragma once

#include <sstream>
#include <string>
#include <string_view>

#include "analysis/report_view.h"
#include "output/output.h"

namespace cstool::testing {

inline std::string RenderReport(const ReportView& view, std::string_view format) {
  std::ostringstream out;
  MakeOutput(format, out)->Render(view);
  return out.str();
}

}  // namespace cstool::testing
