// Reading which process a thread belongs to, and a process's descendants, from /proc, on
// this process's own threads and children.
#include "kernel/proc_threads.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace cstool {
namespace {

// A thread of this process that waits until the test is done with it.
class OtherThread {
 public:
  OtherThread()
      : worker_([this] {
          tid_ = static_cast<int>(::syscall(SYS_gettid));
          while (!done_) std::this_thread::yield();
        }) {
    while (tid_ == 0) std::this_thread::yield();
  }
  ~OtherThread() {
    done_ = true;
    worker_.join();
  }
  int tid() const { return tid_; }

 private:
  std::atomic<int> tid_{0};
  std::atomic<bool> done_{false};
  std::thread worker_;  // last: started once the flags are
};

// /proc/TID exists for a non-leader thread too (and lists the whole process's threads):
// `record -p TID` must learn the process from Tgid, not take the TID for it.
TEST(ProcThreads, AThreadsProcessIsItsTgid) {
  OtherThread other;
  const int tid = other.tid();
  EXPECT_EQ(ProcessOfThread(tid), ::getpid());
  EXPECT_EQ(ProcessOfThread(::getpid()), ::getpid());
  EXPECT_EQ(ThreadOfAnotherProcessNote(tid, ::getpid())
                .find(std::to_string(tid) + " is a thread of process " +
                      std::to_string(::getpid()) + " ("),
            0u);
}

// Listed through a thread that does not lead it, the process's threads still carry its
// tgid (a recording's thread list groups them by it).
TEST(ProcThreads, ThreadsListedThroughANonLeaderCarryTheProcessTgid) {
  std::vector<ThreadIdentity> threads;
  int tid = 0;
  {
    OtherThread other;
    tid = other.tid();
    threads = ListThreads(tid);
  }
  ASSERT_GE(threads.size(), 2u);
  bool saw_worker = false, saw_leader = false;
  for (const ThreadIdentity& t : threads) {
    EXPECT_EQ(t.tgid, ::getpid()) << "tid " << t.tid;
    saw_worker |= t.tid == tid;
    saw_leader |= t.tid == ::getpid();
  }
  EXPECT_TRUE(saw_worker);
  EXPECT_TRUE(saw_leader);
}

// Descendants from one walk of /proc: a child and its child, parents first.
TEST(ProcThreads, DescendantsComeFromOneWalkParentsFirst) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const pid_t grandchild = ::fork();
    if (grandchild == 0) {
      ::pause();
      ::_exit(0);
    }
    const int g = grandchild;
    (void)!::write(ready[1], &g, sizeof g);
    ::pause();
    ::_exit(0);
  }
  int grandchild = 0;
  ASSERT_EQ(::read(ready[0], &grandchild, sizeof grandchild),
            static_cast<ssize_t>(sizeof grandchild));
  const ProcessParents parents = ProcessParents::Read();
  EXPECT_EQ(parents.DescendantsOf(child), std::vector<int>{grandchild});
  const std::vector<int> mine = parents.DescendantsOf(::getpid());
  const auto at_child = std::find(mine.begin(), mine.end(), child);
  const auto at_grandchild = std::find(mine.begin(), mine.end(), grandchild);
  EXPECT_NE(at_child, mine.end());
  EXPECT_NE(at_grandchild, mine.end());
  EXPECT_LT(at_child, at_grandchild);
  ::kill(grandchild, SIGKILL);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::close(ready[0]);
  ::close(ready[1]);
}

// A tid that is gone (or never was) leaves it as it is; the caller reports it missing.
TEST(ProcThreads, AnUnreadableThreadIsItsOwnProcess) {
  EXPECT_EQ(ProcessOfThread(0x3ffffff0), 0x3ffffff0);
}

}  // namespace
}  // namespace cstool
