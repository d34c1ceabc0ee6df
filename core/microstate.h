// The microstate vocabulary (design note, "Microstates"): every nanosecond of a
// thread's observed lifetime is in exactly one of these.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace cstool {

enum class Microstate : uint8_t {
  kUser,
  kSys,
  kIrq,
  kSoftirq,
  kWaitCpuWakeup,
  kWaitCpuPreempted,
  kSleep,
  kSleepFutex,
  kSleepPoll,
  kSleepUninterruptible,
  kSleepPaging,
  kStopped,
  kZombie,
  kUnknown,
};

inline constexpr size_t kMicrostateCount = static_cast<size_t>(Microstate::kUnknown) + 1;

// JSON keys under `microstates_ns`, in enum order.
inline constexpr std::array<std::string_view, kMicrostateCount> kMicrostateKeys = {
    "user",
    "sys",
    "irq",
    "softirq",
    "wait_cpu_wakeup",
    "wait_cpu_preempted",
    "sleep",
    "sleep_futex",
    "sleep_poll",
    "sleep_uninterruptible",
    "sleep_paging",
    "stopped",
    "zombie",
    "unknown"};

// Short column headers for tables (prstat -m style where one exists).
inline constexpr std::array<std::string_view, kMicrostateCount> kMicrostateColumns = {
    "USR", "SYS",  "IRQ", "SIRQ", "LATW", "LATP", "SLP",
    "LCK", "POLL", "IO",  "PAG",  "STP",  "ZMB",  "UNK"};

constexpr std::string_view MicrostateKey(Microstate m) {
  return kMicrostateKeys[static_cast<size_t>(m)];
}

constexpr bool IsOnCpu(Microstate m) {
  return m == Microstate::kUser || m == Microstate::kSys || m == Microstate::kIrq ||
         m == Microstate::kSoftirq;
}

constexpr bool IsWaitingForCpu(Microstate m) {
  return m == Microstate::kWaitCpuWakeup || m == Microstate::kWaitCpuPreempted;
}

constexpr bool IsSleeping(Microstate m) {
  return m == Microstate::kSleep || m == Microstate::kSleepFutex || m == Microstate::kSleepPoll ||
         m == Microstate::kSleepUninterruptible || m == Microstate::kSleepPaging ||
         m == Microstate::kStopped;
}

using MicrostateTimes = std::array<int64_t, kMicrostateCount>;

}  // namespace cstool
