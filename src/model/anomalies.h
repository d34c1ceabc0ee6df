// Named anomaly counters (Perfetto's stats table): every surprise in the trace is
// counted here and printed by the report, never dropped silently. One table holds each
// kind's name, severity and description; --explain-anomalies and the man page say the
// same thing.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace cstool {

// What an anomaly means for the numbers (MeaningOf).
enum class AnomalySeverity : uint8_t { kInfo, kDataLoss, kError };

// X(enumerator, name, severity, description)
#define CSTOOL_ANOMALIES(X)                                                                    \
  X(kSwitchOutNotCurrent, "switch_out_not_current", kInfo,                                     \
    "a switch-out of a task other than the CPU's believed current one (a filtered or lost "    \
    "switch between others); the CPU's current task is corrected")                             \
  X(kMissingSwitchFromIdle, "missing_switch_from_idle", kInfo,                                 \
    "a task ran on a CPU last seen idle with no sched_switch recorded (the kernel omits some " \
    "idle-to-task switches); the switch is placed where the kernel's accounting puts it")      \
  X(kMissingSwitchOut, "missing_switch_out", kInfo,                                            \
    "a task shown running on a CPU was replaced there (or woken again while queued) with no "  \
    "sched_switch recorded for it (the kernel omits the switch-outs of some tasks); the "      \
    "switch is counted at its last run-time increment, voluntary unless it runs again first")  \
  X(kSwitchInWithoutWakeup, "switch_in_without_wakeup", kInfo,                                 \
    "switched in while believed asleep and no wakeup was seen (a pending signal kept it "      \
    "runnable); its wait counts as waiting for a CPU")                                         \
  X(kSwitchInAlreadyOnCpu, "switch_in_already_on_cpu", kInfo,                                  \
    "switched in while believed running on another CPU (its switch-out there was filtered or " \
    "lost); the old run is ended at the new switch")                                           \
  X(kEventFromSleepingThread, "event_from_sleeping_thread", kInfo,                             \
    "an event in the context of a thread believed asleep (its switch-in was not recorded); "   \
    "it is taken as running from that event")                                                  \
  X(kTimeBackwards, "time_backwards", kError,                                                  \
    "a CPU's timestamps went backwards (a damaged timestamp): the times between it and the "   \
    "CPU's earlier events are wrong")                                                          \
  X(kIrqExitWithoutEntry, "irq_exit_without_entry", kInfo,                                     \
    "an interrupt exit with no open entry (the trace began inside the interrupt)")             \
  X(kIrqExitMismatch, "irq_exit_mismatch", kInfo,                                              \
    "an interrupt exit of another kind than the open entry (an entry was lost)")               \
  X(kSysExitWithoutEnter, "sys_exit_without_enter", kInfo,                                     \
    "a syscall exit of a thread not known to be inside a syscall (its entry was lost or not "  \
    "recorded, or its syscall was given up on; one inside at the trace's start is not "        \
    "flagged)")                                                                                \
  X(kSysEnterWhileInSyscall, "sys_enter_while_in_syscall", kInfo,                              \
    "a syscall entry while already inside one (the exit was not seen)")                        \
  X(kTidReusedWithoutFree, "tid_reused_without_free", kInfo,                                   \
    "a thread id reappeared as a new thread before the old one was freed")                     \
  X(kFreeOfUnknownThread, "free_of_unknown_thread", kInfo,                                     \
    "sched_process_free of a thread the trace never showed")                                   \
  X(kForkOfPidZero, "fork_of_pid_zero", kError,                                                \
    "a sched_process_fork whose child pid is 0 or negative (pid 0 is the idle task, never "    \
    "forked: a damaged record); no thread is made of it")                                      \
  X(kPendingResolutionOverflow, "pending_resolution_overflow", kInfo,                          \
    "a thread running since before the trace never showed whether it was in a syscall; its "   \
    "held time is counted as unknown")                                                         \
  X(kLostEvents, "lost_events", kDataLoss,                                                     \
    "the ring buffer dropped events (a gap on a CPU); threads it may touch are marked !")      \
  X(kShortRecord, "short_record", kError,                                                      \
    "a record shorter than its event format; its fields were not read")                        \
  X(kBadString, "bad_string", kError, "a string field pointing outside its record")            \
  X(kUnknownEventType, "unknown_event_type", kError,                                           \
    "a record whose event id the file's formats do not define")

enum class Anomaly : uint8_t {
#define CSTOOL_ANOMALY_ENUM(e, name, severity, description) e,
  CSTOOL_ANOMALIES(CSTOOL_ANOMALY_ENUM)
#undef CSTOOL_ANOMALY_ENUM
      kCount
};

struct AnomalyInfo {
  std::string_view name;
  AnomalySeverity severity;
  std::string_view description;
};

inline constexpr std::array<AnomalyInfo, static_cast<size_t>(Anomaly::kCount)> kAnomalies = {{
#define CSTOOL_ANOMALY_INFO(e, name, severity, description) \
  {name, AnomalySeverity::severity, description},
    CSTOOL_ANOMALIES(CSTOOL_ANOMALY_INFO)
#undef CSTOOL_ANOMALY_INFO
}};

constexpr const AnomalyInfo& InfoOf(Anomaly a) { return kAnomalies[static_cast<size_t>(a)]; }
constexpr std::string_view NameOf(Anomaly a) { return InfoOf(a).name; }
constexpr std::string_view NameOf(AnomalySeverity s) {
  constexpr std::array<std::string_view, 3> kNames = {"info", "data_loss", "error"};
  return kNames[static_cast<size_t>(s)];
}
constexpr std::string_view MeaningOf(AnomalySeverity s) {
  constexpr std::array<std::string_view, 3> kMeanings = {
      "the trace and the model parted; the model corrected itself",
      "events are missing; the times around them are estimates",
      "the file itself is damaged; records were skipped or are out of time order"};
  return kMeanings[static_cast<size_t>(s)];
}
// The entry named `name`, or nullptr.
constexpr const AnomalyInfo* FindAnomaly(std::string_view name) {
  for (const AnomalyInfo& info : kAnomalies)
    if (info.name == name) return &info;
  return nullptr;
}

class AnomalyCounters {
 public:
  void Add(Anomaly a, uint64_t n = 1) { counts_[static_cast<size_t>(a)] += n; }
  uint64_t Get(Anomaly a) const { return counts_[static_cast<size_t>(a)]; }
  template <typename F>
  void ForEachNonZero(F&& f) const {
    for (size_t i = 0; i < counts_.size(); ++i)
      if (counts_[i]) f(kAnomalies[i].name, counts_[i]);
  }

 private:
  std::array<uint64_t, static_cast<size_t>(Anomaly::kCount)> counts_{};
};

}  // namespace cstool
