// The switch-cause vocabulary. A cause is a kind plus,
// for sleep:<syscall>, the syscall number; it packs into 32 bits so per-thread cause
// tables stay small and labels are made only when a report is rendered.
#pragma once

#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

namespace cstool {

// X(enumerator, label): voluntary kinds first (IsVoluntary relies on the order).
// kSleepSyscall's label is completed with the syscall name (SyscallTable::CauseLabel).
#define CSTOOL_CAUSE_KINDS(X)               \
  X(kSleepSyscall, "sleep:")                \
  X(kSleepFault, "sleep:fault")             \
  X(kSleepKernel, "sleep:kernel")           \
  X(kSleepUntraced, "sleep:untraced")       \
  X(kExit, "exit")                          \
  X(kStop, "stop")                          \
  X(kYield, "yield")                        \
  X(kPreemptWakeup, "preempt:wakeup")       \
  X(kPreemptIrq, "preempt:irq")             \
  X(kPreemptTick, "preempt:tick")           \
  X(kPreemptMigration, "preempt:migration") \
  X(kPreemptUnknown, "preempt:unknown")

enum class CauseKind : uint8_t {
#define CSTOOL_CAUSE_ENUM(e, label) e,
  CSTOOL_CAUSE_KINDS(CSTOOL_CAUSE_ENUM)
#undef CSTOOL_CAUSE_ENUM
};

inline constexpr std::string_view kCauseKindLabels[] = {
#define CSTOOL_CAUSE_LABEL(e, label) label,
    CSTOOL_CAUSE_KINDS(CSTOOL_CAUSE_LABEL)
#undef CSTOOL_CAUSE_LABEL
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
  return static_cast<size_t>(k) < std::size(kCauseKindLabels)
             ? kCauseKindLabels[static_cast<size_t>(k)]
             : "?";
}

}  // namespace cstool
