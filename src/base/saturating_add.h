// Sums of nanoseconds over many threads: a damaged file's timestamps can make each
// thread's span near the int64 limit, and a process's sum of them must not wrap (a
// negative lifetime) or be undefined. Real spans are far below it (2^63 ns is 292 years).
#pragma once

#include <cstdint>
#include <limits>

namespace cstool {

// a + b, held at the int64 limits rather than wrapped.
inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

}  // namespace cstool
