#include "analysis/irq_summary.h"

#include <algorithm>

#include "base/enum_names.h"

namespace cstool {

constexpr EnumNames<IrqKind, 4> kIrqKindNames{{"hardirq", "vector", "softirq", "nmi"}};
static_assert(static_cast<size_t>(IrqKind::kNmi) + 1 == kIrqKindNames.size());

std::string_view IrqKindName(IrqKind kind) { return kIrqKindNames(kind); }

IrqSummaryObserver::TaskAcc& IrqSummaryObserver::Task(const Thread& t) {
  if (t.id >= tasks_.size()) tasks_.resize(size_t{t.id} + 1);
  std::unique_ptr<TaskAcc>& acc = tasks_[t.id];
  if (!acc) acc = std::make_unique<TaskAcc>();
  acc->thread = &t;
  return *acc;
}

IrqCount& IrqSummaryObserver::TaskAcc::Source(const std::string* source) {
  for (const auto& [key, count] : by_source)
    if (key == source) return *count;
  IrqCount& count = summary.sources[*source];
  by_source.emplace_back(source, &count);
  return count;
}

IrqCount& IrqSummaryObserver::SourceAcc::Cpu(int32_t cpu) {
  if (cpu < 0 || cpu >= kDenseCpus) [[unlikely]]
    return summary.per_cpu[cpu];
  const auto i = static_cast<size_t>(cpu);
  if (i >= by_cpu.size()) by_cpu.resize(i + 1, nullptr);
  if (by_cpu[i] == nullptr) by_cpu[i] = &summary.per_cpu[cpu];
  return *by_cpu[i];
}

IrqSummaryObserver::Sources::value_type& IrqSummaryObserver::Source(IrqKind kind,
                                                                    std::string_view name) {
  if (auto it = by_name_.find(name.data()); it != by_name_.end() && it->second->first == name)
    return *it->second;
  auto it = sources_.find(name);
  if (it == sources_.end()) {
    SourceAcc acc;
    acc.summary.name = std::string(name);
    acc.summary.kind = kind;
    for (int32_t c : cpus_) acc.summary.per_cpu[c];
    it = sources_.emplace(acc.summary.name, std::move(acc)).first;
  }
  auto& entry = by_name_[name.data()];
  entry = &*it;
  return *entry;
}

void IrqSummaryObserver::OnIrq(const IrqInterval& iv) {
  const int64_t dur = std::max<int64_t>(0, iv.end - iv.start);
  auto& [name, acc] = Source(iv.kind, iv.name);
  const std::string* const key = &name;
  IrqSourceSummary& s = acc.summary;
  ++s.count;
  s.time_ns += dur;
  s.max_ns = std::max(s.max_ns, dur);
  IrqCount& c = acc.Cpu(iv.cpu);
  ++c.count;
  c.time_ns += dur;

  if (iv.cpu >= 0) {
    if (static_cast<size_t>(iv.cpu) >= recent_.size()) recent_.resize(iv.cpu + 1);
    if (!recent_[iv.cpu]) recent_[iv.cpu] = std::make_unique<RecentIrqs>();
    recent_[iv.cpu]->Push({.start = iv.start,
                           .end = iv.end,
                           .source = key,
                           .softirq = iv.kind == IrqKind::kSoftirq,
                           .interrupted = iv.interrupted});
  }
  if (!iv.interrupted) {
    // Apart by kind, as a task's IRQ_US and SOFTIRQ_US are, so that each adds up.
    IrqCount& idle = IdleOf(iv.kind == IrqKind::kSoftirq);
    ++idle.count;
    idle.time_ns += dur;
    return;
  }
  TaskAcc& task = Task(*iv.interrupted);
  ++task.summary.count;
  IrqCount& ts = task.Source(key);
  ++ts.count;
  ts.time_ns += dur;
}

// A task switched in inside an interrupt that hit another task is switched to at its
// exit (or after the softirqs that follow it): a switch later than this after the CPU's
// last interrupt ran none of their rest. (From idle the switch-in is often untraced: the
// task's first event shows it, a kernel thread's maybe only its switch-out.)
constexpr int64_t kRestSwitchWindowNs = 100'000;

void IrqSummaryObserver::OnCpuCurrent(const CpuCurrentEvent& e) {
  RecentIrqs* recent = Recent(e.cpu);
  if (recent == nullptr) return;
  const bool soon = e.ts - recent->newest().end <= kRestSwitchWindowNs;
  // They end in the order they were pushed: once one has its next task, so have all
  // before it (a switch at every event of a report then visits one or none). (In a
  // damaged file whose clock went back on this CPU an older one may be left without: its
  // rest then stays with the task it hit, as for a rest the report cannot tie.)
  recent->ForEachNewestWhile([&](RecentIrq& irq) {
    if (irq.next) return false;
    if (irq.end <= e.ts) irq.next = soon || irq.interrupted == nullptr ? e.current : nullptr;
    return true;
  });
}

void IrqSummaryObserver::OnInterruptSegment(const Thread& thread, Microstate state, int32_t cpu,
                                            int64_t start, int64_t end) {
  TaskAcc& task = Task(thread);
  (state == Microstate::kIrq ? task.summary.irq_ns : task.summary.softirq_ns) += end - start;
  if (RecentIrqs* recent = Recent(cpu))
    // Newest first, up to the first that ended before the segment (they end in the order
    // they were pushed): a scan of all 64 at every interrupt segment cost a sixth of a
    // report of 64 CPUs with a tick on each.
    recent->ForEachNewestWhile([&](RecentIrq& irq) {
      if (irq.end <= start) return false;
      const int64_t rest = std::min(end, irq.end) - std::max(start, irq.start);
      // Its own interrupts count whole (OnIrq); another task's rest only if this one came next.
      if (rest <= 0 || irq.interrupted == &thread || irq.next != &thread) return true;
      irq.moved_ns += rest;
      if (irq.interrupted == nullptr) {
        IdleOf(irq.softirq).time_ns -= rest;
      } else {
        TaskAcc& hit = Task(*irq.interrupted);
        IrqCount& was = hit.Source(irq.source);
        was.time_ns -= rest;
        // Switched before it began (the kernel's instant): it never hit the other task.
        if (irq.moved_ns == irq.end - irq.start) {
          --was.count;
          --hit.summary.count;
        }
      }
      IrqCount& source = task.Source(irq.source);
      source.time_ns += rest;
      if (irq.rest_counted_for == &thread) return true;  // its rest in several segments
      irq.rest_counted_for = &thread;
      ++source.count;
      ++task.summary.count;
      return true;
    });
}

void IrqSummaryObserver::Fill(IrqReport& report) const {
  report.sources.clear();
  for (const auto& [name, acc] : sources_) report.sources.push_back(acc.summary);
  std::stable_sort(
      report.sources.begin(), report.sources.end(),
      [](const IrqSourceSummary& a, const IrqSourceSummary& b) { return a.time_ns > b.time_ns; });
  report.tasks.clear();
  report.recorder = {};
  for (const auto& task : tasks_) {
    if (!task) continue;
    const TaskAcc& acc = *task;
    if (acc.summary.count == 0 && acc.summary.LostNs() == 0) continue;
    // Not the recording's (the recorder's own threads): their interrupts count in the
    // sources and in a line of their own, and the task table is about the workload.
    if (!acc.thread->tracked) {
      report.recorder.count += acc.summary.count;
      report.recorder.irq_ns += acc.summary.irq_ns;
      report.recorder.softirq_ns += acc.summary.softirq_ns;
      continue;
    }
    IrqTaskSummary t = acc.summary;
    t.tid = acc.thread->tid;
    t.pid = acc.thread->tgid != 0 ? acc.thread->tgid : acc.thread->tid;
    t.comm = acc.thread->comm;
    report.tasks.push_back(std::move(t));
  }
  std::sort(report.tasks.begin(), report.tasks.end(),
            [](const IrqTaskSummary& a, const IrqTaskSummary& b) {
              if (a.LostNs() != b.LostNs()) return a.LostNs() > b.LostNs();
              if (a.count != b.count) return a.count > b.count;
              return a.tid < b.tid;
            });
  report.idle = idle_;
  report.idle_softirq = idle_softirq_;
}

}  // namespace cstool
