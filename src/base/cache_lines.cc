#include "base/cache_lines.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <utility>

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

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t Median(std::array<int64_t, EvictionChoice::kRoundsEach> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

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

EvictionChoice::EvictionChoice(Clock now) : now_(now ? std::move(now) : Clock(SteadyNowNs)) {}

bool EvictionChoice::Evict() {
  if (decision_ != Decision::kTrying) {
    if (++held_ < kHold) return decision_ == Decision::kEvict;
    decision_ = Decision::kTrying;  // tries again: what paid then may not pay now
    calls_ = kWarmup;
    rounds_ = {};
  }
  const int64_t call = calls_++;
  if (call < kWarmup) return false;
  const int64_t round = (call - kWarmup) / kRound;
  if (round == 2 * kRoundsEach) {
    refill_began_ = -1;
    decision_ = Median(rounds_[1]) < Median(rounds_[0]) ? Decision::kEvict : Decision::kKeep;
    held_ = 0;
    return decision_ == Decision::kEvict;
  }
  refill_began_ = now_();
  return round % 2 == 1;
}

void EvictionChoice::Refilled() {
  if (refill_began_ < 0) return;
  const int64_t round = (calls_ - 1 - kWarmup) / kRound;
  rounds_[round % 2][round / 2] += now_() - refill_began_;
  refill_began_ = -1;
}

}  // namespace cstool
