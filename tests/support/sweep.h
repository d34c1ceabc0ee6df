// How densely the damage sweeps (a file cut or a byte flipped at every Nth offset) visit
// their cases. The release build visits them all. Under AddressSanitizer each case costs
// ~30x as much, and four sweeps took 1000 s of the sanitizer stage's test time; there
// they take every 8th case, and `make check-sweeps` (CSTOOL_FULL_SWEEPS=1) runs them whole.
#pragma once

#include <cstddef>
#include <cstdlib>

namespace cstool::testing {

constexpr bool kUnderAddressSanitizer =
#if defined(__SANITIZE_ADDRESS__)
    true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    true;
#else
    false;
#endif
#else
    false;
#endif

inline size_t SweepStride() {
  if (!kUnderAddressSanitizer) return 1;
  const char* full = std::getenv("CSTOOL_FULL_SWEEPS");
  return full != nullptr && full[0] == '1' ? 1 : 8;
}

}  // namespace cstool::testing
