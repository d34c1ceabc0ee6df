// The operating-system noise view of a CPU, shaped like the summary of `rtla osnoise`
// (CPU, Period, Runtime, Noise, % CPU Aval, Max Noise, Max Single, HW NMI IRQ Softirq
// Thread), computed from traced intervals instead of osnoise's busy loop.
//
// cstool runs no workload of its own, so the idle task stands in for osnoise's workload
// thread: every moment a CPU spends in an NMI, a hardirq or x86 vector (IRQ), a softirq,
// or running any task (Thread) is noise. Nested noise counts once, for the innermost
// source by precedence NMI > IRQ > Softirq > Thread (an IRQ inside a softirq is IRQ time,
// not softirq time too), so the four sources' times sum to Noise, as osnoise subtracts
// nested interference. HW noise (what no traced source explains) needs osnoise's loop:
// it is not measured.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace cstool {

// In precedence order: a source preempts every later one.
enum class NoiseSource : uint8_t { kNmi, kIrq, kSoftirq, kThread };
inline constexpr size_t kNoiseSources = 4;

// "nmi", "irq", "softirq", "thread".
std::string_view NoiseSourceName(NoiseSource source);

// One occurrence of noise on a CPU: an interrupt handler or a task's run.
struct NoiseSpan {
  NoiseSource source = NoiseSource::kIrq;
  int64_t start = 0;
  int64_t end = 0;
  const std::string* name = nullptr;  // "vector:local_timer", "thread:kworker/1:1/45"; may be null
};

// The measured time [start, end), cut into periods of `period_ns` from `start` (the last
// may be shorter); period_ns <= 0: one period.
struct NoiseWindow {
  int64_t start = 0;
  int64_t end = 0;
  int64_t period_ns = 0;
};

struct NoiseStats {
  uint64_t count = 0;         // occurrences that began in the window
  int64_t time_ns = 0;        // their own time in the window, nested noise excluded
  int64_t max_single_ns = 0;  // the longest one occurrence's own time in the window
};

struct NoiseNameStats {
  NoiseSource source = NoiseSource::kIrq;
  uint64_t count = 0;
  int64_t time_ns = 0;
};

struct CpuNoise {
  int32_t cpu = 0;
  int64_t runtime_ns = 0;  // the window's length
  int64_t periods = 0;
  int64_t noise_ns = 0;      // time with any noise (the union of the spans)
  int64_t max_noise_ns = 0;  // the most noise in one period
  // The longest stretch of uninterrupted noise (overlapping or touching spans merged)
  // within one period: what osnoise's loop, which samples inside a period, would see as
  // one noise sample. Never more than max_noise_ns, as in rtla.
  int64_t max_single_ns = 0;
  // Time in the window when the trace could not tell what the CPU ran (before its first
  // event, after lost events): no thread noise is known there.
  int64_t unknown_ns = 0;
  std::array<NoiseStats, kNoiseSources> sources{};
  std::map<std::string, NoiseNameStats> names;  // by span name: count and own time

  const NoiseStats& operator[](NoiseSource s) const { return sources[static_cast<size_t>(s)]; }
  // osnoise's "% CPU Aval": (Runtime - Noise) / Runtime, in percent.
  double AvailablePercent() const;
};

struct NoiseReport {
  NoiseWindow window;
  std::vector<CpuNoise> cpus;
};

// Measures one CPU's noise over `window` from its spans (any order). An occurrence counts
// in the window it began in; its time is clipped to the window.
CpuNoise MeasureCpuNoise(int32_t cpu, std::vector<NoiseSpan> spans, const NoiseWindow& window);

}  // namespace cstool
