// Each thread's migrations between CPUs, and the wait it spent queued on a CPU before
// being migrated away from it (perf sched timehist -P's pre-migration time).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/report_model.h"
#include "sched/observer.h"

namespace cstool {

// A move of a queued thread at `m` ends a pre-migration part that began where its wait
// did (Thread::since) or at its previous move in that wait. Only moves are observed (no
// per-segment work); each part is capped by the wait microstate it is a part of.
class MigrationObserver : public Observer {
 public:
  explicit MigrationObserver(ReportModel& model) : model_(model) {}
  uint32_t Hooks() const override { return HookBit(Hook::kMigrate) | HookBit(Hook::kTraceEnd); }
  void OnMigrate(const Thread& t, int32_t from_cpu, int32_t to_cpu, int64_t ts) override;
  void OnTraceEnd(int64_t ts) override;

 private:
  ReportModel& model_;
  std::vector<int64_t> last_move_;  // by Thread::id: its latest move while queued (0: none)
};

}  // namespace cstool
