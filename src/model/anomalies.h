// Named anomaly counters (Perfetto's stats table): every surprise in the trace is
// counted here and printed by the report, never dropped silently.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace cstool {

enum class Anomaly : uint8_t {
  kSwitchOutNotCurrent,        // sched_switch prev was not the task we believed current
  kMissingSwitchFromIdle,      // a task ran on a CPU we saw go idle, with no switch recorded
  kSwitchInWithoutWakeup,      // switched in while we believed it asleep (signal pending, or lost)
  kSwitchInAlreadyOnCpu,       // switched in while we believed it running on another CPU
  kEventFromSleepingThread,    // an event ran in the context of a thread believed asleep
  kTimeBackwards,              // a CPU's timestamps went backwards
  kIrqExitWithoutEntry,        // an interrupt exit with no open entry (trace began inside it)
  kIrqExitMismatch,            // an interrupt exit of another kind than the open entry
  kSysExitWithoutEnter,        // sys_exit of a syscall whose enter was not seen
  kSysEnterWhileInSyscall,     // sys_enter while already inside a syscall
  kTidReusedWithoutFree,       // a tid reappeared before its old thread was freed
  kFreeOfUnknownThread,        // sched_process_free of a thread never seen
  kPendingResolutionOverflow,  // user/sys of an already-running thread never became known
  kLostEvents,                 // gaps reported by the ring buffer
  kCount
};

inline constexpr std::array<std::string_view, static_cast<size_t>(Anomaly::kCount)> kAnomalyNames =
    {"switch_out_not_current",      "missing_switch_from_idle",
     "switch_in_without_wakeup",    "switch_in_already_on_cpu",
     "event_from_sleeping_thread",  "time_backwards",
     "irq_exit_without_entry",      "irq_exit_mismatch",
     "sys_exit_without_enter",      "sys_enter_while_in_syscall",
     "tid_reused_without_free",     "free_of_unknown_thread",
     "pending_resolution_overflow", "lost_events"};

class AnomalyCounters {
 public:
  void Add(Anomaly a, uint64_t n = 1) { counts_[static_cast<size_t>(a)] += n; }
  uint64_t Get(Anomaly a) const { return counts_[static_cast<size_t>(a)]; }
  template <typename F>
  void ForEachNonZero(F&& f) const {
    for (size_t i = 0; i < counts_.size(); ++i)
      if (counts_[i]) f(kAnomalyNames[i], counts_[i]);
  }

 private:
  std::array<uint64_t, static_cast<size_t>(Anomaly::kCount)> counts_{};
};

}  // namespace cstool
