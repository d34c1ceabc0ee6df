// Rendering of a `report --check` result (check/kernel_check.h) for the table and JSON
// outputs (CSV gives each thread's in its row, output/csv_output.cc).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "check/kernel_check.h"

namespace cstool {

// The "KERNEL CHECK" section of the table output, ending with the verdict line.
void RenderCheckTable(const KernelCheckResult& check, std::ostream& os);
// The "check" object of the JSON output.
nlohmann::json CheckToJson(const KernelCheckResult& check);

}  // namespace cstool
