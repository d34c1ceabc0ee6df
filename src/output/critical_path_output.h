// `report --critical-path`: the path's segments and the time each thread on it explains,
// as a table, JSON ({"critical_path": {...}}) or CSV (one row per segment).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string_view>

#include "analysis/critical_path.h"

namespace cstool {

// `trace_start` is the trace's first timestamp (the table shows times from it). Throws
// cstool::Error (usage) for an unknown format.
void RenderCriticalPath(const CriticalPath& path, int64_t trace_start, std::string_view format,
                        std::ostream& os);

nlohmann::json CriticalPathToJson(const CriticalPath& path);

}  // namespace cstool
