#include "sched/thread_tracker.h"

#include <algorithm>
#include <string>

namespace cstool {
ThreadTracker::ThreadTracker(TrackingPolicy policy) : policy_(std::move(policy)) {
  for (auto [tid, tgid] : policy_.known_tgids) tgid_hint_[tid] = tgid;
  // Searched for every new thread: an -a recording lists thousands.
  std::sort(policy_.recorder_tids.begin(), policy_.recorder_tids.end());
  std::sort(policy_.kernel_threads.begin(), policy_.kernel_threads.end());
}

bool ThreadTracker::IsTrackedRoot(int32_t tid) const {
  return std::find(policy_.root_pids.begin(), policy_.root_pids.end(), tid) !=
         policy_.root_pids.end();
}

bool ThreadTracker::IsReportable(int32_t tid, int32_t tgid) const {
  if (std::binary_search(policy_.recorder_tids.begin(), policy_.recorder_tids.end(), tid))
    return false;
  return policy_.all || IsTrackedRoot(tid) || (tgid != 0 && IsTrackedRoot(tgid));
}

Thread& ThreadTracker::Add(int32_t tid, std::string_view comm, int64_t ts, bool in_trace) {
  Thread& t = threads_.emplace_back();
  t.id = static_cast<uint32_t>(threads_.size() - 1);
  t.tid = tid;
  t.comm = std::string(comm);
  t.created_in_trace = in_trace;
  t.first_ts = ts;
  t.tid_since = ts;
  t.since = ts;
  if (auto it = tgid_hint_.find(tid); it != tgid_hint_.end()) t.tgid = it->second;
  t.tracked = IsReportable(tid, t.tgid);
  t.recorder = std::binary_search(policy_.recorder_tids.begin(), policy_.recorder_tids.end(), tid);
  if (tid == kKthreaddTid ||
      std::binary_search(policy_.kernel_threads.begin(), policy_.kernel_threads.end(), tid))
    MarkKernelThread(t);
  by_tid_.Set(tid, t.id + 1);
  thread_ptrs_.push_back(&t);
  return t;
}

int32_t ThreadTracker::ChildTgid(const Thread& parent, int32_t child, ThreadGroups::Clone* kind) {
  int32_t tgid = 0;
  *kind = ThreadGroups::Clone::kUnknown;
  if (auto it = clone_flags_.find(child); it != clone_flags_.end()) {
    *kind = ThreadGroups::KindOf(it->second);
    tgid = *kind == ThreadGroups::Clone::kThread ? parent.tgid : child;
    clone_flags_.erase(it);
  }
  if (tgid != 0) tgid_hint_[child] = tgid;
  return tgid;
}

int32_t ThreadTracker::KnownTgid(int32_t tid) const {
  if (const Thread* t = Find(tid); t != nullptr && t->tgid != 0) return t->tgid;
  const auto it = tgid_hint_.find(tid);
  return it != tgid_hint_.end() ? it->second : 0;
}

void ThreadTracker::ExchangeTids(Thread& execing, int32_t leader_tid, Thread* leader, int64_t ts) {
  by_tid_.Set(execing.tid, leader != nullptr ? leader->id + 1 : 0);
  by_tid_.Set(leader_tid, execing.id + 1);
  execing.tid_before_exec = execing.tid;
  execing.tid = leader_tid;
  execing.tid_since = ts;
}

void ThreadTracker::MarkKernelThread(Thread& t) {
  t.kernel_thread = true;
  t.syscall = kNotInSyscall;
}

}  // namespace cstool
