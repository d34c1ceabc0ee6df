// Syscall numbers of the traced machine's native ABI → names (libseccomp) and the
// classes the state machine needs (futex sleeps, poll sleeps, sched_yield).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "core/switch_cause.h"

namespace cstool {

enum class SyscallClass : uint8_t { kOther, kFutex, kPoll, kYield, kExit };

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
