// `report --critical-path`: the path's segments and the time each thread on it explains,
// as a table, JSON ({"critical_path": {...}}) or CSV (one row per segment).
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string_view>

#include "analysis/critical_path.h"

namespace cstool {

// The table's rows by default: a path over seconds of a busy thread has tens of
// thousands, which bury the summary after them.
constexpr size_t kCriticalPathRows = 40;

// `trace_start` is the trace's first timestamp (the table shows times from it). With more
// rows than `table_rows` (0: no limit), the table shows that many, the longest, in time
// order, and folds the ones between into "..." lines with their count and time; JSON and
// CSV always have every segment. Throws cstool::Error (usage) for an unknown format.
void RenderCriticalPath(const CriticalPath& path, int64_t trace_start, std::string_view format,
                        std::ostream& os, size_t table_rows = kCriticalPathRows);

nlohmann::json CriticalPathToJson(const CriticalPath& path);

}  // namespace cstool
