// `cstool irq`'s analysis: per interrupt source count, total, max and per-CPU split,
// and per task the time stolen by interrupts and the sources that stole it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/irq_report_model.h"
#include "base/last_n.h"
#include "sched/observer.h"

namespace cstool {

class IrqSummaryObserver : public Observer {
 public:
  // `cpus`: the traced CPUs, listed in every source's per-CPU split even when 0.
  explicit IrqSummaryObserver(std::vector<int32_t> cpus) : cpus_(std::move(cpus)) {}

  uint32_t Hooks() const override {
    return HookBit(Hook::kIrq) | HookBit(Hook::kCpuCurrent) | HookBit(Hook::kInterruptSegment);
  }
  void OnIrq(const IrqInterval& iv) override;
  void OnCpuCurrent(const CpuCurrentEvent& e) override;
  void OnInterruptSegment(const Thread& thread, Microstate state, int32_t cpu, int64_t start,
                          int64_t end) override;

  // Sources by total time (then name), tasks by lost time (then tid); tasks that no
  // interrupt hit are left out.
  void Fill(IrqReport& report) const;
  // Every task's sources so far (the recorder's threads too): fn(const Thread&,
  // const IrqTaskSummary&), tid and comm left unset.
  template <typename Fn>
  void ForEachTask(Fn&& fn) const {
    for (const auto& [id, acc] : tasks_) fn(*acc.thread, acc.summary);
  }

 private:
  struct TaskAcc {
    const Thread* thread = nullptr;
    IrqTaskSummary summary;
  };
  IrqTaskSummary& Task(const Thread& t);

  std::vector<int32_t> cpus_;
  std::map<std::string, IrqSourceSummary, std::less<>> sources_;
  std::unordered_map<uint32_t, TaskAcc> tasks_;  // by Thread::id
  IrqCount idle_;
  // An interrupt, [start, end), and what it hit (null: an idle CPU). The task the kernel
  // switched in at a wakeup inside one ran the rest of it (its irq time): that rest is
  // then no idle time, nor the interrupted task's, but the new task's, from that source
  // (a task woken from idle by the tick had LOST time with no interrupt and no source to
  // show for it).
  struct RecentIrq {
    int64_t start = 0;
    int64_t end = 0;
    const std::string* source = nullptr;  // a key of sources_
    const Thread* interrupted = nullptr;
    // The task the CPU showed next after it (null: none that can have run its rest),
    // unset until the CPU shows one.
    std::optional<const Thread*> next;
    const Thread* rest_counted_for = nullptr;  // the task whose count has its rest
    int64_t moved_ns = 0;                      // of it, the rest after a switch inside
  };
  using RecentIrqs = LastN<RecentIrq, 64>;
  // The CPU's recent interrupts; null when none came there yet (or `cpu` is no CPU).
  RecentIrqs* Recent(int32_t cpu) {
    return cpu >= 0 && static_cast<size_t>(cpu) < recent_.size() ? recent_[cpu].get() : nullptr;
  }
  // The latest per CPU, indexed by CPU (a lookup at every switch): a switched-in task's
  // segments come at its first run-time increment (within a tick), or when its syscall
  // state is known.
  std::vector<std::unique_ptr<RecentIrqs>> recent_;
};

}  // namespace cstool
