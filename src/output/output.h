// Renderers of a ReportView (bpftrace's Output idea): reports never print directly,
// they hand the view to one of these, which writes to the stream it was given.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string_view>

#include "analysis/report_view.h"

namespace cstool {

class Output {
 public:
  virtual ~Output() = default;
  virtual void Render(const ReportView& view) = 0;
};

// "table", "json" or "csv"; throws cstool::Error (usage) for anything else.
std::unique_ptr<Output> MakeOutput(std::string_view format, std::ostream& os);

// The JSON contract (the keys cstool-report(1) documents); used by the JSON renderer
// and by tests.
nlohmann::json ReportToJson(const ReportView& view);

}  // namespace cstool
