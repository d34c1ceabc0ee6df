#include <fmt/core.h>

#include <algorithm>
#include <string>
#include <vector>

#include "output/noise_output.h"
#include "output/section_title.h"

namespace cstool {
namespace {

constexpr size_t kNamesPerSource = 3;

// Whole microseconds, as rtla prints them.
int64_t WholeUs(int64_t ns) { return ns / 1000; }
std::string Us(int64_t ns) { return fmt::format("{:.1f}", static_cast<double>(ns) / 1000.0); }
std::string Seconds(int64_t ns) { return fmt::format("{:.3f} s", static_cast<double>(ns) / 1e9); }

constexpr NoiseSource kSources[] = {NoiseSource::kNmi, NoiseSource::kIrq, NoiseSource::kSoftirq,
                                    NoiseSource::kThread};

}  // namespace

void RenderNoiseTable(const NoiseReport& r, std::ostream& os) {
  const int64_t length = r.window.end - r.window.start;
  const int64_t period =
      r.window.period_ns > 0 && r.window.period_ns < length ? r.window.period_ns : length;
  os << fmt::format(
      "OPERATING SYSTEM NOISE (rtla osnoise's summary; time is in us; HW NMI IRQ Softirq Thread "
      "are counts)\n");
  os << fmt::format("window {} in periods of {}{}\n", Seconds(length), Seconds(period),
                    length % std::max<int64_t>(period, 1) != 0 ? " (the last one shorter)" : "");
  // rtla's own header and column widths, so the two line up side by side.
  os << "CPU Period       Runtime        Noise  % CPU Aval   Max Noise   Max Single          HW "
        "         NMI          IRQ      Softirq       Thread\n";
  for (const CpuNoise& c : r.cpus)
    os << fmt::format(
        "{:>3} #{:<6} {:>12} {:>12} {:>11.5f} {:>11} {:>12} {:>11} {:>12} {:>12} {:>12} {:>12}\n",
        c.cpu, c.periods, WholeUs(c.runtime_ns), WholeUs(c.noise_ns), c.AvailablePercent(),
        WholeUs(c.max_noise_ns), WholeUs(c.max_single_ns), "-", c[NoiseSource::kNmi].count,
        c[NoiseSource::kIrq].count, c[NoiseSource::kSoftirq].count, c[NoiseSource::kThread].count);
  if (r.cpus.empty()) os << "(no CPU traced)\n";

  os << "\n"
     << SectionTitle(
            "NOISE TIME BY SOURCE (us; nested noise counts once, in the innermost source: the "
            "four sum to Noise; MAX = longest single occurrence)");
  os << fmt::format("{:>3} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12}\n", "CPU", "NMI",
                    "IRQ", "Softirq", "Thread", "MAX_NMI", "MAX_IRQ", "MAX_SOFTIRQ", "MAX_THREAD");
  for (const CpuNoise& c : r.cpus) {
    std::string line = fmt::format("{:>3}", c.cpu);
    for (NoiseSource s : kSources) line += fmt::format(" {:>12}", Us(c[s].time_ns));
    for (NoiseSource s : kSources) line += fmt::format(" {:>12}", Us(c[s].max_single_ns));
    os << line << "\n";
  }

  os << fmt::format(
      "\nTOP NOISE SOURCES (per CPU and source, the {} with the most own time: "
      "count/us)\n",
      kNamesPerSource);
  for (const CpuNoise& c : r.cpus) {
    for (NoiseSource s : kSources) {
      std::vector<std::pair<std::string, NoiseNameStats>> names;
      for (const auto& [name, st] : c.names)
        if (st.source == s) names.emplace_back(name, st);
      if (names.empty()) continue;
      std::stable_sort(names.begin(), names.end(), [](const auto& a, const auto& b) {
        return a.second.time_ns > b.second.time_ns;
      });
      std::string list;
      for (size_t i = 0; i < names.size() && i < kNamesPerSource; ++i)
        list += fmt::format("{}{} {}/{}", list.empty() ? "" : ", ", names[i].first,
                            names[i].second.count, Us(names[i].second.time_ns));
      if (names.size() > kNamesPerSource)
        list += fmt::format(", {} more", names.size() - kNamesPerSource);
      os << fmt::format("{:>3} {:<8} {}\n", c.cpu, NoiseSourceName(s), list);
    }
  }

  os << "\nHW: not measured (-): only osnoise's busy loop sees noise that no traced source "
        "explains.\n"
        "Thread: every task that ran; cstool runs no workload, so the idle task stands in for "
        "osnoise's.\n";
  for (const CpuNoise& c : r.cpus)
    if (c.unknown_ns > 0)
      os << fmt::format(
          "note: CPU {}: for {} us the trace could not tell what ran (before its first event or "
          "after lost events): no thread noise is known there\n",
          c.cpu, Us(c.unknown_ns));
}

}  // namespace cstool
