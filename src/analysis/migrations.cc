#include "analysis/migrations.h"

#include <algorithm>

namespace cstool {

void MigrationObserver::OnMigrate(const Thread& t, int32_t from_cpu, int32_t to_cpu, int64_t ts) {
  ThreadReport& r = model_.For(t);
  ++r.migration_pairs[{from_cpu, to_cpu}];
  // A wakeup placing the task (set_task_cpu between sched_waking and sched_wakeup) moves
  // a task that was not queued on the CPU it leaves; a running task is not queued.
  if (!t.Queued()) return;
  if (t.id >= last_move_.size()) last_move_.resize(t.id + 1, 0);
  int64_t& last = last_move_[t.id];
  const int64_t queued_since = last > t.since ? last : t.since;
  if (ts > queued_since)
    (t.state == Microstate::kWaitCpuWakeup ? r.wait_before_migration_wakeup_ns
                                           : r.wait_before_migration_preempted_ns) +=
        ts - queued_since;
  last = ts;
}

void MigrationObserver::OnTraceEnd(int64_t /*ts*/) {
  for (ThreadReport& r : model_.threads) {
    if (!r.thread) continue;
    // The thread's times are final now (MicrostateObserver copied them before this).
    const MicrostateTimes& m = r.thread->times;
    r.wait_before_migration_wakeup_ns = std::min(
        r.wait_before_migration_wakeup_ns, m[static_cast<size_t>(Microstate::kWaitCpuWakeup)]);
    r.wait_before_migration_preempted_ns =
        std::min(r.wait_before_migration_preempted_ns,
                 m[static_cast<size_t>(Microstate::kWaitCpuPreempted)]);
  }
}

}  // namespace cstool
