#include "model/syscall_table.h"

#include <fmt/core.h>
#include <seccomp.h>

#include <cstdlib>
#include <memory>
#include <utility>

namespace cstool {
namespace {

// Every name ClassOfSyscallName gives a class, with it.
constexpr std::pair<std::string_view, SyscallClass> kClassified[] = {
    {"futex", SyscallClass::kFutex},
    {"futex_waitv", SyscallClass::kFutex},
    {"futex_wait", SyscallClass::kFutex},
    {"futex_requeue", SyscallClass::kFutex},
    {"futex_time64", SyscallClass::kFutex},
    {"poll", SyscallClass::kPoll},
    {"ppoll", SyscallClass::kPoll},
    {"select", SyscallClass::kPoll},
    {"pselect6", SyscallClass::kPoll},
    {"_newselect", SyscallClass::kPoll},
    {"epoll_wait", SyscallClass::kPoll},
    {"epoll_pwait", SyscallClass::kPoll},
    {"epoll_pwait2", SyscallClass::kPoll},
    {"ppoll_time64", SyscallClass::kPoll},
    {"pselect6_time64", SyscallClass::kPoll},
    {"sched_yield", SyscallClass::kYield},
    {"exit", SyscallClass::kExit},
    {"exit_group", SyscallClass::kExit},
    {"wait4", SyscallClass::kReapChild},
    {"waitpid", SyscallClass::kReapChild},
    {"execve", SyscallClass::kExec},
    {"execveat", SyscallClass::kExec},
};

// libseccomp's name for `nr` of the native ABI, or "syscall_<nr>".
std::string LookUpName(int64_t nr) {
  std::unique_ptr<char, decltype(&std::free)> name(
      seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, static_cast<int>(nr)), &std::free);
  return name ? std::string(name.get()) : fmt::format("syscall_{}", nr);
}

}  // namespace

SyscallClass ClassOfSyscallName(std::string_view name) {
  for (const auto& [n, c] : kClassified)
    if (n == name) return c;
  return SyscallClass::kOther;
}

// Only the classified names are looked up here, by name: a number gets the class of the
// name libseccomp gives it, which is one of them when it has a class at all. (A name
// libseccomp resolves to a negative pseudo-number is no syscall of this ABI; none of the
// classified names is a socketcall or ipc one, which it so resolves on the ABIs that
// multiplex those.)
SyscallTable::SyscallTable() : classes_(kMaxSyscall, SyscallClass::kOther) {
  for (const auto& [name, c] : kClassified)
    if (const int nr = NumberNamed(name); nr >= 0) classes_[nr] = c;
}

// libseccomp's number for `name` when the table names that number so (an alias's number
// goes by its own name), else -1.
int SyscallTable::NumberNamed(std::string_view name) const {
  const std::string text(name);
  const int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_NATIVE, text.c_str());
  return nr >= 0 && nr < kMaxSyscall && Name(nr) == name ? nr : -1;
}

const std::string& SyscallTable::Name(int64_t nr) const {
  if (nr >= 0 && nr < kMaxSyscall) {
    std::atomic<const std::string*>& slot = named_[static_cast<size_t>(nr)];
    if (const std::string* known = slot.load(std::memory_order_acquire)) return *known;
    std::lock_guard lock(mutex_);
    if (const std::string* known = slot.load(std::memory_order_relaxed)) return *known;
    const std::string& name = names_.try_emplace(nr, LookUpName(nr)).first->second;
    slot.store(&name, std::memory_order_release);
    return name;
  }
  // Once per number too: a trigger's condition asks at every event of a thread in one.
  std::lock_guard lock(mutex_);
  auto [it, added] = names_.try_emplace(nr);
  if (added) it->second = fmt::format("syscall_{}", nr);
  return it->second;
}

bool SyscallTable::Knows(std::string_view name) const {
  if (NumberNamed(name) >= 0) return true;
  // Else every number's name: "syscall_<nr>" for one libseccomp has no name for, and a
  // socketcall or ipc syscall, which it resolves to a pseudo-number by name on the ABIs
  // that multiplex them but names by number. (A user's typo, or a trigger's condition:
  // not per event.)
  for (int n = 0; n < kMaxSyscall; ++n)
    if (Name(n) == name) return true;
  return false;
}

std::string SyscallTable::CauseLabel(SwitchCause c) const {
  if (c.kind == CauseKind::kSleepSyscall) return "sleep:" + Name(c.syscall);
  return std::string(CauseKindLabel(c.kind));
}

}  // namespace cstool
