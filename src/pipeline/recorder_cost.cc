#include "pipeline/recorder_cost.h"

#include <fmt/core.h>

#include <cstdint>

namespace cstool {

std::string RecorderCostNote(const ReportModel& model) {
  uint64_t to_recorder = 0, involuntary = 0;
  int64_t behind_recorder_ns = 0, wait_ns = 0;
  for (const ThreadReport& r : model.threads) {
    if (r.thread == nullptr || !r.thread->tracked) continue;
    to_recorder += r.involuntary_to_recorder;
    involuntary += r.involuntary;
    wait_ns += r.WaitCpuNs();
    for (const WaitedBehind& w : r.waited_behind)
      if (w.running.thread != nullptr && w.running.thread->recorder)
        behind_recorder_ns += w.time_ns;
  }
  if (to_recorder == 0 && behind_recorder_ns == 0) return {};
  auto percent = [](double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; };
  return fmt::format(
      "{} of the recorded threads' {} involuntary switches ({:.1f} %) were to cstool's own "
      "threads (its loop that reads the buffers every 10 ms, mostly), and {:.3f} ms of their "
      "{:.3f} ms waiting for a CPU ({:.1f} %) was behind them: what recording cost them, "
      "counted in ICX, LATW and LATP as the kernel counts them (WAITED BEHIND names the "
      "threads; JSON switches.involuntary_to_recorder)",
      to_recorder, involuntary,
      percent(static_cast<double>(to_recorder), static_cast<double>(involuntary)),
      static_cast<double>(behind_recorder_ns) / 1e6, static_cast<double>(wait_ns) / 1e6,
      percent(static_cast<double>(behind_recorder_ns), static_cast<double>(wait_ns)));
}

}  // namespace cstool
