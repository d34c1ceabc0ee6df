// `report --html`: one self-contained page (inline CSS, SVG and a few lines of JS; no
// network, no other files) with the two barscopes and the report tables.
#pragma once

#include <ostream>

#include "analysis/barscope_model.h"
#include "analysis/report_view.h"

namespace cstool {

void RenderHtml(const ReportView& view, const BarscopeModel& scopes, std::ostream& os);

}  // namespace cstool
