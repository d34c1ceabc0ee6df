// Reading meaning out of an event's print format (struct tep_print_arg trees):
// sched_switch prev_state letters and the preempt ("+") bit, and __print_symbolic
// tables such as softirq vector names. Nothing here is hard-coded per kernel.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct tep_event;
struct tep_print_arg;

namespace cstool {

// Evaluates an integer expression of a print format with `field` = `value`.
// Returns nullopt for anything that is not an integer expression of that field.
std::optional<uint64_t> EvalPrintArg(const tep_print_arg* arg, std::string_view field,
                                     uint64_t value);

// TaskStateBits for one letter of the prev_state print flags ('S' -> interruptible...).
// Returns 0 for modifier letters without a state of their own (K, W, N) and
// kStateUnknownBits for letters cstool does not know.
uint16_t TaskStateBitsForLetter(std::string_view letter);

struct DecodedTaskState {
  uint16_t bits = 0;  // TaskStateBits; 0 = runnable (R)
  bool preempted = false;
};

// prev_state -> (TaskStateBits, preempted) as the event's print format defines it.
class TaskStateMap {
 public:
  struct Flag {
    uint64_t value = 0;
    std::string letter;
  };

  // Built from sched_switch's print format. If the format cannot be understood the
  // map falls back to the layout of kernels >= 4.14 and from_format() is false.
  explicit TaskStateMap(const tep_event* sched_switch);
  // Built from explicit values (tests, fallbacks).
  TaskStateMap(uint64_t state_mask, uint64_t preempt_mask, std::vector<Flag> flags);

  DecodedTaskState Map(uint64_t raw) const {
    if (!table_.empty()) return table_[raw & table_mask_];
    return Compute(raw);
  }

  bool from_format() const { return from_format_; }
  uint64_t state_mask() const { return state_mask_; }
  uint64_t preempt_mask() const { return preempt_mask_; }
  const std::vector<Flag>& flags() const { return flags_; }
  const std::string& problem() const { return problem_; }

 private:
  DecodedTaskState Compute(uint64_t raw) const;
  void BuildTable();

  uint64_t state_mask_ = 0;
  uint64_t preempt_mask_ = 0;
  std::vector<Flag> flags_;
  bool from_format_ = false;
  std::string problem_;
  uint64_t table_mask_ = 0;
  std::vector<DecodedTaskState> table_;
};

// The {value, "name"} pairs of the first __print_symbolic() over `field` in the
// event's print format (e.g. softirq_entry's vec -> "HI", "TIMER", ...).
std::vector<std::pair<uint64_t, std::string>> PrintSymbols(const tep_event* event,
                                                           std::string_view field);

}  // namespace cstool
