// `report --html`: one self-contained page (inline CSS, SVG and a few lines of JS; no
// network, no other files) with the two barscopes and the report tables.
#pragma once

#include <ostream>

#include "core/barscope_model.h"
#include "core/report_view.h"

namespace cstool {

void RenderHtml(const ReportView& view, const BarscopeModel& scopes, std::ostream& os);

}  // namespace cstool
