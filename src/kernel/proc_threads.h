// Thread identities and counters from /proc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/recording_info.h"

namespace cstool {

// "/proc/TID/stat": the state letter, parent, flags (field 9) and processor (field 39);
// nullopt when malformed. Older kernels' shorter lines leave the CPU -1.
struct StatFields {
  char state = '?';
  int32_t ppid = 0;
  uint64_t flags = 0;
  int32_t cpu = -1;
  // PF_KTHREAD: a kernel thread. (Its parent, kthreadd, is no proof: a user-mode helper
  // the kernel starts is forked with CLONE_PARENT beside kthreadd's children.)
  bool kernel_thread() const { return (flags & 0x00200000) != 0; }
};
std::optional<StatFields> ParseProcStat(std::string_view text);

// Threads of the process `pid` belongs to (from /proc/PID/task, which for a thread that
// does not lead its process lists the whole process too), each with that process's tgid;
// empty if it is gone.
std::vector<ThreadIdentity> ListThreads(int pid);
// Every thread on the system.
std::vector<ThreadIdentity> ListAllThreads();
bool ProcessExists(int pid);
// The parent of every process, from one walk of /proc/*/stat: a walk reads a file per
// process, so a caller asking about several processes reads them once.
class ProcessParents {
 public:
  static ProcessParents Read();
  // The processes descended from `pid` (children, their children, ...), parents before
  // children; empty if it has none.
  std::vector<int> DescendantsOf(int pid) const;

 private:
  std::vector<std::pair<int, int>> parent_of_;  // (pid, ppid)
};
// ProcessParents::Read().DescendantsOf(pid).
std::vector<int> DescendantsOf(int pid);
// What `record -p` and `msa` say when `pid` has descendants they do not follow (their
// later forks are followed; the ones already there are not): names --children.
std::string UnfollowedDescendantsWarning(int pid, const std::vector<int>& descendants);
// The process `tid` belongs to (Tgid of /proc/TID/status); `tid` itself when it leads
// one, or cannot be read. /proc/TID of a non-leader thread exists too, and lists the
// whole process's threads: -p TID follows the process, and must say so.
int ProcessOfThread(int tid);
std::string ThreadOfAnotherProcessNote(int tid, int tgid);
// The state letter of /proc/PID/stat ('R', 'S', ...), or nullopt.
std::optional<char> ProcessState(int pid);

struct ContextSwitches {
  uint64_t voluntary = 0;
  uint64_t involuntary = 0;
};
// voluntary_ctxt_switches / nonvoluntary_ctxt_switches of /proc/PID/status.
std::optional<ContextSwitches> ReadContextSwitches(int pid);

}  // namespace cstool
