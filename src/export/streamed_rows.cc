#include "export/streamed_rows.h"

namespace cstool {
namespace {

// Recent history kept per thread for rows not yet written (segments arrive a little
// after the switches and wakeups that delimit them, never by more than a few).
constexpr size_t kMaxCpuChanges = 64;
constexpr size_t kMaxWakeups = 16;

Value Nullable(int64_t v) { return v < 0 ? Value{} : Value{v}; }

}  // namespace

StreamedRowObserver::StreamedRowObserver(RowSink& sink, const SyscallTable& syscalls)
    : sink_(sink), syscalls_(syscalls), occupancy_([this](const CpuRun& r) { WriteSlice(r); }) {}

StreamedRowObserver::PerThread& StreamedRowObserver::Of(const Thread& t) {
  if (t.id >= threads_.size()) threads_.resize(t.id + 1);
  return threads_[t.id];
}

std::string_view StreamedRowObserver::CauseLabel(SwitchCause c) {
  auto [it, inserted] = cause_labels_.try_emplace(c.Pack());
  if (inserted) it->second = syscalls_.CauseLabel(c);
  return it->second;
}

// The CPU the thread was current on at the middle of [start, end), else during any of it,
// else the one it became current on next: the thread's times put a switch-in at the
// kernel's instant, up to a few microseconds before the traced sched_switch, so a short
// first segment of a run can end before the run the trace shows.
int64_t StreamedRowObserver::CpuDuring(PerThread& p, int64_t start, int64_t end) {
  const int64_t mid = start + (end - start) / 2;
  int64_t at_mid = kNone, any = kNone, next = kNone;
  bool next_seen = false;
  for (size_t i = 0; i < p.cpus.size(); ++i) {
    const CpuChange& c = p.cpus[i];
    const int64_t until = i + 1 < p.cpus.size() ? p.cpus[i + 1].ts : INT64_MAX;
    if (c.ts <= mid && mid < until) at_mid = c.cpu;
    if (c.cpu >= 0 && any < 0 && c.ts < end && until > start) any = c.cpu;
    if (c.ts >= end && !next_seen) {
      next = c.cpu;
      next_seen = true;
    }
  }
  // The next segment starts at `end`: keep only the change in force there and later ones.
  while (p.cpus.size() >= 2 && p.cpus[1].ts <= end) p.cpus.pop_front();
  return at_mid >= 0 ? at_mid : any >= 0 ? any : next;
}

void StreamedRowObserver::OnStateSegment(const Thread& t, Microstate s, int32_t /*cpu*/,
                                         int64_t start, int64_t end) {
  PerThread& p = Of(t);
  const int64_t cpu = IsOnCpu(s) ? CpuDuring(p, start, end) : kNone;
  Row& held = p.held;
  if (held.open && held.end == start && held.state == s && held.cpu == cpu) {
    held.end = end;
    return;
  }
  if (held.open) WriteState(t.id, held);
  held = Row{true, s, start, end, cpu, kNone, kNone};
  if (s == Microstate::kWaitCpuWakeup) {
    // The wakeup that started this wait: the latest before its end.
    while (!p.wakeups.empty() && p.wakeups.front().ts < end) {
      held.waker = p.wakeups.front().waker;
      held.irq_context = p.wakeups.front().from_irq ? 1 : 0;
      p.wakeups.pop_front();
    }
  }
}

void StreamedRowObserver::WriteState(uint32_t utid, const Row& r) {
  const Value row[] = {int64_t{utid},          r.start,         r.end - r.start,
                       MicrostateKey(r.state), Nullable(r.cpu), Nullable(r.waker),
                       Nullable(r.irq_context)};
  sink_.Add(Table::kThreadState, row);
}

void StreamedRowObserver::OnWakeup(const WakeupEvent& w) {
  if (!w.wakee) return;
  PerThread& p = Of(*w.wakee);
  p.wakeups.push_back({w.ts, w.waker ? int64_t{w.waker->id} : kNone, w.from_irq});
  if (p.wakeups.size() > kMaxWakeups) p.wakeups.pop_front();
}

void StreamedRowObserver::OnCpuCurrent(const CpuCurrentEvent& e) {
  occupancy_.OnCpuCurrent(e);
  if (e.cpu < 0) return;
  const size_t cpu = static_cast<size_t>(e.cpu);
  if (cpu >= current_.size()) current_.resize(cpu + 1, nullptr);
  const Thread* before = current_[cpu];
  const Thread* now = e.known ? e.current : nullptr;
  if (before == now) return;
  auto note = [&](const Thread& t, int32_t c) {
    PerThread& p = Of(t);
    p.cpus.push_back({e.ts, c});
    if (p.cpus.size() > kMaxCpuChanges) p.cpus.pop_front();
  };
  // Left this CPU, unless it has moved on to another one already.
  if (before && !Of(*before).cpus.empty() && Of(*before).cpus.back().cpu == e.cpu)
    note(*before, -1);
  if (now) note(*now, e.cpu);
  current_[cpu] = now;
}

void StreamedRowObserver::OnSwitch(const SwitchEvent& e) {
  occupancy_.OnSwitch(e);
  if (!e.prev) return;
  const Value row[] = {
      e.ts,
      int64_t{e.cpu},
      int64_t{e.prev->id},
      e.next ? Value{int64_t{e.next->id}} : Value{},
      int64_t{e.voluntary ? 1 : 0},
      CauseLabel(e.cause),
      e.voluntary ? Value{} : Value{kPreemptedAtKeys[static_cast<size_t>(e.preempted_at)]}};
  sink_.Add(Table::kSwitch, row);
}

void StreamedRowObserver::WriteSlice(const CpuRun& run) {
  if (!run.thread) return;
  const Value row[] = {int64_t{run.thread->id}, run.start, run.end - run.start, int64_t{run.cpu},
                       run.switched_out ? Value{CauseLabel(run.cause)} : Value{}};
  sink_.Add(Table::kSchedSlice, row);
}

void StreamedRowObserver::OnTraceEnd(int64_t ts) {
  occupancy_.OnTraceEnd(ts);
  Flush();
}

void StreamedRowObserver::Flush() {
  for (size_t id = 0; id < threads_.size(); ++id) {
    Row& held = threads_[id].held;
    if (!held.open) continue;
    WriteState(static_cast<uint32_t>(id), held);
    held.open = false;
  }
}

}  // namespace cstool
