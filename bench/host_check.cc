// Whether the host gives this VM's CPUs even speed: the same fixed loop, pinned to each
// usable CPU in turn, timed. A shared host can run one vCPU at a third of the other's speed
// for half an hour; a two-thread run (report -j 2) then takes as long as its thread on the
// slow one, and no ratio between configurations measured in such a stretch says anything
// about cstool. bench.sh runs this around the timed benchmarks and prints the verdict with
// their summary.
//
//   host_check [--wait SECONDS]
//
// Prints one line, "host: CPU loop ms 84 (cpu 0), 86 (cpu 1): spread 1.02x, even" (or
// "UNEVEN"); with --wait, measures again every few seconds until the CPUs are even or the
// time is up. Exit status 0 when even, 1 when uneven, 2 on a usage or system error.
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

// The spread (slowest over fastest CPU) still taken as even: the loop's own run-to-run
// spread on a quiet host is 1-5 %; slow spells measured 1.4x to 2.9x.
constexpr double kEvenSpread = 1.15;

// A chain of loads and stores through one memory word (a sum kept in memory): about 85 ms
// on a quiet core. Memory operations, like the state machine's: on the AMD VMs a slow
// spell showed in this loop (2.7x) and hardly in the same sum as the compiler unrolled it
// (1.06x), on the same CPU at the same time; hence the loop spelled out.
double LoopMs() {
  constexpr uint64_t kIterations = 300'000'000;
  const auto start = std::chrono::steady_clock::now();
  uint64_t sum = 0;
  for (uint64_t i = 0; i < kIterations; ++i) {
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

struct CpuTime {
  int cpu;
  double ms;
};

// The loop's median of three on each usable CPU: a spell can come and go within seconds,
// and the best of a few runs would hide it; one interrupt does not move the median.
bool Measure(std::vector<CpuTime>* out) {
  cpu_set_t usable;
  if (sched_getaffinity(0, sizeof usable, &usable) != 0) {
    std::perror("host_check: sched_getaffinity");
    return false;
  }
  out->clear();
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &usable)) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) continue;  // went offline meanwhile
    std::vector<double> runs;
    for (int rep = 0; rep < 3; ++rep) runs.push_back(LoopMs());
    std::nth_element(runs.begin(), runs.begin() + 1, runs.end());
    out->push_back({cpu, runs[1]});
  }
  sched_setaffinity(0, sizeof usable, &usable);
  return !out->empty();
}

double Spread(const std::vector<CpuTime>& times) {
  auto [lo, hi] = std::minmax_element(
      times.begin(), times.end(), [](const CpuTime& a, const CpuTime& b) { return a.ms < b.ms; });
  return hi->ms / lo->ms;
}

}  // namespace

int main(int argc, char** argv) {
  double wait_s = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--wait") == 0 && i + 1 < argc) {
      wait_s = std::strtod(argv[++i], nullptr);
    } else {
      std::fprintf(stderr, "usage: host_check [--wait SECONDS]\n");
      return 2;
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  std::vector<CpuTime> times;
  int rounds = 0;
  for (;;) {
    if (!Measure(&times)) return 2;
    ++rounds;
    if (Spread(times) <= kEvenSpread || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::seconds(10));
  }
  const double spread = Spread(times);
  const bool even = spread <= kEvenSpread;
  std::string line = "host: CPU loop ms";
  for (size_t i = 0; i < times.size(); ++i) {
    char part[64];
    std::snprintf(part, sizeof part, "%s %.0f (cpu %d)", i ? "," : "", times[i].ms, times[i].cpu);
    line += part;
  }
  char verdict[96];
  std::snprintf(verdict, sizeof verdict, ": spread %.2fx, %s", spread, even ? "even" : "UNEVEN");
  line += verdict;
  if (rounds > 1) line += " (after " + std::to_string(rounds) + " measurements)";
  std::printf("%s\n", line.c_str());
  return even ? 0 : 1;
}
