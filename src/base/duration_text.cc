#include "base/duration_text.h"

#include <fmt/core.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "base/text_fields.h"

namespace cstool {

std::optional<int64_t> ParseDurationNs(std::string_view text) {
  std::string s(text);
  char* end = nullptr;
  const double value = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !std::isfinite(value) || value < 0) return std::nullopt;
  const std::string_view unit = Trim(end);
  double scale = 0;
  if (unit == "s")
    scale = 1e9;
  else if (unit == "ms")
    scale = 1e6;
  else if (unit == "us")
    scale = 1e3;
  else if (unit == "ns")
    scale = 1;
  else
    return std::nullopt;
  // (A value past what int64 nanoseconds hold, 292 years, would wrap.)
  if (value * scale >= 9e18) return std::nullopt;
  return static_cast<int64_t>(std::llround(value * scale));
}

std::string TraceTimeText(uint64_t ns) {
  return fmt::format("{}.{:09}", ns / 1'000'000'000, ns % 1'000'000'000);
}

std::string TraceTimeText(int64_t ns) {
  // (The magnitude of INT64_MIN is one past int64's range: unsigned arithmetic holds it.)
  if (ns < 0) return "-" + TraceTimeText(0 - static_cast<uint64_t>(ns));
  return TraceTimeText(static_cast<uint64_t>(ns));
}

}  // namespace cstool
