// Renderers for `cstool irq`: the interrupt summary, its osnoise view (--noise), the affinity
// listing and the outcome of an affinity change, as a table or as JSON.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string_view>
#include <vector>

#include "analysis/irq_report_model.h"
#include "interrupts/irq_affinity.h"

namespace cstool {

class IrqOutput {
 public:
  virtual ~IrqOutput() = default;
  virtual void RenderSummary(const IrqReport& report) = 0;
  // --noise: the recording's header, then the osnoise view (report.noise).
  virtual void RenderNoise(const IrqReport& report) = 0;
  virtual void RenderAffinity(const std::vector<int>& cpus,
                              const std::vector<IrqAffinity>& irqs) = 0;
  virtual void RenderAffinityChange(const AffinityChangeResult& result) = 0;
};

// "table" or "json"; throws cstool::Error (usage) for anything else.
std::unique_ptr<IrqOutput> MakeIrqOutput(std::string_view format, std::ostream& os);

nlohmann::json IrqReportToJson(const IrqReport& report);
// {"trace": ..., "noise": ...}.
nlohmann::json IrqNoiseToJson(const IrqReport& report);
nlohmann::json IrqAffinityToJson(const std::vector<int>& cpus,
                                 const std::vector<IrqAffinity>& irqs);
nlohmann::json AffinityChangeToJson(const AffinityChangeResult& result);

}  // namespace cstool
