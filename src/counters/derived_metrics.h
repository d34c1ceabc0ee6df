// Metrics derived from counted events, only where all their inputs were counted:
//   ipc         instructions / cycles
//   <x>_mpki    misses per kilo-instruction, for cache-misses and branch-misses
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cstool {

// `names` and `values` are aligned (a reading's columns). Metrics whose divisor is 0
// are left out.
std::vector<std::pair<std::string, double>> DerivedMetrics(const std::vector<std::string>& names,
                                                           const std::vector<uint64_t>& values);

// The perf software clocks (task-clock, cpu-clock): they count nanoseconds of CPU time.
bool CountsNanoseconds(std::string_view counter);
// A counter's column title in a table: a clock's with its unit, "task-clock(ms)", as its
// total shows in milliseconds, as perf stat shows it ("msec"; a bare total in ns read as
// a count).
std::string CounterTitle(std::string_view counter);

// A counter's total as a table shows it: the exact count, or a clock's milliseconds to
// `ms_decimals` places; '*' marks a value the kernel scaled.
std::string TotalText(std::string_view counter, uint64_t value, bool scaled, int ms_decimals);

// A counter's rate per second as a table shows it: a count per second, or for a clock the
// CPUs it kept busy, as perf stat's "CPUs utilized".
std::string RateText(std::string_view counter, double per_second);

}  // namespace cstool
