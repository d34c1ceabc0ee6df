// Rendering of a `report --check` result (check/kernel_check.h) for the table, JSON and
// CSV outputs.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "check/kernel_check.h"

namespace cstool {

// The "KERNEL CHECK" section of the table output, ending with the verdict line.
void RenderCheckTable(const KernelCheckResult& check, std::ostream& os);
// The "check" object of the JSON output.
nlohmann::json CheckToJson(const KernelCheckResult& check);
// The CSV output's second table (after an empty line), then "# <verdict>".
void RenderCheckCsv(const KernelCheckResult& check, std::ostream& os);

}  // namespace cstool
