// The osnoise view (analysis/irq_noise.h) as text and as JSON, shared by `cstool irq
// --noise` and `cstool nmi-inject --noise`: rtla osnoise's summary columns first, then
// the noise time per source, which rtla does not print, and the sources that made it.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "analysis/irq_noise.h"

namespace cstool {

void RenderNoiseTable(const NoiseReport& report, std::ostream& os);
nlohmann::json NoiseReportToJson(const NoiseReport& report);

}  // namespace cstool
