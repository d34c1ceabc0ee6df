// Syscall numbers of the traced machine's native ABI → names (libseccomp) and the
// classes the state machine needs (futex sleeps, poll sleeps, sched_yield).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "model/switch_cause.h"

namespace cstool {

// What a thread's current syscall can be besides a syscall number.
inline constexpr int64_t kNotInSyscall = -1;
inline constexpr int64_t kSyscallUnknown = -2;  // present since before the trace: not known yet
inline constexpr int64_t kInForkReturn = -3;    // new task: in the kernel until its first sys_exit
inline constexpr int64_t kSyscallAbandoned = -4;  // stopped waiting to learn it (see Resolve)

// kReapChild: returns the pid of the child it reaped (wait4, waitpid), or of one that
// stopped or continued (WUNTRACED, WCONTINUED): only a zombie's pid is a reap.
enum class SyscallClass : uint8_t { kOther, kFutex, kPoll, kYield, kExit, kReapChild, kExec };

class SyscallTable {
 public:
  SyscallTable();

  // "read", or "syscall_<nr>" for numbers this libseccomp does not know.
  const std::string& Name(int64_t nr) const;
  SyscallClass Class(int64_t nr) const {
    return nr >= 0 && static_cast<size_t>(nr) < classes_.size() ? classes_[nr]
                                                                : SyscallClass::kOther;
  }
  std::string CauseLabel(SwitchCause c) const;

 private:
  std::vector<std::string> names_;
  std::vector<SyscallClass> classes_;
  mutable std::deque<std::string>
      extra_names_;  // out-of-table numbers; deque keeps references stable
};

}  // namespace cstool
