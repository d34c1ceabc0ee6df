#include "commands/record_command.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "base/stop_signal.h"
#include "model/recording_info.h"
#include "pipeline/kernel_agreement.h"
#include "recording/recorder.h"

namespace cstool {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kStatusInterval = std::chrono::milliseconds(500);

std::string HumanBytes(uint64_t b) {
  if (b >= (uint64_t{1} << 30)) return fmt::format("{:.2f} GiB", b / double(1 << 30));
  if (b >= (uint64_t{1} << 20)) return fmt::format("{:.1f} MiB", b / double(1 << 20));
  if (b >= 1024) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{} B", b);
}

uint64_t LostOf(const CpuRecordStats& s) {
  // Overwritten events show up both in the pages' missed counts and in "overrun".
  return std::max(s.lost_events, s.overrun) + s.dropped;
}

// The progress line: rate, events, bytes and losses so far, twice a second.
class LiveStatus final : public RecordListener {
 public:
  explicit LiveStatus(Messages& messages) : messages_(messages) {}
  ~LiveStatus() override { Clear(); }

  void Reading(const RecordCounts& counts) override {
    auto now = Clock::now();
    if (now - last_ < kStatusInterval) return;
    const uint64_t events = counts.events;
    double dt = std::chrono::duration<double>(now - last_).count();
    double rate = last_events_ <= events && dt > 0 ? (events - last_events_) / dt : 0;
    messages_.Progress(fmt::format("{:.0f} events/s, {} events, {}, lost {}", rate, events,
                                   HumanBytes(counts.pages * page_size_), counts.lost_events));
    shown_ = true;
    last_ = now;
    last_events_ = events;
  }
  void Stopped() override { Clear(); }

 private:
  void Clear() {
    if (shown_) messages_.Progress("");
    shown_ = false;
  }

  Messages& messages_;
  uint64_t page_size_ = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  bool shown_ = false;
  Clock::time_point last_ = Clock::now();
  uint64_t last_events_ = 0;
};

void PrintSummary(Messages& messages, const RecordResult& r) {
  const RecordingInfo& info = r.info;
  uint64_t total = 0, lost = 0;
  for (const auto& c : info.cpus) {
    total += c.events;
    lost += LostOf(c);
  }
  messages.Status(
      fmt::format("wrote {} ({}) in {:.3f} s", r.path, HumanBytes(r.file_size), r.seconds));
  messages.Detail(fmt::format("  {:>5} {:>12} {:>10} {:>10} {:>10} {:>10}", "cpu", "events", "lost",
                              "lost-pages", "overrun", "dropped"));
  for (const auto& c : info.cpus)
    messages.Detail(fmt::format("  {:>5} {:>12} {:>10} {:>10} {:>10} {:>10}", c.cpu, c.events,
                                LostOf(c), c.lost_pages, c.overrun, c.dropped));
  messages.Detail(fmt::format("  total {} events, {:.0f} events/s, lost {} events", total,
                              r.seconds > 0 ? total / r.seconds : 0.0, lost));
  for (const auto& c : info.cpus) {
    if (c.lost_pages > 0 || LostOf(c) > 0)
      messages.Warning(fmt::format("events were lost on CPU {}; try a bigger buffer (-b)", c.cpu));
  }
}

}  // namespace

int RunRecord(const RecordOptions& options, Messages& messages) {
  RecordResult result;
  {
    LiveStatus status(messages);
    result = Record(options, messages, &status);
  }
  // The exit status is settled: Ctrl-C no longer cuts the summary (and its kernel
  // check, which analyses the whole file) short, as while recording.
  StopSignalScope signals;
  PrintSummary(messages, result);
  messages.Detail(fmt::format("  {}", KernelAgreementLine(result.path)));
  if (result.still_running_pid != 0)
    messages.Warning(fmt::format("command (pid {}) is still running", result.still_running_pid));
  return result.exit_status;
}

}  // namespace cstool
