#include "pipeline/lost_events.h"

#include <algorithm>

namespace cstool {

std::map<int32_t, uint64_t> LostEventsPerCpu(const DecodeStats& stats,
                                             const TraceFileReader& reader, bool* lower_bound) {
  std::map<int32_t, uint64_t> lost;
  if (lower_bound) *lower_bound = false;
  const auto& info = reader.recording_info();
  for (int cpu = 0; cpu < reader.cpus(); ++cpu) {
    const auto at = static_cast<size_t>(cpu);
    const uint64_t in_pages = at < stats.lost_per_cpu.size() ? stats.lost_per_cpu[at] : 0;
    const uint64_t gaps = at < stats.lost_gaps_per_cpu.size() ? stats.lost_gaps_per_cpu[at] : 0;
    uint64_t in_stats = 0;
    if (auto it = reader.cpu_stats().find(cpu); it != reader.cpu_stats().end())
      in_stats = it->second.overrun + it->second.dropped;
    if (info)
      for (const CpuRecordStats& c : info->cpus)
        if (c.cpu == cpu) in_stats = std::max(in_stats, RecordingInfo::LostEvents(c));
    lost[cpu] = std::max({in_pages, in_stats, gaps});
    if (lower_bound && stats.lost_gaps_unknown > 0 && in_stats < lost[cpu]) *lower_bound = true;
  }
  return lost;
}

}  // namespace cstool
