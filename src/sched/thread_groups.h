// Which process each thread belongs to (Thread::tgid), from what the trace itself shows.
// Files with no thread-group ids (trace-cmd stores none: it never saves tracefs
// saved_tgids, and no sched or task event carries one) still tell some: the clone
// flags of a fork (task:task_newtask), and an exec, after which the task leads its
// thread group (a non-leader's exec takes over the leader's tid, which is the tgid).
// Some facts only tie two threads together (a CLONE_THREAD fork by a thread whose
// process is not known yet); Resolve() gives every tied thread the process once one of
// them learns it. Nothing is guessed: a thread no fact reaches keeps tgid 0 (unknown).
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "sched/thread.h"

namespace cstool {

class ThreadGroups {
 public:
  // What the clone flags of a fork said; kUnknown without task_newtask.
  enum class Clone : uint8_t { kUnknown, kThread, kProcess };
  static Clone KindOf(uint64_t clone_flags) {
    constexpr uint64_t kCloneThread = 0x00010000;  // CLONE_THREAD, uapi/linux/sched.h
    return (clone_flags & kCloneThread) ? Clone::kThread : Clone::kProcess;
  }

  // sched_process_fork of `child` by `parent`.
  void Forked(const Thread& parent, const Thread& child, Clone kind);
  // sched_process_exec by `t`, whose tid was `old_pid` and is now `pid`; `leader` is the
  // thread that held tid `pid` before a non-leader's exec, when known. Sets tgids.
  void Execed(Thread& t, int32_t pid, int32_t old_pid, Thread* leader);
  // At the end of the trace: threads tied to one whose tgid is known get it (unless the
  // tied threads disagree, which only a damaged or inconsistent file can show).
  void Resolve(std::deque<Thread>& threads);

 private:
  uint32_t Find(uint32_t id);
  void Join(uint32_t a, uint32_t b);

  std::vector<uint32_t> up_;  // union-find over Thread::id; ids past the end are alone
  // Forks whose kind is unknown: child id -> parent id, until the child's exec tells.
  std::unordered_map<uint32_t, uint32_t> creator_;
};

}  // namespace cstool
