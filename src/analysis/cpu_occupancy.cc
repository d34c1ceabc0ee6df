#include "analysis/cpu_occupancy.h"

#include <algorithm>

namespace cstool {

CpuOccupancy::Open& CpuOccupancy::CpuAt(int32_t cpu) {
  if (static_cast<size_t>(cpu) >= cpus_.size()) cpus_.resize(cpu + 1);
  return cpus_[cpu];
}

// Ends the run open on `cpu` at `ts`; `e` is the change that ends it, if any.
void CpuOccupancy::Close(int32_t cpu, int64_t ts, const CpuCurrentEvent* e) {
  Open& open = CpuAt(cpu);
  const Thread* t = open.thread;
  if (!t) return;
  open.thread = nullptr;
  open_cpu_[t->id] = -1;
  // A thread whose observed life ended (its tid reused, or freed) ran no longer.
  int64_t end = t->end_ts >= 0 ? std::min(ts, t->end_ts) : ts;
  CpuRun r;
  r.cpu = cpu;
  r.thread = t;
  r.start = open.start;
  r.end = end;
  if (e && e->sw && e->sw->prev == t) {
    r.switched_out = true;
    r.voluntary = e->sw->voluntary;
    r.cause = e->sw->cause;
    r.preempted_at = e->sw->preempted_at;
    if (e->cause_pending) {
      if (r.end > r.start) waiting_.push_back({r, e->ts});
      return;
    }
  }
  if (r.end > r.start) sink_(r);
}

void CpuOccupancy::OnCpuCurrent(const CpuCurrentEvent& e) {
  if (e.cpu < 0) return;
  Close(e.cpu, e.ts, &e);
  const Thread* t = e.current;
  if (!t) return;
  if (t->id >= open_cpu_.size()) open_cpu_.resize(t->id + 1, -1);
  // A thread runs on one CPU at a time: becoming current here without a switch-out
  // seen on its previous CPU ends the run there.
  if (int32_t other = open_cpu_[t->id]; other >= 0 && other != e.cpu) Close(other, e.ts, nullptr);
  Open& open = CpuAt(e.cpu);
  open.thread = t;
  open.start = e.ts;
  open_cpu_[t->id] = e.cpu;
}

void CpuOccupancy::OnSwitch(const SwitchEvent& e) {
  if (waiting_.empty() || !e.prev) return;
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
    if (it->run.thread != e.prev || it->run.cpu != e.cpu || it->switch_ts != e.ts) continue;
    it->run.cause = e.cause;
    sink_(it->run);
    waiting_.erase(it);
    return;
  }
}

void CpuOccupancy::OnTraceEnd(int64_t ts) {
  // Finish resolved every pending switch before the trace end; whatever still waits
  // (nothing, normally) is drawn with the placeholder cause.
  for (const Waiting& w : waiting_) sink_(w.run);
  waiting_.clear();
  for (size_t cpu = 0; cpu < cpus_.size(); ++cpu) Close(static_cast<int32_t>(cpu), ts, nullptr);
}

}  // namespace cstool
