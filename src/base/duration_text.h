// Durations as people type them: a number and a unit.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace cstool {

// "100ms", "5ms", "1.5s", "200us", "50000ns" (or "100 ms") in nanoseconds; nullopt for
// anything else (no unit, a negative value, one past what int64 nanoseconds hold).
std::optional<int64_t> ParseDurationNs(std::string_view text);

}  // namespace cstool
