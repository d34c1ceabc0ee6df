// How many bytes the per-CPU readers may still write, shared by all of them: a
// recording stops cleanly at `--max-size`, or before the disk fills up, instead of
// failing with a half-written file. The recorder lowers the limit while recording (the
// disk's free space changes); a reader whose chunk does not fit, or whose write fails
// with ENOSPC, writes nothing more and says so here, and the recorder ends the
// recording. What was written stays whole: a chunk is written completely or not at all.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

namespace cstool {

class WriteBudget {
 public:
  // `stop_reserve`: room held back until OpenStopReserve(), for the pages the CPUs still
  // hold when the recording stops (a quiet CPU's last page may hold events from nearly
  // its whole length, read only then).
  explicit WriteBudget(uint64_t limit, uint64_t stop_reserve = 0)
      : limit_(limit), stop_reserve_(stop_reserve) {}

  // Claims `bytes` for a chunk about to be written; false (and exhausted from then on)
  // when it would pass the limit.
  bool Claim(uint64_t bytes) {
    if (exhausted_.load()) return false;
    uint64_t used = used_.load();
    do {
      const uint64_t limit = limit_.load();
      const uint64_t held = reserve_open_.load() ? 0 : std::min(stop_reserve_, limit);
      if (used + bytes > limit - held) {
        // At the stop each CPU writes what it still holds: a busy CPU's refused chunk
        // must not refuse a quiet one's last page.
        if (!reserve_open_.load()) Exhaust();
        return false;
      }
    } while (!used_.compare_exchange_weak(used, used + bytes));
    return true;
  }
  // The recording stops: the reserve may be claimed, by writes the exhaustion refused too
  // (after a full disk too: the budget kept the reserve's room, and a write that still
  // fails gives its claim back), and a refusal no longer refuses the others.
  void OpenStopReserve() {
    reserve_open_ = true;
    exhausted_ = false;
  }
  // Gives back a claim whose write failed.
  void Return(uint64_t bytes) { used_.fetch_sub(bytes); }
  // Lowers the limit (never raises it).
  void Lower(uint64_t limit) {
    uint64_t cur = limit_.load();
    while (limit < cur && !limit_.compare_exchange_weak(cur, limit)) {
    }
  }
  // A write failed with ENOSPC: the disk is full before the limit.
  void DiskFull() {
    disk_full_ = true;
    Exhaust();
  }

  bool exhausted() const { return exhausted_.load(); }
  bool disk_full() const { return disk_full_.load(); }
  uint64_t used() const { return used_.load(); }
  uint64_t limit() const { return limit_.load(); }

 private:
  void Exhaust() { exhausted_ = true; }

  std::atomic<uint64_t> limit_;
  const uint64_t stop_reserve_;
  std::atomic<bool> reserve_open_{false};
  std::atomic<uint64_t> used_{0};
  std::atomic<bool> exhausted_{false};
  std::atomic<bool> disk_full_{false};
};

}  // namespace cstool
