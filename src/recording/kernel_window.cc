#include "recording/kernel_window.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "base/errors.h"
#include "kernel/kernel_counters.h"
#include "tracefs/live_cpu_source.h"

namespace cstool {
namespace {

// How often the buffers are measured, and how much room beyond the measured rate a
// buffer gets (rates vary; a CPU's buffer that grew too little grows again).
constexpr int64_t kGrowCheckNs = 250000000;  // 250 ms
constexpr double kHeadroom = 1.5;
// The rate of a CPU is taken only after this long: the first events (task start-up,
// the command's exec) are burstier than what follows.
constexpr int64_t kMinRateSpanNs = 200000000;  // 200 ms
// Pages read per Drain call while a stopped instance is emptied.
constexpr size_t kDrainPages = 256;

// MemAvailable in bytes, 0 if unknown.
uint64_t MemAvailable() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("MemAvailable:", 0) == 0)
      return std::strtoull(line.c_str() + 13, nullptr, 10) << 10;
  return 0;
}

}  // namespace

std::vector<size_t> ResizeSteps(size_t from_kb, size_t to_kb, size_t step_kb, size_t max_steps) {
  std::vector<size_t> steps;
  if (to_kb > from_kb) {
    const size_t grow = to_kb - from_kb;
    const size_t most = std::max<size_t>(max_steps, 1);
    const size_t within = std::max<size_t>(step_kb, 1);
    const size_t n = std::clamp<size_t>((grow + within - 1) / within, 1, most);
    // Equal steps but the last, which is no larger; rounding up may leave fewer of them.
    const size_t step = (grow + n - 1) / n;
    for (size_t kb = from_kb + step; kb < to_kb; kb += step) steps.push_back(kb);
  }
  if (to_kb != from_kb) steps.push_back(to_kb);
  return steps;
}

bool BufferGrowth::Raise(size_t want_kb) {
  if (growing() || want_kb <= target_kb_ + target_kb_ / 8) return false;
  target_kb_ = want_kb;
  const std::vector<size_t> steps = ResizeSteps(kb_, target_kb_);
  step_kb_ = steps.front() - kb_;
  return true;
}

void BufferGrowth::Restart(size_t kb) {
  const size_t target = target_kb_;
  kb_ = target_kb_ = kb;
  if (target > kb) Raise(target);
}

void KernelWindow::Step(size_t i) {
  BufferGrowth& g = growth_[i];
  const size_t kb = g.NextKb();
  try {
    session_->ResizeCpuBuffer(cpus_[i], kb);
    g.Took(kb);
  } catch (const Error& e) {
    messages_.Warning(
        fmt::format("flight window: CPU {} stays at {} KiB: {}", cpus_[i], g.kb(), e.what()));
    g.GiveUp();
  }
}

KernelWindow::KernelWindow(SessionConfig config, std::vector<int> cpus, int64_t window_ns,
                           size_t cap_bytes, Messages& messages)
    : config_(std::move(config)),
      cpus_(std::move(cpus)),
      window_ns_(window_ns),
      messages_(messages) {
  // A dump briefly holds two instances: each CPU's buffer may take at most a quarter
  // of the memory available now, split between the CPUs.
  uint64_t cap = cap_bytes;
  if (const uint64_t avail = MemAvailable(); avail > 0)
    cap = std::min<uint64_t>(cap, avail / 4 / std::max<size_t>(cpus_.size(), 1));
  cap_kb_ = std::max<size_t>(static_cast<size_t>(cap >> 10), config_.buffer_kb);
  growth_.assign(cpus_.size(), BufferGrowth(config_.buffer_kb));
  overrun_.assign(cpus_.size(), 0);
  session_ = std::make_unique<TracefsSession>(config_, messages_);
}

void KernelWindow::Start(int64_t now) {
  session_->Start();
  started_ = now;
  last_grow_check_ = now;
}

std::string KernelWindow::Grow(int64_t now) {
  for (size_t n = 0; n < cpus_.size(); ++n) {
    const size_t i = next_to_step_++ % cpus_.size();
    if (!growth_[i].growing()) continue;
    Step(i);
    break;
  }
  if (now - last_grow_check_ < kGrowCheckNs) return "";
  last_grow_check_ = now;
  std::string grown;
  for (size_t i = 0; i < cpus_.size(); ++i) {
    const std::string stats = session_->ReadCpuStats(cpus_[i]);
    const auto overrun = static_cast<uint64_t>(CpuStatField(stats, "overrun"));
    const bool overwriting = overrun > overrun_[i];
    overrun_[i] = overrun;
    // The rate this CPU's buffer was written at: what it holds over the span it holds
    // (since its oldest event, which an overwrite moves forward).
    const double held_ns =
        (CpuStatField(stats, "now ts") - CpuStatField(stats, "oldest event ts")) * 1e9;
    if (!overwriting && now - started_ < kMinRateSpanNs) continue;
    const double rate = CpuStatField(stats, "bytes") / std::max(held_ns, 1e6);
    const double want = rate * static_cast<double>(window_ns_) * kHeadroom;
    const size_t want_kb = std::min(cap_kb_, static_cast<size_t>(std::ceil(want / 1024)));
    const size_t from_kb = growth_[i].kb();
    if (!growth_[i].Raise(want_kb)) continue;
    grown +=
        fmt::format("{}CPU {} {} -> {} KiB", grown.empty() ? "" : ", ", cpus_[i], from_kb, want_kb);
  }
  return grown;
}

std::unique_ptr<TracefsSession> KernelWindow::NewInstance() {
  SessionConfig config = config_;
  config.instance_suffix = fmt::format("{}", ++generation_);
  return std::make_unique<TracefsSession>(config, messages_);
}

FlightWindow KernelWindow::Take(int64_t asked_at, int64_t* end, bool grow_back) {
  std::unique_ptr<TracefsSession> next = NewInstance();
  // Tasks forked before the first copy are in it; those forked before the old instance
  // stops are added by its event-fork and taken by the second copy; later ones are
  // the new instance's own event-fork's.
  next->CopyPidFilters(*session_);
  const int64_t next_started = MonotonicNowNs();
  next->Start();
  next->CopyPidFilters(*session_);
  session_->Stop();
  *end = MonotonicNowNs();
  // The new instance goes on whatever happens to the old one's pages.
  const std::unique_ptr<TracefsSession> old = std::exchange(session_, std::move(next));
  const int64_t old_started = std::exchange(started_, next_started);
  overrun_.assign(cpus_.size(), 0);
  last_grow_check_ = next_started;
  // The new instance grows to the old one's sizes now, after the swap: the steps' writes
  // (each sleeps in the kernel) before it would put the dump's end well after its
  // trigger. Until grown, it keeps less than a window.
  for (size_t i = 0; i < cpus_.size(); ++i) {
    growth_[i].Restart(config_.buffer_kb);
    while (grow_back && growth_[i].growing()) Step(i);
  }

  FlightWindow window(cpus_, window_ns_, old_started);
  for (int cpu : cpus_) {
    LiveCpuSource source(old->instance(), cpu);
    source.SetPageSink([&window, cpu](std::span<const uint8_t> page, int64_t last_ts,
                                      uint32_t events) { window.Add(cpu, page, last_ts, events); });
    while (source.Drain(kDrainPages) > 0) {
      auto stream = source.StreamUntil(INT64_MAX);  // the records are not needed: drop them
      while (!stream->NextBatch().empty()) {
      }
    }
  }
  window.Trim(std::min(asked_at, *end));
  return window;  // the old instance is removed
}

}  // namespace cstool
