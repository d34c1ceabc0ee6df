// Reading which process a thread belongs to from /proc, on this process's own threads.
#include "kernel/proc_threads.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <thread>

namespace cstool {
namespace {

// /proc/TID exists for a non-leader thread too (and lists the whole process's threads):
// `record -p TID` must learn the process from Tgid, not take the TID for it.
TEST(ProcThreads, AThreadsProcessIsItsTgid) {
  std::atomic<int> tid{0};
  std::atomic<bool> done{false};
  std::thread worker([&] {
    tid = static_cast<int>(::syscall(SYS_gettid));
    while (!done) std::this_thread::yield();
  });
  while (tid == 0) std::this_thread::yield();
  EXPECT_EQ(ProcessOfThread(tid), ::getpid());
  EXPECT_EQ(ProcessOfThread(::getpid()), ::getpid());
  EXPECT_EQ(ThreadOfAnotherProcessNote(tid, ::getpid())
                .find(std::to_string(tid) + " is a thread of process " +
                      std::to_string(::getpid()) + " ("),
            0u);
  done = true;
  worker.join();
}

// A tid that is gone (or never was) leaves it as it is; the caller reports it missing.
TEST(ProcThreads, AnUnreadableThreadIsItsOwnProcess) {
  EXPECT_EQ(ProcessOfThread(0x3ffffff0), 0x3ffffff0);
}

}  // namespace
}  // namespace cstool
