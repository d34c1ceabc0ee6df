// Thread identities and counters from /proc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/recording_info.h"

namespace cstool {

// Threads of process `pid` (from /proc/PID/task); empty if it is gone.
std::vector<ThreadIdentity> ListThreads(int pid);
// Every thread on the system.
std::vector<ThreadIdentity> ListAllThreads();
bool ProcessExists(int pid);
// The processes descended from `pid` (children, their children, ...), from the PPid of
// every /proc/PID/stat, parents before children; empty if it has none.
std::vector<int> DescendantsOf(int pid);
// What `record -p` and `msa` say when `pid` has descendants they do not follow (their
// later forks are followed; the ones already there are not): names --children.
std::string UnfollowedDescendantsWarning(int pid, const std::vector<int>& descendants);
// The state letter of /proc/PID/stat ('R', 'S', ...), or nullopt.
std::optional<char> ProcessState(int pid);

struct ContextSwitches {
  uint64_t voluntary = 0;
  uint64_t involuntary = 0;
};
// voluntary_ctxt_switches / nonvoluntary_ctxt_switches of /proc/PID/status.
std::optional<ContextSwitches> ReadContextSwitches(int pid);

}  // namespace cstool
