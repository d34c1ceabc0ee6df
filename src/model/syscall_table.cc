#include "model/syscall_table.h"

#include <fmt/core.h>
#include <seccomp.h>

#include <charconv>
#include <cstdlib>
#include <memory>

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
// name libseccomp gives it, which is one of them when it has a class at all.
SyscallTable::SyscallTable() : classes_(kMaxSyscall, SyscallClass::kOther) {
  for (const auto& [name, c] : kClassified) {
    const std::string text(name);
    const int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_NATIVE, text.c_str());
    // (Negative: not a syscall of this ABI. An alias's number goes by its own name.)
    if (nr >= 0 && nr < kMaxSyscall && Name(nr) == name) classes_[nr] = c;
  }
}

const std::string& SyscallTable::Name(int64_t nr) const {
  if (nr >= 0 && nr < kMaxSyscall) {
    std::atomic<const std::string*>& slot = named_[static_cast<size_t>(nr)];
    if (const std::string* known = slot.load(std::memory_order_acquire)) return *known;
    std::lock_guard lock(mutex_);
    if (const std::string* known = slot.load(std::memory_order_relaxed)) return *known;
    const std::string& name = names_.emplace_back(LookUpName(nr));
    slot.store(&name, std::memory_order_release);
    return name;
  }
  std::lock_guard lock(mutex_);
  return extra_names_.emplace_back(fmt::format("syscall_{}", nr));
}

bool SyscallTable::Names(std::string_view name) const {
  const std::string text(name);
  const int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_NATIVE, text.c_str());
  if (nr >= 0 && nr < kMaxSyscall && Name(nr) == name) return true;
  // "syscall_<nr>": a number libseccomp has no name for.
  constexpr std::string_view kPrefix = "syscall_";
  if (!name.starts_with(kPrefix)) return false;
  const std::string_view digits = name.substr(kPrefix.size());
  int n = -1;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  return ec == std::errc{} && end == digits.data() + digits.size() && n >= 0 && n < kMaxSyscall &&
         Name(n) == name;
}

std::string SyscallTable::CauseLabel(SwitchCause c) const {
  if (c.kind == CauseKind::kSleepSyscall) return "sleep:" + Name(c.syscall);
  return std::string(CauseKindLabel(c.kind));
}

}  // namespace cstool
