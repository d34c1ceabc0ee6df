#include "analysis/kernel_stacks.h"

#include <algorithm>

namespace cstool {

KernelStackObserver::PerThread& KernelStackObserver::For(const Thread& t) {
  if (t.id >= threads_.size()) threads_.resize(t.id + 1);
  PerThread& p = threads_[t.id];
  p.thread = &t;
  return p;
}

KernelStackObserver::Sleep& KernelStackObserver::SleepAt(PerThread& p, int64_t switch_ts) {
  for (auto it = p.sleeps.rbegin(); it != p.sleeps.rend(); ++it)
    if (it->switch_ts == switch_ts) return *it;
  auto it = std::find_if(p.sleeps.begin(), p.sleeps.end(),
                         [&](const Sleep& s) { return s.switch_ts > switch_ts; });
  Sleep s;
  s.switch_ts = switch_ts;
  return *p.sleeps.insert(it, s);
}

void KernelStackObserver::OnKernelStack(const KernelStackEvent& e) {
  scratch_.clear();
  for (uint32_t i = 0; i < e.stack->depth; ++i) scratch_.push_back(e.stack->Frame(i));
  auto [it, added] = stack_ids_.try_emplace(scratch_, static_cast<uint32_t>(model_.stacks.size()));
  if (added) model_.stacks.push_back({scratch_, {}, {}});
  PerThread& p = For(*e.thread);
  SleepAt(p, e.switch_ts).stack = it->second;
}

void KernelStackObserver::OnSwitch(const SwitchEvent& e) {
  // A switch-out the trace did not record (inferred: sleep:untraced) has no stack, and the
  // thread's switch-in that would settle it is as unrecorded: keeping it grew a list per
  // thread that every later sleep searched.
  if (e.prev != nullptr && e.voluntary && e.cause.kind != CauseKind::kSleepUntraced) {
    PerThread& p = For(*e.prev);
    Sleep& s = SleepAt(p, e.ts);
    s.cause = e.cause.Pack();
    s.cause_known = true;
    Settle(p, false, 0);
  }
  if (e.next != nullptr && e.next->id < threads_.size() && threads_[e.next->id].thread == e.next) {
    PerThread& p = threads_[e.next->id];
    for (Sleep& s : p.sleeps)
      if (!s.switched_in && s.switch_ts < e.ts) {
        s.switched_in = true;
        if (s.wake_ts < 0) s.wake_ts = e.ts;
      }
    Settle(p, false, 0);
  }
}

void KernelStackObserver::OnWakeup(const WakeupEvent& e) {
  if (e.wakee == nullptr || e.wakee->id >= threads_.size() ||
      threads_[e.wakee->id].thread != e.wakee)
    return;
  for (Sleep& s : threads_[e.wakee->id].sleeps)
    if (s.wake_ts < 0 && s.switch_ts <= e.ts) s.wake_ts = e.ts;
}

void KernelStackObserver::Settle(PerThread& p, bool all, int64_t end_ts) {
  while (!p.sleeps.empty()) {
    Sleep& s = p.sleeps.front();
    if (!all && !(s.cause_known && s.switched_in)) break;
    if (s.stack >= 0) {
      const int64_t end = s.wake_ts >= 0 ? s.wake_ts : std::max(end_ts, s.switch_ts);
      std::vector<BlockedStackStats>& rows = model_.For(*p.thread).blocked_stacks;
      auto row = std::find_if(rows.begin(), rows.end(), [&](const BlockedStackStats& r) {
        return r.cause == s.cause && r.stack == static_cast<uint32_t>(s.stack);
      });
      if (row == rows.end())
        row = rows.insert(rows.end(), {s.cause, static_cast<uint32_t>(s.stack), 0, 0});
      ++row->count;
      row->blocked_ns += end - s.switch_ts;
    }
    p.sleeps.pop_front();
  }
}

void KernelStackObserver::OnTraceEnd(int64_t ts) {
  for (PerThread& p : threads_)
    if (p.thread != nullptr) Settle(p, true, ts);
}

}  // namespace cstool
