// Whether the host gives this VM's CPUs even speed: the same fixed loop, pinned to each
// usable CPU in turn, timed. A shared host can run one vCPU at a third of the other's speed
// for minutes at a time; a two-thread run (report -j 2) then takes as long as its thread on
// the slow one, and no ratio between configurations measured in such a stretch says
// anything about cstool. bench/host_check prints the verdict; report_bench starts each
// timed process on an even host (WaitForEvenCpus).
#pragma once

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace cstool::bench {

// The spread (slowest over fastest CPU) still taken as even: the loop's own run-to-run
// spread on a quiet host is 1-5 %; slow spells measured 1.4x to 2.9x.
inline constexpr double kEvenSpread = 1.15;
// About 85 ms on a quiet core (host_check); a tenth of that between timed runs.
inline constexpr uint64_t kLongLoop = 300'000'000;
inline constexpr uint64_t kShortLoop = 30'000'000;

// A chain of loads and stores through one memory word (a sum kept in memory). Memory
// operations, like the state machine's: on the AMD VMs a slow spell showed in this loop
// (2.7x) and hardly in the same sum as the compiler unrolled it (1.06x), on the same CPU
// at the same time; hence the loop spelled out.
inline double MemoryLoopMs(uint64_t iterations) {
  const auto start = std::chrono::steady_clock::now();
  uint64_t sum = 0;
  for (uint64_t i = 0; i < iterations; ++i) {
#if defined(__x86_64__)
    asm volatile("mov %0, %%rdx\n\tadd %1, %%rdx\n\tmov %%rdx, %0" : "+m"(sum) : "r"(i) : "rdx");
#else
    asm volatile("" : "+m"(sum));
    sum += i;
#endif
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

struct CpuSpeed {
  int cpu = 0;
  double loop_ms = 0;
};

// The loop's median of three on each usable CPU (a spell can come and go within seconds,
// and the best of a few runs would hide it; one interrupt does not move the median).
// Empty when the affinity cannot be read.
inline std::vector<CpuSpeed> MeasureCpus(uint64_t iterations) {
  std::vector<CpuSpeed> out;
  cpu_set_t usable;
  if (sched_getaffinity(0, sizeof usable, &usable) != 0) return out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &usable)) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) continue;  // went offline meanwhile
    double runs[3];
    for (double& r : runs) r = MemoryLoopMs(iterations);
    std::sort(runs, runs + 3);
    out.push_back({cpu, runs[1]});
  }
  sched_setaffinity(0, sizeof usable, &usable);
  return out;
}

// Slowest over fastest (1 for one CPU or none).
inline double Spread(const std::vector<CpuSpeed>& speeds) {
  if (speeds.empty()) return 1;
  auto [lo, hi] = std::minmax_element(
      speeds.begin(), speeds.end(),
      [](const CpuSpeed& a, const CpuSpeed& b) { return a.loop_ms < b.loop_ms; });
  return hi->loop_ms / lo->loop_ms;
}

// Measures until the CPUs are even or `max_wait` has passed, sleeping between tries;
// returns the last measurement.
inline std::vector<CpuSpeed> WaitForEvenCpus(std::chrono::duration<double> max_wait,
                                             uint64_t iterations, int* tries = nullptr) {
  const auto deadline = std::chrono::steady_clock::now() + max_wait;
  std::vector<CpuSpeed> speeds;
  for (int n = 1;; ++n) {
    speeds = MeasureCpus(iterations);
    if (tries) *tries = n;
    if (Spread(speeds) <= kEvenSpread || std::chrono::steady_clock::now() >= deadline)
      return speeds;
    std::this_thread::sleep_for(std::chrono::seconds(5));
  }
}

}  // namespace cstool::bench
