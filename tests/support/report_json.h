// Lookups in `cstool report --format json` output for the tests.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace cstool::testing {

// The report's first thread named `comm`, or null.
inline const nlohmann::json* ThreadNamed(const nlohmann::json& report, std::string_view comm) {
  for (const auto& t : report.at("threads"))
    if (t.value("comm", "") == comm) return &t;
  return nullptr;
}

}  // namespace cstool::testing
