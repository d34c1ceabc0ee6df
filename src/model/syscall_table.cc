#include "model/syscall_table.h"

#include <fmt/core.h>
#include <seccomp.h>

#include <cstdlib>
#include <memory>

namespace cstool {
namespace {

constexpr int kMaxSyscall = 1024;

SyscallClass Classify(std::string_view name) {
  if (name == "futex" || name == "futex_waitv" || name == "futex_wait" || name == "futex_requeue" ||
      name == "futex_time64")
    return SyscallClass::kFutex;
  if (name == "poll" || name == "ppoll" || name == "select" || name == "pselect6" ||
      name == "_newselect" || name == "epoll_wait" || name == "epoll_pwait" ||
      name == "epoll_pwait2" || name == "ppoll_time64" || name == "pselect6_time64")
    return SyscallClass::kPoll;
  if (name == "sched_yield") return SyscallClass::kYield;
  if (name == "exit" || name == "exit_group") return SyscallClass::kExit;
  if (name == "wait4" || name == "waitpid") return SyscallClass::kReapChild;
  if (name == "execve" || name == "execveat") return SyscallClass::kExec;
  return SyscallClass::kOther;
}

}  // namespace

SyscallTable::SyscallTable() : names_(kMaxSyscall), classes_(kMaxSyscall, SyscallClass::kOther) {
  for (int nr = 0; nr < kMaxSyscall; ++nr) {
    std::unique_ptr<char, decltype(&std::free)> name(
        seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr), &std::free);
    if (name) {
      names_[nr] = name.get();
      classes_[nr] = Classify(names_[nr]);
    } else {
      names_[nr] = fmt::format("syscall_{}", nr);
    }
  }
}

const std::string& SyscallTable::Name(int64_t nr) const {
  if (nr >= 0 && nr < kMaxSyscall) return names_[nr];
  extra_names_.push_back(fmt::format("syscall_{}", nr));
  return extra_names_.back();
}

std::string SyscallTable::CauseLabel(SwitchCause c) const {
  if (c.kind == CauseKind::kSleepSyscall) return "sleep:" + Name(c.syscall);
  return std::string(CauseKindLabel(c.kind));
}

}  // namespace cstool
