// Counts the trace events of an injection run (`cstool nmi-inject`), per second since it
// began and in total.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cstool {

struct InjectInterval {
  double start_s = 0;  // since injection began
  double length_s = 0;
  uint64_t achieved = 0;
  uint64_t context = 0;
  // Achieved events that ran in the same context event (interrupt) as an earlier one.
  uint64_t repeated = 0;
};

// The timer source counts the perf hrtimer's expiries, each inside a local timer interrupt:
//
//   local_timer_entry  expire  ...  local_timer_entry  expire ... expire
//   |-- interrupt, on time --|      |-- interrupt, nearly a period late --|
//                                                                 ^ repeated
//
// An interrupt that comes nearly a period late (the vCPU was not running, or interrupts
// were off) reprograms the clock for the timer's next expiry, finds it already past, and
// runs the timer again before it returns. Such an expiry is achieved (perf took a sample)
// and also repeated, so achieved - repeated is at most the number of interrupts.
class InjectionTally {
 public:
  // `achieved_in_context`: each achieved event runs inside the context event before it.
  InjectionTally(int64_t start, int achieved_idx, int context_idx, bool achieved_in_context)
      : start_(start),
        achieved_idx_(achieved_idx),
        context_idx_(context_idx),
        achieved_in_context_(achieved_in_context) {}

  // Events from `end` on (after the injection stopped) are not counted.
  void SetEnd(int64_t end) { end_ = end; }
  // One event of watch `idx` at `ts`, in the order of the CPU's buffer.
  void Push(int idx, int64_t ts);

  // Second k covers [start + k s, start + (k + 1) s); seconds without events may be
  // missing at the end.
  const std::vector<InjectInterval>& seconds() const { return seconds_; }
  // Second k's counts (zero when nothing was counted in it), with start_s and length_s unset.
  InjectInterval Second(size_t k) const {
    return k < seconds_.size() ? seconds_[k] : InjectInterval{};
  }
  const InjectInterval& total() const { return total_; }

 private:
  int64_t start_;
  int64_t end_ = INT64_MAX;
  int achieved_idx_;
  int context_idx_;
  bool achieved_in_context_;
  // An achieved event ran since the last context event. Kept outside the window too, so
  // that the first event inside it is judged by what ran before.
  bool achieved_since_context_ = false;
  std::vector<InjectInterval> seconds_;
  InjectInterval total_;
};

}  // namespace cstool
