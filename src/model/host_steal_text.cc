#include "model/host_steal_text.h"

#include <fmt/format.h>

namespace cstool {

std::string StealMsText(const RecordingInfo& info, int64_t ns) {
  const double ms = static_cast<double>(ns) / 1e6;
  return info.StealToTheNs() ? fmt::format("{:.3f} ms", ms) : fmt::format("{:.0f} ms", ms);
}

std::string StealSourceText(const RecordingInfo& info) {
  if (info.StealToTheNs()) return "steal time, the runqueue clocks, to the ns";
  return fmt::format("steal time, /proc/stat, in {:.0f} ms steps, each CPU's within a step",
                     static_cast<double>(info.steal_step_ns) / 1e6);
}

}  // namespace cstool
