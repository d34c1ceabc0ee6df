// Steal time per CPU, from /proc/stat: time a virtual CPU had work to run while the
// hypervisor ran something else. A guest kernel built with paravirtual steal accounting
// leaves it out of its run-time clock, so it is in no thread's exec runtime, and a
// thread switched in before the stall is not waiting for a CPU then either: the kernel's
// accounting has a hole there that a trace, whose clock keeps running, cannot place.
// The report shows how much of it the recording met.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/recording_info.h"

namespace cstool {

struct CpuStealReading {
  int32_t cpu = 0;
  int64_t steal_ns = 0;
};

// Pure parser of /proc/stat text: one reading per "cpuN" line that has a steal column
// (the eighth number), ticks of `ns_per_tick` each. Lines it does not know are skipped.
std::vector<CpuStealReading> ParseCpuSteal(std::string_view proc_stat, int64_t ns_per_tick);

// The clock tick /proc/stat counts in (USER_HZ), in ns: the readings' resolution.
int64_t StealTickNs();

// /proc/stat now; empty when it cannot be read.
std::vector<CpuStealReading> ReadCpuSteal(const std::string& path = "/proc/stat");

// Start and end readings of the same CPUs, paired (a CPU missing from either is left out).
std::vector<CpuSteal> PairSteal(const std::vector<CpuStealReading>& start,
                                const std::vector<CpuStealReading>& end);

}  // namespace cstool
