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
  if (jobs == 2 && reader.data_compressed()) return {false, 2, 1};
  return {true, jobs - 1, 1};
}

}  // namespace cstool
