// The progress line while recording ("cstool CMD: 1234 events/s, 5678 events, 1.2 MiB,
// lost 0"), twice a second through Messages::Progress, cleared when the read loop ends.
// `cstool record` and `cstool irq` show it (on a terminal).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "base/messages.h"
#include "recording/recorder.h"

namespace cstool {

// "512 B", "1.5 KiB", "12.3 MiB", "1.25 GiB".
std::string HumanBytes(uint64_t bytes);

class ProgressLine final : public RecordListener {
 public:
  explicit ProgressLine(Messages& messages);
  ~ProgressLine() override;  // clears the line (error paths too)
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void Reading(const RecordCounts& counts) override;
  void Stopped() override;

 private:
  using Clock = std::chrono::steady_clock;
  void Clear();

  Messages& messages_;
  uint64_t page_size_;
  bool shown_ = false;
  Clock::time_point last_ = Clock::now();
  uint64_t last_events_ = 0;
};

}  // namespace cstool
