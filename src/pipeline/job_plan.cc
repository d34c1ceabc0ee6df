#include "pipeline/job_plan.h"

#include <algorithm>

#include "decode/cpu_shares.h"

namespace cstool {

// Shares pay only when no one of them holds most of the data: with one CPU's data in
// one share (a ping-pong pinned to a CPU) that share is a decoding thread that also
// decompresses (0.80 of -j 1's time on 2 vCPUs, against read-ahead's 0.67).
constexpr double kMaxShareOfData = 2.0 / 3;

JobPlan PlanJobs(int jobs, const TraceFileReader& reader) {
  if (jobs <= 1) return {};
  const int shares = std::min(jobs == 2 ? 2 : jobs - 1, reader.cpus());
  const bool even_shares =
      CpusCanBeShared(reader) && ShareCpus(reader, shares).largest_fraction <= kMaxShareOfData;
  if (even_shares && (jobs > 2 || reader.data_compressed())) return {false, 1, shares};
  if (jobs == 2 && reader.data_compressed()) return {true, 1, 1, true};
  return {true, jobs - 1, 1};
}

int DefaultJobs(const TraceFileReader& reader, int usable_cpus, uint64_t one_thread_pages,
                uint64_t one_thread_compressed) {
  uint64_t bytes = 0;
  for (int cpu = 0; cpu < reader.cpus(); ++cpu) bytes += reader.CpuDataBytes(cpu);
  if (bytes == 0) return usable_cpus;  // sizes unknown (or no data: nothing to share)
  const uint64_t below = reader.data_compressed() ? one_thread_compressed : one_thread_pages;
  return bytes < below ? 1 : usable_cpus;
}

}  // namespace cstool
