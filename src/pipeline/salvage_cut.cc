#include "pipeline/salvage_cut.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>
#include <vector>

namespace cstool {

std::string EndAtTheFirstCutCpu(TraceFileReader& reader) {
  const size_t notes = reader.salvage_log().entries().size();
  // Damage past an existing bound (a recording cut by --max-size) is found all the same,
  // and a CPU's last record is its last in the file.
  const int64_t bound = reader.end_ts();
  reader.EndAt(0);
  // Every CPU is read: compressed data shows its damage only then, and the first record
  // of all says where the trace starts.
  std::vector<int64_t> last_ts(static_cast<size_t>(std::max(reader.cpus(), 0)), -1);
  int64_t first_ts = -1;
  for (int cpu = 0; cpu < reader.cpus(); ++cpu) {
    std::unique_ptr<CpuRecordStream> stream = reader.OpenCpu(cpu);
    for (auto batch = stream->NextBatch(); !batch.empty(); batch = stream->NextBatch())
      for (const RawRecord& r : batch) {
        if (r.is_loss()) continue;
        last_ts[static_cast<size_t>(cpu)] = r.ts;
        if (first_ts < 0 || r.ts < first_ts) first_ts = r.ts;
      }
  }
  reader.ForgetSalvageNotesFrom(notes);  // the decoding meets the damage again
  reader.EndAt(bound);
  int cut_cpu = -1;
  std::vector<int> emptied;  // cut with no record left
  for (int cpu : reader.salvage_log().cut_cpus()) {
    if (cpu < 0 || cpu >= reader.cpus()) continue;
    const int64_t ts = last_ts[static_cast<size_t>(cpu)];
    if (ts < 0) emptied.push_back(cpu);
    if (ts >= 0 && (cut_cpu < 0 || ts < last_ts[static_cast<size_t>(cut_cpu)])) cut_cpu = cpu;
  }
  std::sort(emptied.begin(), emptied.end());
  emptied.erase(std::unique(emptied.begin(), emptied.end()), emptied.end());
  // A CPU with nothing left is not "reported up to there": its threads' time there is
  // missing from the start, which the note must not hide behind the others' bound.
  const bool one = emptied.size() == 1;
  std::string none_left = emptied.empty()
                              ? std::string()
                              : fmt::format(
                                    "{} {} {} no data left at all: {} events are missing from "
                                    "the start, and the time threads spent there shows as unknown",
                                    one ? "CPU" : "CPUs", fmt::join(emptied, ", "),
                                    one ? "has" : "have", one ? "its" : "their");
  if (cut_cpu < 0) return none_left;
  const int64_t end = last_ts[static_cast<size_t>(cut_cpu)] + 1;  // EndAt leaves out `end`
  if (reader.end_ts() > 0 && reader.end_ts() <= end) return none_left;
  reader.EndAt(end);
  const double after_s = static_cast<double>(end - 1 - first_ts) / 1e9;
  return fmt::format(
      "CPU {}'s data ends {:.6f} s into the trace (its last record before the damage): every "
      "CPU{} is reported up to there, the others' later events are left out (one-sided, they "
      "would show a wakeup onto CPU {} and never its switch-in){}",
      cut_cpu, after_s, emptied.empty() ? "" : " with data left", cut_cpu,
      emptied.empty() ? "" : "; " + none_left);
}

}  // namespace cstool
