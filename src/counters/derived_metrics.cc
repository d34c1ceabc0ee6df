#include "counters/derived_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace cstool {
namespace {

std::optional<double> ValueOf(const std::vector<std::string>& names,
                              const std::vector<uint64_t>& values, const std::string& name) {
  auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) return std::nullopt;
  const size_t i = static_cast<size_t>(it - names.begin());
  if (i >= values.size()) return std::nullopt;
  return static_cast<double>(values[i]);
}

}  // namespace

std::vector<std::pair<std::string, double>> DerivedMetrics(const std::vector<std::string>& names,
                                                           const std::vector<uint64_t>& values) {
  std::vector<std::pair<std::string, double>> out;
  const auto instructions = ValueOf(names, values, "instructions");
  const auto cycles = ValueOf(names, values, "cycles");
  if (instructions && cycles && *cycles > 0) out.emplace_back("ipc", *instructions / *cycles);
  for (const char* misses : {"cache-misses", "branch-misses"}) {
    const auto m = ValueOf(names, values, misses);
    if (m && instructions && *instructions > 0) {
      std::string key(misses);
      std::replace(key.begin(), key.end(), '-', '_');
      out.emplace_back(key + "_mpki", *m * 1000.0 / *instructions);
    }
  }
  return out;
}

bool CountsNanoseconds(std::string_view counter) {
  return counter == "task-clock" || counter == "cpu-clock";
}

std::string CounterTitle(std::string_view counter) {
  return CountsNanoseconds(counter) ? fmt::format("{}(ms)", counter) : std::string(counter);
}

std::string TotalText(std::string_view counter, uint64_t value, bool scaled, int ms_decimals) {
  const char* mark = scaled ? "*" : "";
  if (CountsNanoseconds(counter))
    return fmt::format("{:.{}f}{}", static_cast<double>(value) / 1e6, ms_decimals, mark);
  return fmt::format("{}{}", value, mark);
}

std::string RateText(std::string_view counter, double per_second) {
  if (CountsNanoseconds(counter)) return fmt::format("{:.3f} CPUs", per_second / 1e9);
  return fmt::format("{:.1f}", per_second);
}

}  // namespace cstool
