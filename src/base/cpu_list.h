// CPU list strings as the kernel prints them ("0-3,5"), used by `-C` and by
// /sys/devices/system/cpu/online.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cstool {

// Parses "0,1", "0-1", "0-3,6,8-9" into sorted unique CPU numbers. Throws
// cstool::Error (usage) on anything else, including an empty list.
std::vector<int> ParseCpuList(std::string_view text);

// Formats CPU numbers back into the shortest list form ("0-3,6").
std::string FormatCpuList(const std::vector<int>& cpus);

// Hex mask for tracing_cpumask ("3" for CPUs 0 and 1), comma-grouped every 32 bits.
std::string CpuMaskHex(const std::vector<int>& cpus);

// CPUs currently online (/sys/devices/system/cpu/online).
std::vector<int> OnlineCpus();
// CPUs this machine can have (/sys/devices/system/cpu/possible): online or not.
std::vector<int> PossibleCpus();

// CPUs this process may run on (its affinity mask; 1 if that cannot be read).
int UsableCpuCount();

}  // namespace cstool
