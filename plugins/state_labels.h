// Human-readable names and colours of microstates for the pictures (timeline export
// and HTML barscopes): "Running (user)", "Sleeping: futex", ...
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "core/microstate.h"
#include "core/switch_cause.h"
#include "core/syscall_table.h"

namespace cstool {

inline constexpr std::array<std::string_view, kMicrostateCount> kMicrostateLabels = {
    "Running (user)",
    "Running (sys)",
    "IRQ",
    "SoftIRQ",
    "Runnable (wakeup)",
    "Runnable (preempted)",
    "Sleeping",
    "Sleeping: futex",
    "Sleeping: poll",
    "Uninterruptible",
    "Uninterruptible: page fault",
    "Stopped",
    "Zombie",
    "Unknown"};

// Colours in the barscope legend (CSS hex), in Microstate order.
inline constexpr std::array<std::string_view, kMicrostateCount> kMicrostateColors = {
    "#2e9e44", "#1f6fd1", "#d62728", "#ff7f0e", "#f2c500", "#b8860b", "#d9d9d9",
    "#c5b0d5", "#aec7e8", "#8c564b", "#e377c2", "#7f7f7f", "#404040", "#f4f4f4"};

constexpr std::string_view MicrostateLabel(Microstate m) {
  return kMicrostateLabels[static_cast<size_t>(m)];
}

// The label of a state slice, refined by the switch that started it when known
// (`after` is the cause of that switch-out, `has_after` whether there was one):
// "Sleeping: read", "Uninterruptible: fsync", "Runnable (yield)".
inline std::string SliceLabel(Microstate m, bool has_after, SwitchCause after,
                              const SyscallTable& syscalls) {
  if (has_after && after.kind == CauseKind::kSleepSyscall && after.syscall >= 0) {
    const std::string& name = syscalls.Name(after.syscall);
    switch (m) {
      case Microstate::kSleep:
      case Microstate::kSleepFutex:
      case Microstate::kSleepPoll:
        return "Sleeping: " + name;
      case Microstate::kSleepUninterruptible:
        return "Uninterruptible: " + name;
      default:
        break;
    }
  }
  if (has_after && m == Microstate::kWaitCpuPreempted && after.kind == CauseKind::kYield)
    return "Runnable (yield)";
  return std::string(MicrostateLabel(m));
}

}  // namespace cstool
