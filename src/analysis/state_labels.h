// Human-readable names and colours of microstates for the pictures (timeline export
// and HTML barscopes): "Running (user)", "Sleeping: futex", ...
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "model/microstate.h"
#include "model/switch_cause.h"
#include "model/syscall_table.h"

namespace cstool {

constexpr std::string_view MicrostateLabel(Microstate m) {
  return kMicrostateNames[static_cast<size_t>(m)].label;
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
