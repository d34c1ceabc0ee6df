#include "analysis/irq_noise_observer.h"

#include <fmt/core.h>

#include <algorithm>

namespace cstool {
namespace {

// "thread:comm/tid", or "thread:tid" when the trace never named it.
std::string ThreadName(const Thread& t) {
  return t.comm.empty() ? fmt::format("thread:{}", t.tid)
                        : fmt::format("thread:{}/{}", t.comm, t.tid);
}

NoiseSource SourceOf(IrqKind kind) {
  switch (kind) {
    case IrqKind::kNmi:
      return NoiseSource::kNmi;
    case IrqKind::kSoftirq:
      return NoiseSource::kSoftirq;
    case IrqKind::kHardirq:
    case IrqKind::kVector:
      break;
  }
  return NoiseSource::kIrq;
}

}  // namespace

IrqNoiseObserver::IrqNoiseObserver(std::vector<int32_t> cpus) : cpus_(std::move(cpus)) {
  for (int32_t c : cpus_) by_cpu_[c];
}

IrqNoiseObserver::Cpu& IrqNoiseObserver::At(int32_t cpu) { return by_cpu_[cpu]; }

const std::string* IrqNoiseObserver::Intern(std::string name) {
  auto it = names_.find(name);
  if (it == names_.end()) it = names_.insert(std::move(name)).first;
  return &*it;
}

void IrqNoiseObserver::OnIrq(const IrqInterval& iv) {
  At(iv.cpu).spans.push_back({SourceOf(iv.kind), iv.start, iv.end, Intern(std::string(iv.name))});
}

void IrqNoiseObserver::Close(Cpu& cpu, int64_t ts) {
  if (cpu.running == Running::kTask && cpu.task)
    cpu.spans.push_back({NoiseSource::kThread, cpu.since, ts, Intern(ThreadName(*cpu.task))});
  else if (cpu.running == Running::kUnknown)
    cpu.unknown.emplace_back(cpu.since, ts);
}

void IrqNoiseObserver::OnCpuCurrent(const CpuCurrentEvent& e) {
  Cpu& cpu = At(e.cpu);
  Close(cpu, e.ts);
  cpu.running = !e.known ? Running::kUnknown : e.current ? Running::kTask : Running::kIdle;
  cpu.task = e.current;
  cpu.since = e.ts;
}

NoiseReport IrqNoiseObserver::Measure(const NoiseWindow& window) const {
  NoiseReport report;
  report.window = window;
  for (const auto& [id, cpu] : by_cpu_) {
    if (!cpus_.empty() && std::find(cpus_.begin(), cpus_.end(), id) == cpus_.end()) continue;
    std::vector<NoiseSpan> spans = cpu.spans;
    std::vector<std::pair<int64_t, int64_t>> unknown = cpu.unknown;
    const int64_t end = std::max(window.end, cpu.since);
    std::string open_name;
    if (cpu.running == Running::kTask && cpu.task) {
      open_name = ThreadName(*cpu.task);
      spans.push_back({NoiseSource::kThread, cpu.since, end, &open_name});
    } else if (cpu.running == Running::kUnknown) {
      unknown.emplace_back(cpu.since, end);
    }
    CpuNoise n = MeasureCpuNoise(id, std::move(spans), window);
    for (auto [a, b] : unknown)
      n.unknown_ns += std::max<int64_t>(0, std::min(b, window.end) - std::max(a, window.start));
    report.cpus.push_back(std::move(n));
  }
  return report;
}

}  // namespace cstool
