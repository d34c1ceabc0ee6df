// Syscall numbers of the traced machine's native ABI → names (libseccomp) and the
// classes the state machine needs (futex sleeps, poll sleeps, sched_yield).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
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

// The class of the syscall named `name` (any ABI's name).
SyscallClass ClassOfSyscallName(std::string_view name);

class SyscallTable {
 public:
  // The numbers the table names; others are "syscall_<nr>" and of no class.
  static constexpr int kMaxSyscall = 1024;

  SyscallTable();
  SyscallTable(const SyscallTable&) = delete;
  SyscallTable& operator=(const SyscallTable&) = delete;

  // "read", or "syscall_<nr>" for numbers this libseccomp does not know. Looked up at
  // the first call for each number (a lookup is a scan of libseccomp's table, and a
  // report names only the few syscalls its threads made); safe from several threads.
  const std::string& Name(int64_t nr) const;
  SyscallClass Class(int64_t nr) const {
    return nr >= 0 && static_cast<size_t>(nr) < classes_.size() ? classes_[nr]
                                                                : SyscallClass::kOther;
  }
  // Whether some number in the table has this name (Name's "syscall_<nr>" included).
  bool Knows(std::string_view name) const;
  std::string CauseLabel(SwitchCause c) const;

 private:
  int NumberNamed(std::string_view name) const;

  std::vector<SyscallClass> classes_;
  // Name(nr) once looked up: points into names_, whose entries stay where they are.
  mutable std::array<std::atomic<const std::string*>, kMaxSyscall> named_{};
  mutable std::mutex mutex_;  // guards names_
  // Every name Name returned, by number: the table's, and out-of-table numbers'.
  mutable std::map<int64_t, std::string> names_;
};

}  // namespace cstool
