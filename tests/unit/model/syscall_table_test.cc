#include "model/syscall_table.h"

#include <gtest/gtest.h>
#include <seccomp.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace cstool {
namespace {

// What the table held when it looked up every number at construction: libseccomp's name
// for each (or "syscall_<nr>"), and that name's class.
std::string EagerName(int nr) {
  std::unique_ptr<char, decltype(&std::free)> name(
      seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr), &std::free);
  return name ? std::string(name.get()) : "syscall_" + std::to_string(nr);
}

// The classes the state machine relies on, written out here rather than taken from the
// table's own list, so that a name dropped from it fails.
SyscallClass ExpectedClass(const std::string& name) {
  static const std::map<std::string, SyscallClass> kExpected = {
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
  const auto it = kExpected.find(name);
  return it == kExpected.end() ? SyscallClass::kOther : it->second;
}

TEST(SyscallTable, EveryNumberHasLibseccompsNameAndThatNamesClass) {
  SyscallTable table;
  int classified = 0;
  int expected_classified = 0;
  for (int nr = 0; nr < SyscallTable::kMaxSyscall; ++nr) {
    const std::string name = EagerName(nr);
    EXPECT_EQ(table.Name(nr), name) << nr;
    EXPECT_EQ(table.Class(nr), ExpectedClass(name)) << nr << " " << name;
    EXPECT_EQ(ClassOfSyscallName(name), ExpectedClass(name)) << name;
    EXPECT_TRUE(table.Knows(name)) << name;
    classified += table.Class(nr) != SyscallClass::kOther;
    expected_classified += ExpectedClass(name) != SyscallClass::kOther;
  }
  EXPECT_EQ(classified, expected_classified);
  // The ABI has these at all (x86_64: 17 of the 22 names).
  EXPECT_EQ(table.Class(seccomp_syscall_resolve_name("futex")), SyscallClass::kFutex);
  EXPECT_EQ(table.Class(seccomp_syscall_resolve_name("exit_group")), SyscallClass::kExit);
  EXPECT_EQ(table.Class(seccomp_syscall_resolve_name("wait4")), SyscallClass::kReapChild);
  EXPECT_GE(expected_classified, 8);
}

TEST(SyscallTable, NumbersOutsideTheTableAreNamedByNumberWithoutClass) {
  SyscallTable table;
  EXPECT_EQ(table.Name(5000), "syscall_5000");
  EXPECT_EQ(table.Name(-7), "syscall_-7");
  // One string per number, however often it is asked for.
  EXPECT_EQ(&table.Name(5000), &table.Name(5000));
  EXPECT_EQ(&table.Name(-7), &table.Name(-7));
  EXPECT_EQ(table.Class(5000), SyscallClass::kOther);
  EXPECT_EQ(table.Class(-1), SyscallClass::kOther);
}

TEST(SyscallTable, KnowsOnlyWhatSomeNumberIsCalled) {
  SyscallTable table;
  EXPECT_TRUE(table.Knows("read"));
  EXPECT_TRUE(table.Knows("futex"));
  EXPECT_FALSE(table.Knows("no_such_syscall"));
  EXPECT_FALSE(table.Knows(""));
  // A number libseccomp has no name for goes by "syscall_<nr>", in its plain spelling.
  int unnamed = -1;
  for (int nr = 0; nr < SyscallTable::kMaxSyscall && unnamed < 0; ++nr)
    if (EagerName(nr).starts_with("syscall_")) unnamed = nr;
  ASSERT_GE(unnamed, 0);
  EXPECT_TRUE(table.Knows("syscall_" + std::to_string(unnamed)));
  EXPECT_FALSE(table.Knows("syscall_0" + std::to_string(unnamed)));
  EXPECT_FALSE(table.Knows("syscall_" + std::to_string(unnamed) + "x"));
  EXPECT_FALSE(table.Knows("syscall_0"));  // 0 is read
  EXPECT_FALSE(table.Knows("syscall_5000"));
  EXPECT_FALSE(table.Knows("syscall_-1"));
  EXPECT_FALSE(table.Knows("syscall_+" + std::to_string(unnamed)));
  EXPECT_FALSE(table.Knows("syscall_ " + std::to_string(unnamed)));
  EXPECT_FALSE(table.Knows("syscall_"));
}

// Names are looked up on first use; threads asking at once get one string per number.
TEST(SyscallTable, ThreadsLookingUpTheSameNumbersShareOneName) {
  SyscallTable table;
  constexpr int kThreads = 4;
  std::vector<std::vector<const std::string*>> seen(kThreads);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int nr = 0; nr < SyscallTable::kMaxSyscall; ++nr) seen[t].push_back(&table.Name(nr));
    });
  for (std::thread& t : threads) t.join();
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(seen[t], seen[0]);
  EXPECT_EQ(*seen[0][0], EagerName(0));
}

}  // namespace
}  // namespace cstool
