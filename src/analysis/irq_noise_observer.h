// Collects the noise spans of `cstool irq --noise` (analysis/irq_noise.h) from the state
// machine: every interrupt interval, and every stretch a task was a CPU's current task
// (Observer::OnCpuCurrent), with the stretches when a CPU's current task was unknown.
// Memory: one span per interrupt and per task run on the traced CPUs.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/irq_noise.h"
#include "sched/observer.h"

namespace cstool {

class IrqNoiseObserver : public Observer {
 public:
  // `cpus`: the traced CPUs, each reported even without noise; empty: the CPUs seen.
  explicit IrqNoiseObserver(std::vector<int32_t> cpus);

  uint32_t Hooks() const override { return HookBit(Hook::kIrq) | HookBit(Hook::kCpuCurrent); }
  void OnIrq(const IrqInterval& iv) override;
  void OnCpuCurrent(const CpuCurrentEvent& e) override;

  // Every CPU's noise over `window`; what still runs (or is still unknown) at the end of
  // the trace lasts to the window's end.
  NoiseReport Measure(const NoiseWindow& window) const;

 private:
  enum class Running : uint8_t { kUnknown, kIdle, kTask };
  struct Cpu {
    std::vector<NoiseSpan> spans;
    std::vector<std::pair<int64_t, int64_t>> unknown;
    Running running = Running::kUnknown;  // from the start of the trace
    int64_t since = INT64_MIN;
    const Thread* task = nullptr;
  };
  Cpu& At(int32_t cpu);
  const std::string* Intern(std::string name);
  // Ends what `cpu` was running at `ts` (a task's run becomes a thread span).
  void Close(Cpu& cpu, int64_t ts);

  std::vector<int32_t> cpus_;
  std::map<int32_t, Cpu> by_cpu_;
  std::set<std::string, std::less<>> names_;  // nodes never move: spans point into it
};

}  // namespace cstool
