// Durations as people type them (a number and a unit), and trace times as trace-cmd
// prints them (seconds and nine digits).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cstool {

// "100ms", "5ms", "1.5s", "200us", "50000ns" (or "100 ms") in nanoseconds; nullopt for
// anything else (no unit, a negative value, one past what int64 nanoseconds hold).
std::optional<int64_t> ParseDurationNs(std::string_view text);

// A trace time in nanoseconds as "1234.000056789". Unsigned for a page header's raw
// time (a damaged one may be past what int64 holds); a negative one gets a leading "-".
std::string TraceTimeText(uint64_t ns);
std::string TraceTimeText(int64_t ns);

}  // namespace cstool
