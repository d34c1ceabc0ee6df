// The microstate vocabulary: every nanosecond of a
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

// Every name of a microstate, in enum order: its JSON key (under `microstates_ns`),
// its short table column (prstat -m style where one exists), and its label and CSS
// colour in the pictures (timeline export, HTML barscopes).
struct MicrostateNames {
  std::string_view key;
  std::string_view column;
  std::string_view label;
  std::string_view color;
};
inline constexpr std::array<MicrostateNames, kMicrostateCount> kMicrostateNames = {{
    {"user", "USR", "Running (user)", "#2e9e44"},
    {"sys", "SYS", "Running (sys)", "#1f6fd1"},
    {"irq", "IRQ", "IRQ", "#d62728"},
    {"softirq", "SIRQ", "SoftIRQ", "#ff7f0e"},
    {"wait_cpu_wakeup", "LATW", "Runnable (wakeup)", "#f2c500"},
    {"wait_cpu_preempted", "LATP", "Runnable (preempted)", "#b8860b"},
    {"sleep", "SLP", "Sleeping", "#d9d9d9"},
    {"sleep_futex", "LCK", "Sleeping: futex", "#c5b0d5"},
    {"sleep_poll", "POLL", "Sleeping: poll", "#aec7e8"},
    {"sleep_uninterruptible", "IO", "Uninterruptible", "#8c564b"},
    {"sleep_paging", "PAG", "Uninterruptible: page fault", "#e377c2"},
    {"stopped", "STP", "Stopped", "#7f7f7f"},
    {"zombie", "ZMB", "Zombie", "#404040"},
    {"unknown", "UNK", "Unknown", "#f4f4f4"},
}};

constexpr std::string_view MicrostateKey(Microstate m) {
  return kMicrostateNames[static_cast<size_t>(m)].key;
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
