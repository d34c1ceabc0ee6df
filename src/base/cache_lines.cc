#include "base/cache_lines.h"

#include <cstdint>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace cstool {

namespace {

constexpr size_t kLine = 64;

#if defined(__x86_64__)
bool HasClflushopt() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (ebx & (1u << 23)) != 0;
}
#endif

}  // namespace

void EvictCacheLines(const void* p, size_t bytes) {
#if defined(__x86_64__)
  static const bool kClflushopt = HasClflushopt();
  const auto* c = static_cast<const char*>(p);
  const char* const end = c + bytes;
  c -= reinterpret_cast<uintptr_t>(c) & (kLine - 1);  // from the first line's start
  if (kClflushopt) {
    for (; c < end; c += kLine) asm volatile("clflushopt %0" : : "m"(*c));
  } else {
    for (; c < end; c += kLine) asm volatile("clflush %0" : : "m"(*c));
  }
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace cstool
