#include "pipeline/recorder_cost.h"

#include <fmt/core.h>

#include <cstdint>
#include <string_view>

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
  auto percent = [](auto part, auto whole) {
    return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
  };
  constexpr std::string_view kOwnThreads =
      "cstool's own threads (its loop that reads the buffers every 10 ms, mostly)";
  // Each half only where it is not nothing: "0 of 0 switches" says nothing.
  const std::string switches =
      fmt::format("{} of all the recorded threads' {} involuntary switches ({:.1f} %)", to_recorder,
                  involuntary, percent(to_recorder, involuntary));
  const std::string waits =
      fmt::format("{:.3f} ms of {} {:.3f} ms waiting for a CPU ({:.1f} %)",
                  static_cast<double>(behind_recorder_ns) / 1e6,
                  to_recorder > 0 ? "their" : "all the recorded threads'",
                  static_cast<double>(wait_ns) / 1e6, percent(behind_recorder_ns, wait_ns));
  if (behind_recorder_ns == 0)
    return fmt::format(
        "{} were to {}: what recording cost them, counted in ICX as the kernel counts it "
        "(JSON switches.involuntary_to_recorder)",
        switches, kOwnThreads);
  if (to_recorder == 0)
    return fmt::format(
        "{} was behind {}: what recording cost them, counted in LATW and LATP as the kernel "
        "counts them (WAITED BEHIND names the threads)",
        waits, kOwnThreads);
  return fmt::format(
      "{} were to {}, and {} was behind them: what recording cost them, counted in ICX, LATW "
      "and LATP as the kernel counts them (WAITED BEHIND names the threads; JSON "
      "switches.involuntary_to_recorder)",
      switches, kOwnThreads, waits);
}

}  // namespace cstool
