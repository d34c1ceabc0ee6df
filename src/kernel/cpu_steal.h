// Steal time per CPU: time a virtual CPU had work to run while the hypervisor ran
// something else. A guest kernel built with paravirtual steal accounting
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

// Pure parser of the scheduler's debug file (sched/debug in debugfs): per CPU, how far
// its runqueue clock has run ahead of its run-time clock (`.clock` - `.clock_task`, ns).
// On a kernel that leaves steal, and only steal, out of the run-time clock
// (StealSource::Choose), that is the steal the CPU's exec runtimes missed, to the ns.
std::vector<CpuStealReading> ParseRqClockSteal(std::string_view sched_debug);

// Where a recording reads its steal time: the runqueue clocks where the kernel's run-time
// clock leaves out exactly the steal (paravirtual steal accounting, interrupt time not
// accounted apart) and debugfs shows them; /proc/stat otherwise, in USER_HZ ticks, too
// coarse to name a stall of a few hundred us (a short recording reads 0 there).
class StealSource {
 public:
  static StealSource Choose();
  static StealSource ProcStat() { return StealSource(false, StealTickNs()); }

  // Each CPU's steal counter now (ns); empty when it cannot be read.
  std::vector<CpuStealReading> Read() const;
  // The readings' resolution, ns.
  int64_t step_ns() const { return step_ns_; }
  // What RecordingInfo::steal_source says.
  const char* name() const { return rq_clocks_ ? kRqClocks : kProcStat; }

  static constexpr const char* kRqClocks = "runqueue clocks";
  static constexpr const char* kProcStat = "/proc/stat";

 private:
  StealSource(bool rq_clocks, int64_t step_ns) : rq_clocks_(rq_clocks), step_ns_(step_ns) {}
  bool rq_clocks_;
  int64_t step_ns_;
};

// Start and end readings of the same CPUs, paired (a CPU missing from either is left out).
std::vector<CpuSteal> PairSteal(const std::vector<CpuStealReading>& start,
                                const std::vector<CpuStealReading>& end);

}  // namespace cstool
