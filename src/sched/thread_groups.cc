#include "sched/thread_groups.h"

#include <algorithm>

namespace cstool {

uint32_t ThreadGroups::Find(uint32_t id) {
  if (id >= up_.size()) return id;
  while (up_[id] != id) id = up_[id] = up_[up_[id]];
  return id;
}

void ThreadGroups::Join(uint32_t a, uint32_t b) {
  while (up_.size() <= std::max(a, b)) up_.push_back(static_cast<uint32_t>(up_.size()));
  up_[Find(a)] = Find(b);
}

void ThreadGroups::Forked(const Thread& parent, const Thread& child, Clone kind) {
  if (kind == Clone::kThread) Join(parent.id, child.id);
  if (kind == Clone::kUnknown) creator_[child.id] = parent.id;
}

void ThreadGroups::Execed(Thread& t, int32_t pid, int32_t old_pid, Thread* leader) {
  t.tgid = pid;
  auto creator = creator_.find(t.id);
  if (old_pid == pid) {
    // It led its group already: created as a process, which says nothing of its creator's.
    if (creator != creator_.end()) creator_.erase(creator);
    return;
  }
  // A non-leader: only CLONE_THREAD makes one, so its creator is in the same process, and
  // the leader whose tid it took leads that process.
  if (leader != nullptr && leader != &t) leader->tgid = pid;
  if (creator != creator_.end()) {
    Join(creator->second, t.id);
    creator_.erase(creator);
  }
}

void ThreadGroups::Resolve(std::deque<Thread>& threads) {
  const uint32_t n = static_cast<uint32_t>(std::min(up_.size(), threads.size()));
  std::unordered_map<uint32_t, int32_t> tgid_of;  // set -> its tgid, -1 when members disagree
  for (uint32_t id = 0; id < n; ++id) {
    if (threads[id].tgid == 0) continue;
    auto [it, inserted] = tgid_of.try_emplace(Find(id), threads[id].tgid);
    if (!inserted && it->second != threads[id].tgid) it->second = -1;
  }
  for (uint32_t id = 0; id < n; ++id) {
    if (threads[id].tgid != 0) continue;
    if (auto it = tgid_of.find(Find(id)); it != tgid_of.end() && it->second > 0)
      threads[id].tgid = it->second;
  }
}

}  // namespace cstool
