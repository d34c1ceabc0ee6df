// Counts the context switches of a set of threads inside a time window, from decoded
// sched_switch events. `cstool msa` uses it to tell whether a /proc read of the kernel's
// switch counters raced with a switch of the target (see commands/msa_command.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "model/events.h"

namespace cstool {

class SwitchWatch : public EventSink {
 public:
  // Switches whose prev is one of `tids` with lo <= ts <= hi.
  SwitchWatch(std::vector<int32_t> tids, int64_t lo, int64_t hi)
      : tids_(std::move(tids)), lo_(lo), hi_(hi) {
    std::sort(tids_.begin(), tids_.end());
  }
  void PushSchedSwitch(const SchedSwitch& e) override {
    if (e.c.ts >= lo_ && e.c.ts <= hi_ &&
        std::binary_search(tids_.begin(), tids_.end(), e.prev_pid))
      ++hits_;
  }
  void PushLostEvents(const LostEvents& e) override {
    if (e.ts >= lo_) lost_ = true;  // a gap inside (or right after) the window hides switches
  }
  int64_t lo() const { return lo_; }
  uint64_t hits() const { return hits_; }
  bool lost() const { return lost_; }
  bool clean() const { return hits_ == 0 && !lost_; }

 private:
  std::vector<int32_t> tids_;
  int64_t lo_;
  int64_t hi_;
  uint64_t hits_ = 0;
  bool lost_ = false;
};

}  // namespace cstool
