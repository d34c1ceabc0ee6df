// Virtual counters (`-V`): values from outside the PMU read beside the perf counters.
//   read-bytes, write-bytes: the thread's rchar / wchar of /proc/PID/task/TID/io, the
//     bytes passed to read(2)/write(2) and friends (whether or not they reached a disk).
//   energy: the machine's package energy in microjoules, the sum of the powercap RAPL
//     package zones (/sys/class/powercap/intel-rapl:N/energy_uj); system-wide, not per
//     thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cstool {

struct VirtualCounter {
  enum class Kind { kReadBytes, kWriteBytes, kEnergy };
  std::string name;
  Kind kind = Kind::kReadBytes;
  bool per_thread() const { return kind != Kind::kEnergy; }
};

// Parses "read-bytes,write-bytes,energy"; throws cstool::Error (usage) for an unknown
// name, and for `energy` on a machine without RAPL zones (naming what powercap has).
std::vector<VirtualCounter> ParseVirtualList(std::string_view list);

struct ThreadIo {
  uint64_t rchar = 0;
  uint64_t wchar = 0;
};
// /proc/TGID/task/TID/io; nullopt once the thread is gone.
std::optional<ThreadIo> ReadThreadIo(int32_t tgid, int32_t tid);

// Package energy in microjoules (wraps at the zones' max_energy_range_uj); nullopt
// without RAPL.
std::optional<uint64_t> ReadPackageEnergyUj();

}  // namespace cstool
