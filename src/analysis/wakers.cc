#include "analysis/wakers.h"

namespace cstool {
namespace {

// A CPU number a damaged or hostile file may carry: beyond this it is not one (the
// state machine's own bound, sched/state_machine_inl.h).
constexpr int32_t kMaxCpu = 1 << 16;
bool ValidCpu(int32_t cpu) { return cpu >= 0 && cpu < kMaxCpu; }

}  // namespace

WaitParty WakerOf(const WakeupEvent& w) {
  if (w.waker) return {w.waker, {}};
  if (w.from_irq) return {nullptr, w.irq_source};
  return {nullptr, w.waker_known ? kPartyIdle : kPartyUnknown};
}

// Out of line: inlined, the resize made every lookup save and restore five registers.
void WakerObserver::GrowCpus(int32_t cpu) { cpus_.resize(static_cast<size_t>(cpu) + 1); }

void WakerObserver::OnWakeup(const WakeupEvent& w) {
  // Only the end of a sleep is owed to a waker: a new task's first wakeup ends none.
  // A thread first seen at its wakeup ended no sleep the trace shows.
  const bool sleep_seen = IsSleeping(w.blocked_state) ||
                          (w.blocked_state == Microstate::kUnknown && w.ts > w.blocked_since);
  if (!w.new_task && sleep_seen)
    model_.For(*w.wakee).AddWokenBy(WakerOf(w), 1, w.ts - w.blocked_since);
  AddWaiter(w.wakee, ValidCpu(w.target_cpu) ? w.target_cpu : w.wakee->cpu, w.ts);
}

// A thread outside a pid-filtered recording is not followed: the filter drops its
// switch-in unless a followed task is switched out for it, so its wait mostly has no
// end in the trace. Followed, it stayed a waiter until it next showed running (often
// never), charged to whatever ran on its CPU all along (kernel threads woken by the
// workload: 7 such on average at every switch of a 4.3 M-event ping-pong, a tenth of
// the analysis's work).
void WakerObserver::AddWaiter(const Thread* t, int32_t cpu, int64_t ts) {
  if (!t->tracked) return;  // never a waiter, so none to replace
  RemoveWaiter(t);
  if (ValidCpu(cpu)) waiters_.push_back({t, cpu, ts, ts});
}

void WakerObserver::RemoveWaiter(const Thread* t) {
  std::erase_if(waiters_, [t](const Waiter& w) { return w.thread == t; });
}

void WakerObserver::Flush(Waiter& w, int64_t ts) {
  if (ts <= w.mark) return;
  // Lost events may have made its time unknown (or ended the wait unseen): only what its
  // state shows as waiting counts.
  if (w.thread->lost_touched) [[unlikely]] {
    if (!IsWaitingForCpu(w.thread->state)) {
      w.mark = ts;
      return;
    }
    w.mark = std::max(w.mark, w.thread->since);
    if (ts <= w.mark) return;
  }
  const CpuView& cpu = Cpu(w.cpu);
  const WaitParty running = cpu.current ? WaitParty{cpu.current, {}}
                            : cpu.known ? WaitParty{nullptr, kPartyIdle}
                                        : WaitParty{nullptr, kPartyUnknown};
  model_.For(*w.thread).AddWaitedBehind(running, ts - w.mark);
  w.mark = ts;
}

void WakerObserver::OnCpuCurrent(const CpuCurrentEvent& e) {
  if (!ValidCpu(e.cpu)) return;
  // The switch names the task it switched out: where the view had the CPU idle, that
  // task's switch-in was not traced (an unfollowed task's, from idle), and a CPU with a
  // task queued does not stay idle: the waits there were behind it (an exec'd thread's
  // 2.8 ms behind "idle" were the recorder's reader's). Not after lost events there: what
  // ran is unknown. (A followed prev's own untraced switch-in showed before this one.)
  // Where the view has a task there, a sign of another (the switch that ends a wait
  // names another prev, an interrupt's wakeup interrupted another task, the CPU shows
  // idle) with no switch from it says a switch went unrecorded (a pid filter drops those
  // between unfollowed tasks): when it came is unknown, and so is what the waits since
  // the last sign were behind. (A sleep's 4 ms wait was charged to rcu_preempt, switched
  // in when the sleep was preempted, though the switch that ended it was a compiler's.)
  if (CpuView& view = Cpu(e.cpu); view.known && view.current == nullptr) {
    if (e.sw != nullptr && e.sw->prev != nullptr) view.current = e.sw->prev;
  } else if (view.known && e.known && (e.sw != nullptr ? e.sw->prev : e.current) != view.current) {
    view = CpuView{};  // unknown
  }
  // Preempted (or yielding): it waits on this CPU from now on, a new wait.
  const Thread* preempted =
      e.sw && e.sw->prev && !e.sw->voluntary && e.sw->prev != e.current && e.sw->prev->tracked
          ? e.sw->prev
          : nullptr;
  // One pass (a switch's main cost here): every wait is accounted up to the change, the
  // new current's wait is over, a freed thread waits no more, and the preempted one's
  // old wait (if the trace still had one) is replaced. The waiters keep their order. (A
  // wait lost events may have cut short or ended unseen is no wait's length, nor is one
  // that ends on another CPU than the trace had it queued on: it went somewhere unseen,
  // a CPU record -C left out, say.)
  size_t kept = 0;
  for (Waiter& w : waiters_) {
    // Queued elsewhere since (sched_wakeup placed it on another CPU than sched_waking
    // named): the time so far stays with the CPU it was counted on.
    if (ValidCpu(w.thread->cpu) && w.thread->cpu != w.cpu && !w.thread->on_cpu) {
      Flush(w, e.ts);
      w.cpu = w.thread->cpu;
    }
    if (w.cpu == e.cpu) Flush(w, e.ts);
    if (w.thread == e.current) {
      if (!w.thread->lost_touched && w.cpu == e.cpu)
        model_.For(*w.thread).NoteWaitEnded(w.since, e.ts - w.since);
      continue;
    }
    if (w.thread->freed || w.thread == preempted) continue;
    waiters_[kept++] = w;
  }
  waiters_.resize(kept);
  // (After the flushes, which charge the waits up to here to what the CPU ran before.)
  Cpu(e.cpu) = {.current = e.current, .known = e.known, .run_end = -1, .sign_ts = e.ts};
  if (preempted) waiters_.push_back({preempted, e.cpu, e.ts, e.ts});
}

void WakerObserver::OnMigrate(const Thread& t, int32_t /*from_cpu*/, int32_t to_cpu, int64_t ts) {
  for (Waiter& w : waiters_)
    if (w.thread == &t && ValidCpu(to_cpu)) {
      Flush(w, ts);
      w.cpu = to_cpu;
    }
}

// What ran between the switches a pid filter drops: an unfollowed task's own increment
// says it held the CPU over [from, to]. At `from`, a sign of it like any other (the waits
// up to there were behind what the view had, or unknown when that was another task);
// from there, behind it. The same task's next increment continues its run, unless it
// starts later than the last one ended: it stopped and ran again, and what ran between
// is unknown. An increment that ended by the latest sign (one at a switch's time comes
// after the switch) adds nothing: the sign already told what ran.
void WakerObserver::OnUnfollowedRun(const Thread& t, int32_t cpu, int64_t from, int64_t to) {
  if (!ValidCpu(cpu)) return;
  CpuView& view = Cpu(cpu);
  if (to <= view.sign_ts) return;
  const bool continues = view.known && view.current == &t &&
                         (view.run_end < 0 || from - view.run_end <= kIncrementLagNs);
  if (!continues) {
    if (view.current == &t) view = CpuView{};  // unknown since its last run
    Sign(cpu, from, &t);
  }
  for (Waiter& w : waiters_)
    if (w.cpu == cpu) Flush(w, to);
  // Looked up again: a flush above may have grown the views (a waiter queued on a CPU
  // with none yet), which moves them all.
  CpuView& after = Cpu(cpu);
  after.run_end = to;
  after.sign_ts = to;
}

// Before the state machine makes the waits there unknown: they are known up to here.
void WakerObserver::OnLostEvents(int32_t cpu, int64_t ts, int64_t /*count*/) {
  for (Waiter& w : waiters_)
    if (w.cpu == cpu) Flush(w, ts);
}

void WakerObserver::OnTraceEnd(int64_t ts) {
  for (Waiter& w : waiters_) Flush(w, ts);
  waiters_.clear();
  // Largest first, so that renderers can take the head.
  for (ThreadReport& r : model_.threads) {
    std::stable_sort(r.woken_by.begin(), r.woken_by.end(), [](const WokenBy& a, const WokenBy& b) {
      return a.blocked_ns > b.blocked_ns;
    });
    std::stable_sort(
        r.waited_behind.begin(), r.waited_behind.end(),
        [](const WaitedBehind& a, const WaitedBehind& b) { return a.time_ns > b.time_ns; });
  }
}

}  // namespace cstool
