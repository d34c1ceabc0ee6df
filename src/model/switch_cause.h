// The switch-cause vocabulary. A cause is a kind plus,
// for sleep:<syscall>, the syscall number; it packs into 32 bits so per-thread cause
// tables stay small and labels are made only when a report is rendered.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cstool {

enum class CauseKind : uint8_t {
  // voluntary
  kSleepSyscall,
  kSleepFault,
  kSleepKernel,
  kExit,
  kStop,
  // involuntary
  kYield,
  kPreemptWakeup,
  kPreemptIrq,
  kPreemptTick,
  kPreemptMigration,
  kPreemptUnknown,
};

constexpr bool IsVoluntary(CauseKind k) { return k <= CauseKind::kStop; }

enum class PreemptedAt : uint8_t { kSyscallReturn, kIrqReturn, kKernel, kOther };
inline constexpr size_t kPreemptedAtCount = 4;
inline constexpr std::string_view kPreemptedAtKeys[kPreemptedAtCount] = {
    "syscall_return", "irq_return", "kernel", "other"};

struct SwitchCause {
  CauseKind kind = CauseKind::kPreemptUnknown;
  int32_t syscall = -1;  // for kSleepSyscall

  uint32_t Pack() const {
    return (static_cast<uint32_t>(kind) << 24) | (static_cast<uint32_t>(syscall) & 0xffffff);
  }
  static SwitchCause Unpack(uint32_t v) {
    int32_t nr = static_cast<int32_t>(v & 0xffffff);
    if (nr == 0xffffff) nr = -1;
    return {static_cast<CauseKind>(v >> 24), nr};
  }
  bool operator==(const SwitchCause&) const = default;
};

// Fixed labels; kSleepSyscall needs a syscall name, see SyscallTable::CauseLabel.
constexpr std::string_view CauseKindLabel(CauseKind k) {
  switch (k) {
    case CauseKind::kSleepSyscall:
      return "sleep:";
    case CauseKind::kSleepFault:
      return "sleep:fault";
    case CauseKind::kSleepKernel:
      return "sleep:kernel";
    case CauseKind::kExit:
      return "exit";
    case CauseKind::kStop:
      return "stop";
    case CauseKind::kYield:
      return "yield";
    case CauseKind::kPreemptWakeup:
      return "preempt:wakeup";
    case CauseKind::kPreemptIrq:
      return "preempt:irq";
    case CauseKind::kPreemptTick:
      return "preempt:tick";
    case CauseKind::kPreemptMigration:
      return "preempt:migration";
    case CauseKind::kPreemptUnknown:
      return "preempt:unknown";
  }
  return "?";
}

}  // namespace cstool
