#include "recording/progress_line.h"

#include <fmt/core.h>
#include <unistd.h>

namespace cstool {
namespace {

constexpr auto kStatusInterval = std::chrono::milliseconds(500);

}  // namespace

std::string HumanBytes(uint64_t b) {
  if (b >= (uint64_t{1} << 30)) return fmt::format("{:.2f} GiB", b / double(1 << 30));
  if (b >= (uint64_t{1} << 20)) return fmt::format("{:.1f} MiB", b / double(1 << 20));
  if (b >= 1024) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{} B", b);
}

ProgressLine::ProgressLine(Messages& messages)
    : messages_(messages), page_size_(static_cast<uint64_t>(::sysconf(_SC_PAGESIZE))) {}

ProgressLine::~ProgressLine() { Clear(); }

void ProgressLine::Reading(const RecordCounts& counts) {
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

void ProgressLine::Stopped() { Clear(); }

void ProgressLine::Clear() {
  if (shown_) messages_.Progress("");
  shown_ = false;
}

}  // namespace cstool
