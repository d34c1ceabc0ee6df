#include "plugins/cpu_occupancy.h"

#include <algorithm>

namespace cstool {

CpuOccupancy::Cpu& CpuOccupancy::CpuAt(int32_t cpu) {
  if (static_cast<size_t>(cpu) >= cpus_.size()) cpus_.resize(cpu + 1);
  return cpus_[cpu];
}

CpuOccupancy::OpenRun& CpuOccupancy::RunOf(const Thread& t) {
  if (t.id >= runs_.size()) {
    runs_.resize(t.id + 1);
    run_threads_.resize(t.id + 1, nullptr);
  }
  run_threads_[t.id] = &t;
  return runs_[t.id];
}

void CpuOccupancy::OnSwitch(const SwitchEvent& e) {
  if (e.cpu < 0) return;
  Cpu& cpu = CpuAt(e.cpu);
  // Switches of threads whose cause waited for resolution arrive late; they must not
  // move the CPU's notion of "last switch" backwards.
  const bool in_order = e.ts >= cpu.last_switch;
  if (in_order && cpu.current && cpu.current != e.prev) {
    // The current task's switch-out was not recorded (a switch between unfollowed
    // tasks, or the kernel's missing switch from idle). When `prev` is a task, it is
    // the one known to have run just before now, and gets the time (inferred start)
    // below; otherwise the current task's run ends now.
    OpenRun& run = RunOf(*cpu.current);
    if (run.cpu == e.cpu) {
      CpuRun r{e.cpu, cpu.current, run.start, e.ts, false, nullptr};
      if (!e.prev && r.end > r.start) sink_(r);
      run.cpu = -1;
    }
  }
  if (e.prev) {
    OpenRun& run = RunOf(*e.prev);
    CpuRun r{e.cpu, e.prev, 0, e.ts, false, &e};
    bool known = true;
    if (run.cpu == e.cpu && run.start <= e.ts) {
      r.start = run.start;
      run.cpu = -1;
    } else if (in_order) {
      r.start = std::max({e.prev->first_ts, cpu.lost_at, cpu.last_switch});
      r.start_inferred = true;
    } else {
      known = false;
    }
    // A late switch whose switch-in was not seen: when it started is unknowable now,
    // and later switches on this CPU already accounted for the time; draw nothing.
    if (known && r.end > r.start) sink_(r);
  }
  // The switch-in side of a late switch is stale: later switches on this CPU
  // superseded it.
  if (e.next && in_order) {
    OpenRun& run = RunOf(*e.next);
    if (run.cpu >= 0 && run.cpu != e.cpu) {
      // Switched in elsewhere without a switch-out seen there: end that run now.
      CpuRun r{run.cpu, e.next, run.start, e.ts, false, nullptr};
      if (r.end > r.start) sink_(r);
    }
    run.cpu = e.cpu;
    run.start = e.ts;
  }
  if (in_order) {
    cpu.last_switch = e.ts;
    cpu.current = e.next;
  }
}

void CpuOccupancy::OnLostEvents(int32_t cpu_id, int64_t ts) {
  if (cpu_id < 0) return;
  Cpu& cpu = CpuAt(cpu_id);
  cpu.lost_at = std::max(cpu.lost_at, ts);
  for (size_t id = 0; id < runs_.size(); ++id) {
    OpenRun& run = runs_[id];
    if (run.cpu != cpu_id) continue;
    CpuRun r{cpu_id, run_threads_[id], run.start, ts, false, nullptr};
    if (r.end > r.start) sink_(r);
    run.cpu = -1;
  }
  cpu.current = nullptr;
}

void CpuOccupancy::OnTraceEnd(int64_t ts) {
  for (size_t id = 0; id < runs_.size(); ++id) {
    OpenRun& run = runs_[id];
    if (run.cpu < 0) continue;
    const Thread* t = run_threads_[id];
    int64_t end = t->end_ts >= 0 ? std::min(ts, t->end_ts) : ts;
    CpuRun r{run.cpu, t, run.start, end, false, nullptr};
    if (r.end > r.start) sink_(r);
    run.cpu = -1;
  }
}

}  // namespace cstool
