// Thread identity and lifetime: which Thread a tid names at each moment (a tid is reused
// once its thread is freed; a non-leader that execs takes over its leader's tid), the
// thread-group id each thread belongs to (from the recorder, task_newtask's clone flags
// and the fork/exec chain), and whether the report follows it.
#pragma once

#include <cstdint>
#include <deque>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/tid_index.h"
#include "model/recording_info.h"
#include "sched/thread.h"
#include "sched/thread_groups.h"

namespace cstool {

// Who the report is about: the recorded workload.
struct TrackingPolicy {
  bool all = true;                 // -a recordings and foreign files: every thread
  std::vector<int32_t> root_pids;  // processes followed, with their descendants
  std::vector<std::pair<int32_t, int32_t>> known_tgids;  // tid -> tgid from the recorder
  // Threads that are never the report's even when `all`: the recorder's own, whether it
  // kept them out of tracing or not (the model still follows them to know who holds
  // each CPU).
  std::vector<int32_t> recorder_tids;
  // Kernel threads the recorder listed (PF_KTHREAD), besides kthreadd.
  std::vector<int32_t> kernel_threads;

  // What the recorder's /proc listing tells: each thread's process, and which are kernel
  // threads (a thread running before tracing began shows no fork to tell).
  void AddKnownThreads(const std::vector<ThreadIdentity>& threads) {
    for (const ThreadIdentity& t : threads) {
      if (t.tgid != 0) known_tgids.emplace_back(t.tid, t.tgid);
      if (t.kernel_thread) kernel_threads.push_back(t.tid);
    }
  }
};

class ThreadTracker {
 public:
  explicit ThreadTracker(TrackingPolicy policy);

  // The thread `tid` names now, or null.
  Thread* Find(int32_t tid) const {
    const uint32_t id = by_tid_.Get(tid);
    return id ? thread_ptrs_[id - 1] : nullptr;
  }
  // The process of the thread `tid` names, or the recorder's word for it when the trace
  // has not shown it yet (0: unknown).
  int32_t KnownTgid(int32_t tid) const;
  // Whether `t` is still the thread its tid names.
  bool Names(const Thread& t) const { return by_tid_.Get(t.tid) == t.id + 1; }

  // A new thread for `tid` (the caller ended any previous one's lifetime), indexed by
  // it, with its tgid if one is known and followed per the policy. Its address is
  // stable for the tracker's life.
  Thread& Add(int32_t tid, std::string_view comm, int64_t ts, bool in_trace);
  // `t` is a kernel thread: known to be in no syscall from now on.
  static void MarkKernelThread(Thread& t);
  // sched_process_free: the tid names no thread until it is reused.
  void Forget(int32_t tid) { by_tid_.Set(tid, 0); }
  void HintTgid(int32_t tid, int32_t tgid) { tgid_hint_[tid] = tgid; }

  // task_newtask: the clone flags of a task about to be forked.
  void NoteCloneFlags(int32_t tid, uint64_t flags) { clone_flags_[tid] = flags; }
  // sched_process_fork: records the new child `child` of `parent` (created by the caller
  // with Add after this returns the tgid to hint) and how it was cloned.
  int32_t ChildTgid(const Thread& parent, int32_t child, ThreadGroups::Clone* kind);
  void Forked(const Thread& parent, Thread& child, ThreadGroups::Clone kind) {
    groups_.Forked(parent, child, kind);
  }
  // The kernel's exchange of tids when the non-leader `execing` execs (de_thread()): it
  // takes its leader's tid at `ts`, and the old leader, still finishing its exit, is found
  // by `execing`'s old tid from then on (its own tid stays the one it had all its life).
  void ExchangeTids(Thread& execing, int32_t leader_tid, Thread* leader, int64_t ts);
  void Execed(Thread& t, int32_t pid, int32_t old_pid, Thread* old_leader) {
    groups_.Execed(t, pid, old_pid, old_leader);
  }
  // At the end: tgids the trace told only later or only by relation.
  void ResolveGroups() { groups_.Resolve(threads_); }

  bool follows_all() const { return policy_.all; }
  std::deque<Thread>& threads() { return threads_; }
  const std::deque<Thread>& threads() const { return threads_; }

 private:
  bool IsTrackedRoot(int32_t tid) const;
  bool IsReportable(int32_t tid, int32_t tgid) const;

  TrackingPolicy policy_;
  std::deque<Thread> threads_;
  TidIndex by_tid_;                                 // tid -> internal id + 1 (0: none)
  std::vector<Thread*> thread_ptrs_;                // by internal id: &threads_[id], no deque math
  std::unordered_map<int32_t, int32_t> tgid_hint_;  // from the recorder and task_newtask
  std::unordered_map<int32_t, uint64_t> clone_flags_;
  ThreadGroups groups_;
};

}  // namespace cstool
