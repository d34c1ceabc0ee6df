#include "output/inject_output.h"

#include <fmt/core.h>

namespace cstool {
namespace {

double Rate(uint64_t n, double seconds) {
  return seconds > 0 ? static_cast<double>(n) / seconds : 0;
}

}  // namespace

void InjectOutput::Header(const InjectHeader& h) {
  header_ = h;
  os_ << fmt::format(
      "cstool nmi-inject: {} interrupts on CPU {} at {:.0f}/s {}\n", h.source, h.cpu, h.rate_hz,
      h.duration_s > 0 ? fmt::format("for {:g} s", h.duration_s) : std::string("until Ctrl-C"));
  os_ << fmt::format("  how: {}\n", h.mechanism);
  os_ << fmt::format("  achieved = {}\n", h.achieved_what);
  if (!h.context_what.empty()) os_ << fmt::format("  context  = {}\n", h.context_what);
  os_ << fmt::format("{:>8} {:>12} {:>12} {:>8} {:>12}\n", "TIME_S", "REQUESTED/S", "ACHIEVED/S",
                     "RATIO", header_.context_what.empty() ? "" : "CONTEXT/S");
  os_.flush();
}

void InjectOutput::Interval(const InjectInterval& iv) {
  double achieved = Rate(iv.achieved, iv.length_s);
  os_ << fmt::format("{:>8.1f} {:>12.0f} {:>12.0f} {:>7.1f}% {:>12}\n", iv.start_s + iv.length_s,
                     header_.rate_hz, achieved, 100.0 * achieved / header_.rate_hz,
                     header_.context_what.empty()
                         ? std::string()
                         : fmt::format("{:.0f}", Rate(iv.context, iv.length_s)));
  os_.flush();
}

void InjectOutput::Total(const InjectInterval& t, uint64_t lost_events) {
  double achieved = Rate(t.achieved, t.length_s);
  os_ << fmt::format(
      "total: requested {:.0f}/s, achieved {:.0f}/s ({} in {:.3f} s, {:.1f}% of requested)",
      header_.rate_hz, achieved, t.achieved, t.length_s, 100.0 * achieved / header_.rate_hz);
  if (!header_.context_what.empty())
    os_ << fmt::format("; context {:.0f}/s", Rate(t.context, t.length_s));
  os_ << fmt::format("; lost events {}\n", lost_events);
  if (t.repeated > 0)
    os_ << fmt::format(
        "  {} of them ran in the same interrupt as the one before: it came nearly a period "
        "late, and the kernel ran the timer again before returning{}\n",
        t.repeated, lost_events > 0 ? " (or lost events hid the interrupt between)" : "");
  os_.flush();
}

}  // namespace cstool
