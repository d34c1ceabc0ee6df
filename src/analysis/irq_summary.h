// `cstool irq`'s analysis: per interrupt source count, total, max and per-CPU split,
// and per task the time stolen by interrupts and the sources that stole it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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
  // CPUs below this have their counts indexed by CPU; the rest (a damaged file's, on most
  // machines) stay with the map alone: a table up to them for each of a damaged file's
  // many sources would take megabytes.
  static constexpr int32_t kDenseCpus = 1024;

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
    for (const auto& acc : tasks_)
      if (acc) fn(*acc->thread, acc->summary);
  }

 private:
  struct TaskAcc {
    const Thread* thread = nullptr;
    IrqTaskSummary summary;
    // summary.sources's entries by their key in sources_: a task meets few sources, and
    // a string-keyed lookup at every interrupt cost a tenth of a report of 64 CPUs.
    std::vector<std::pair<const std::string*, IrqCount*>> by_source;
    IrqCount& Source(const std::string* source);
  };
  TaskAcc& Task(const Thread& t);
  // A source's summary, with its per-CPU counts indexed by CPU: per_cpu is a map, and its
  // lookup at every interrupt was half of this observer's time on 64 CPUs.
  struct SourceAcc {
    IrqSourceSummary summary;
    std::vector<IrqCount*> by_cpu;  // into summary.per_cpu (a map's entries stay put)
    IrqCount& Cpu(int32_t cpu);
  };
  using Sources = std::map<std::string, SourceAcc, std::less<>>;
  // The source named `name`. The state machine's names are interned, so the same text
  // comes at the same address: looked up by that first.
  Sources::value_type& Source(IrqKind kind, std::string_view name);

  std::vector<int32_t> cpus_;
  Sources sources_;
  // sources_'s entries by the address of the name an interval gave (a map's entries stay
  // where they are).
  std::unordered_map<const char*, Sources::value_type*> by_name_;
  std::vector<std::unique_ptr<TaskAcc>> tasks_;  // by Thread::id (dense), null: none yet
  IrqCount idle_;                                // hardirqs, vectors, NMIs on an idle CPU
  IrqCount idle_softirq_;                        // softirqs there
  IrqCount& IdleOf(bool softirq) { return softirq ? idle_softirq_ : idle_; }
  // An interrupt, [start, end), and what it hit (null: an idle CPU). The task the kernel
  // switched in at a wakeup inside one ran the rest of it (its irq time): that rest is
  // then no idle time, nor the interrupted task's, but the new task's, from that source
  // (a task woken from idle by the tick had LOST time with no interrupt and no source to
  // show for it).
  struct RecentIrq {
    int64_t start = 0;
    int64_t end = 0;
    const std::string* source = nullptr;  // a key of sources_
    bool softirq = false;                 // its time is softirq time, not irq time
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
