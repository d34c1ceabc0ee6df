// Interrupt generators for `cstool nmi-inject`, all from user space on an unpatched
// kernel, each landing on one chosen CPU:
//   timer: a per-CPU perf software clock (PERF_COUNT_SW_CPU_CLOCK, pid -1) sampling
//          every 1/rate s; its hrtimer is pinned to the CPU, so each period ends in a
//          local timer interrupt there, without waking or switching any task.
//   ipi:   a counting per-CPU perf software event on the CPU, read(2) by a thread on
//          another CPU: the kernel reads an active event on its own CPU, via a
//          synchronous function-call IPI (call_function_single vector) per read.
//   nmi:   a per-CPU hardware cycle counter in frequency mode; each overflow is a
//          PMI, delivered as an NMI on x86. Needs a hardware PMU.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cstool {

enum class InjectSource : uint8_t { kTimer, kIpi, kNmi };

// "timer", "ipi", "nmi"; throws cstool::Error (usage) otherwise.
InjectSource ParseInjectSource(std::string_view name);
std::string_view InjectSourceName(InjectSource source);

class InterruptInjector {
 public:
  virtual ~InterruptInjector() = default;
  // Starts generating; stops (and releases everything) in the destructor or Stop().
  virtual void Start() = 0;
  virtual void Stop() = 0;
  // One line on how the interrupts are made.
  virtual std::string Describe() const = 0;
};

// Sets up (but does not start) `source` on `cpu` at `rate_hz`. Throws cstool::Error
// with the reason and, where the hardware cannot, the sources that work here.
std::unique_ptr<InterruptInjector> MakeInjector(InjectSource source, int cpu, double rate_hz);

// The sources that can be set up on `cpu` on this machine (probed by opening them).
std::vector<InjectSource> WorkingSources(int cpu);

}  // namespace cstool
