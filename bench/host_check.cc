// Prints whether the host runs this VM's CPUs at even speed (bench/host_speed.h), for
// bench.sh to put beside the benchmarks' summary.
//
//   host_check [--wait SECONDS]
//
// One line, "host: CPU loop ms 84 (cpu 0), 86 (cpu 1): spread 1.02x, even" (or "UNEVEN");
// with --wait, measures again every few seconds until the CPUs are even or the time is
// up. Exit status 0 when even, 1 when uneven, 2 on a usage or system error.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench/host_speed.h"

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
  int tries = 0;
  const auto speeds = cstool::bench::WaitForEvenCpus(std::chrono::duration<double>(wait_s),
                                                     cstool::bench::kLongLoop, &tries);
  if (speeds.empty()) {
    std::perror("host_check: the CPUs this process may run on");
    return 2;
  }
  const double spread = cstool::bench::Spread(speeds);
  const bool even = spread <= cstool::bench::kEvenSpread;
  std::string line = "host: CPU loop ms";
  for (size_t i = 0; i < speeds.size(); ++i) {
    char part[64];
    std::snprintf(part, sizeof part, "%s %.0f (cpu %d)", i ? "," : "", speeds[i].loop_ms,
                  speeds[i].cpu);
    line += part;
  }
  char verdict[64];
  std::snprintf(verdict, sizeof verdict, ": spread %.2fx, %s", spread, even ? "even" : "UNEVEN");
  line += verdict;
  if (tries > 1) line += " (after " + std::to_string(tries) + " measurements)";
  std::printf("%s\n", line.c_str());
  return even ? 0 : 1;
}
