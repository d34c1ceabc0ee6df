#include "analysis/counter_window.h"

#include <algorithm>
#include <utility>

namespace cstool {

void WindowTotals::AddTime(Microstate s, int64_t dur, const WaitAdjust& adjust) {
  switch (s) {
    case Microstate::kUser:
    case Microstate::kSys:
    case Microstate::kIrq:
    case Microstate::kSoftirq:
      on_cpu_ns += dur;
      break;
    case Microstate::kWaitCpuWakeup:
    case Microstate::kWaitCpuPreempted:
      wait_cpu_ns += dur;
      wait_unqueued_ns += adjust.unqueued;
      asleep_queued_ns += adjust.asleep_queued;
      asleep_maybe_queued_ns += adjust.asleep_maybe_queued;
      enqueue_maybe_earlier_ns += adjust.enqueue_maybe_earlier;
      wait_preempted_asleep_ns += adjust.preempted_asleep;
      wait_between_runqueues_ns += adjust.between_runqueues;
      break;
    case Microstate::kUnknown:
      unknown_ns += dur;
      break;
    default:
      break;
  }
}

WindowTotals WindowTotals::operator-(const WindowTotals& o) const {
  return {voluntary - o.voluntary,
          involuntary - o.involuntary,
          on_cpu_ns - o.on_cpu_ns,
          wait_cpu_ns - o.wait_cpu_ns,
          unknown_ns - o.unknown_ns,
          wait_unqueued_ns - o.wait_unqueued_ns,
          asleep_queued_ns - o.asleep_queued_ns,
          asleep_maybe_queued_ns - o.asleep_maybe_queued_ns,
          enqueue_maybe_earlier_ns - o.enqueue_maybe_earlier_ns,
          stolen_ns - o.stolen_ns,
          wait_preempted_asleep_ns - o.wait_preempted_asleep_ns,
          wait_between_runqueues_ns - o.wait_between_runqueues_ns};
}

const WindowCut* CounterWindow::Cut(int64_t ts) const {
  for (const WindowCut& c : cuts)
    if (c.ts == ts) return &c;
  return nullptr;
}

const SwitchesDuringRead* CounterWindow::Read(int64_t to) const {
  for (const SwitchesDuringRead& r : reads)
    if (r.to == to) return &r;
  return nullptr;
}

void CounterWindow::AddSample(int64_t ts, int64_t switches_from, int64_t switches_to) {
  auto cut_at = [&](int64_t at) {
    if (!Cut(at)) cuts.push_back({at, {}});
  };
  cut_at(ts);
  cut_at(switches_to);
  if (switches_from < switches_to && !Read(switches_to))
    reads.push_back({switches_from, switches_to, {}});
}

std::vector<std::pair<int64_t, int64_t>> SwitchesDuringRead::MissedCounts() const {
  std::vector<std::pair<int64_t, int64_t>> out{{0, 0}};
  for (auto it = switches.rbegin(); it != switches.rend(); ++it) {
    auto next = out.back();
    ++(it->second ? next.first : next.second);
    out.push_back(next);
  }
  return out;
}

const WindowTotals& CounterWindow::Before(int64_t ts) const {
  for (const WindowCut& c : cuts)
    if (c.ts == ts) return c.before;
  return total;
}

// Order-independent: the state machine may emit a thread's switches late (while their
// cause waits for resolution), so every cut is updated by timestamp, not by arrival.
bool WindowCut::TimeCovered() const {
  if (covered && at != Microstate::kUnknown) return true;
  switch (next_known) {
    case Microstate::kSleep:
    case Microstate::kSleepFutex:
    case Microstate::kSleepPoll:
    case Microstate::kSleepUninterruptible:
    case Microstate::kSleepPaging:
    case Microstate::kStopped:
    case Microstate::kWaitCpuWakeup:
      return true;
    default:
      return false;
  }
}

int64_t EnqueueLag::Median() const {
  uint64_t seen = 0;
  for (size_t i = 0; i < bins_.size(); ++i) {
    seen += bins_[i];
    if (2 * seen >= count_ && count_ > 0) return static_cast<int64_t>(i) * kBinNs + kBinNs / 2;
  }
  return 0;
}

namespace {

// From a sched_waking to its sched_wakeup in one call on one CPU (interrupts off between)
// takes 2 us, 7 at the 99th percentile (24 000 such wakeups of a sleep loop under load,
// twelve recordings); in a longer one the virtual CPU stalled (or the waker spun on a
// lock, or on the wakee still switching out), before the enqueue's clock read or after
// it. After it, the kernel's run delay began up to that much before the event: of the 16
// such calls whose wakeup waited, 8 had read the clock 8-21 us before their event (the
// loop read its run delay after each wakeup), and one 2 ms stall left a check 2 ms short.
constexpr int64_t kWakingStallNs = 20'000;

}  // namespace

WaitAdjust CounterWindow::TakeWaitAdjust(int64_t start, int64_t end, EnqueueLag& lag) {
  if (pending_.empty()) return {};
  // Per thread, wait segments arrive in time order: entries before `start` are waits
  // whose (zero-length) segment was never sent.
  size_t i = 0;
  while (i < pending_.size() && pending_[i].since < start) ++i;
  WaitAdjust adjust;
  if (i < pending_.size() && pending_[i].since == start) {
    const PendingWait& p = pending_[i++];
    adjust = p.adjust;
    if (p.dating.at_event) {
      const int64_t event = start + adjust.unqueued;
      if (end < event) {  // switched in at the enqueue's clock: the event came this much later
        lag.Add(event - end);
      } else if (end == event && p.dating.flushes_traced && p.dating.flush_ts < 0) {
        // Switched in where the model dated the CPU's clock by this very event (the
        // reschedule reused it), and queued in place: the kernel switched at the
        // enqueue's own clock, with no run delay. One a wakelist flush did keeps the
        // median lag: across CPUs, the kernel did count some there.
        adjust.unqueued = end - start;
      } else {
        adjust.unqueued = std::max<int64_t>(0, adjust.unqueued - lag.Median());
        // Where the clock read may lie, at the earliest: the flush that did the enqueue,
        // or the waking that began a call the virtual CPU stalled in.
        const int64_t read_from =
            p.dating.flush_ts >= 0 ? p.dating.flush_ts
            : p.dating.waking_ts >= 0 && event - p.dating.waking_ts > kWakingStallNs
                ? p.dating.waking_ts
                : -1;
        if (read_from >= 0)
          adjust.enqueue_maybe_earlier =
              std::clamp<int64_t>(start + adjust.unqueued - read_from, 0, adjust.unqueued);
      }
    }
    adjust.unqueued = std::min(adjust.unqueued, end - start);
    adjust.enqueue_maybe_earlier = std::min(adjust.enqueue_maybe_earlier, adjust.unqueued);
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(i));
  return adjust;
}

WaitAdjust CounterWindow::PreemptedAdjust(int64_t start, int64_t end) const {
  WaitAdjust adjust;
  for (const FirstMove& p : preempted_asleep_) {
    if (p.since >= end) break;
    const int64_t counted_from = p.first_move >= 0 ? p.first_move : end;
    adjust.preempted_asleep +=
        std::max<int64_t>(0, std::min(end, counted_from) - std::max(start, p.since));
  }
  adjust.preempted_asleep = std::min(adjust.preempted_asleep, end - start);
  return adjust;
}

WaitAdjust CounterWindow::WithBetweenRunqueues(int64_t start, int64_t end, WaitAdjust adjust) {
  if (between_runqueues_.empty()) [[likely]]
    return adjust;
  int64_t between = 0;
  for (const auto& [from, to] : between_runqueues_)
    between += std::max<int64_t>(0, std::min(end, to) - std::max(start, from));
  std::erase_if(between_runqueues_, [&](const auto& span) { return span.second <= end; });
  // (Another uncounted part may overlap it: the kernel left each instant out once.)
  adjust.between_runqueues =
      std::clamp<int64_t>(end - start - adjust.unqueued - adjust.preempted_asleep, 0, between);
  return adjust;
}

void CounterWindow::PushSegment(Microstate s, int64_t start, int64_t end, EnqueueLag& lag) {
  const bool preempted = s == Microstate::kWaitCpuPreempted;
  if (!preempted || start != preempted_to_) {
    // The preempted wait pushed last (if any) has ended: its noted preemptions too.
    std::erase_if(preempted_asleep_, [&](const FirstMove& p) { return p.since < start; });
    preempted_to_ = -1;
  }
  const bool wakeup_wait = s == Microstate::kWaitCpuWakeup;
  if (wakeup_wait && open_wait_.start >= 0 && open_wait_.end == start) {
    open_wait_.end = end;
    return;
  }
  CloseWait(lag);
  if (wakeup_wait) {
    open_wait_ = {start, end};
  } else if (preempted) {
    AddSegment(s, start, end, WithBetweenRunqueues(start, end, PreemptedAdjust(start, end)));
    preempted_to_ = end;
  } else {
    AddSegment(s, start, end);
  }
}

void CounterWindow::CloseWait(EnqueueLag& lag) {
  if (open_wait_.start < 0) return;
  const OpenWait w = std::exchange(open_wait_, {});
  AddSegment(Microstate::kWaitCpuWakeup, w.start, w.end,
             WithBetweenRunqueues(w.start, w.end, TakeWaitAdjust(w.start, w.end, lag)));
}

void CounterWindow::EndTrace(int64_t ts, EnqueueLag& lag) {
  CloseWait(lag);
  // A wait still in progress at the end (its pieces end there) had not ended.
  FinishWait(/*ended=*/current_wait_.empty() || current_wait_.back().end != ts);
}

int64_t CounterWindow::LastQueuedMove(int64_t after, int64_t to) const {
  for (auto it = queued_moves_.rbegin(); it != queued_moves_.rend(); ++it)
    if (*it > after && *it <= to) return *it;
  return -1;
}

void CounterWindow::FinishWait(bool ended) {
  if (current_wait_.empty()) return;
  const int64_t start = current_wait_.front().start;
  const int64_t end = current_wait_.back().end;
  for (WindowCut& c : cuts) {
    if (c.ts <= start) continue;
    // Counted whole once it ended by the cut, else up to its last move before the cut.
    const int64_t to = ended && end <= c.ts ? end : LastQueuedMove(start, std::min(c.ts, end));
    for (const WaitPart& w : current_wait_) {
      if (w.start >= to) break;
      const int64_t dur = std::min(w.end, to) - w.start;
      c.before.AddTime(w.state, dur, w.adjust.ClippedTo(dur));
    }
  }
  current_wait_.clear();
}

void CounterWindow::AddSegmentToCuts(Microstate s, int64_t start, int64_t end,
                                     const WaitAdjust& adjust) {
  const bool wait = IsWaitingForCpu(s);
  // A wait's pieces count together, when it has ended: the kernel adds a wait's run delay
  // at its switch-in (or a move), whatever pieces the state machine released it in.
  if (!wait || (!current_wait_.empty() && current_wait_.back().end != start)) FinishWait(true);
  if (wait) {
    // Moves before this wait split none after it (segments come in time order).
    if (current_wait_.empty()) std::erase_if(queued_moves_, [&](int64_t m) { return m <= start; });
    current_wait_.push_back({s, start, end, adjust});
  }
  for (WindowCut& c : cuts) {
    if (!wait) {
      const int64_t to = IsOnCpu(s) ? std::min(c.ts, c.on_cpu_to) : c.ts;
      if (to > start) c.before.AddTime(s, std::min(end, to) - start);
    }
    if (start <= c.ts && c.ts < end) {
      c.covered = true;
      c.at = s;
    }
    if (start > c.ts && s != Microstate::kUnknown && start < c.next_known_start) {
      c.next_known_start = start;
      c.next_known = s;
    }
  }
  total.AddTime(s, end - start, adjust);
  // Segments ending after the exit are emitted after OnExit (at their end), so exit_ts is
  // known by then; earlier ones may arrive late but contribute nothing here. A wait wholly
  // after it (the final preemption's) takes what the kernel did not count with it, as in
  // `total`, so that the window, the difference, keeps none of it.
  auto after = [&](int64_t from, WindowTotals& into) {
    if (from < 0 || end <= from) return;
    into.AddTime(s, end - std::max(start, from), start >= from ? adjust : WaitAdjust{});
  };
  after(exit_ts, after_exit);
  after(exit_before_tick_ts, after_exit_before_tick);
}

void CounterWindow::AddStolen(int64_t start, int64_t end) {
  auto take = [](WindowTotals& into, int64_t ns) {
    into.on_cpu_ns -= ns;
    into.stolen_ns += ns;
  };
  // A cut sees on-CPU time up to the kernel's last update before it (on_cpu_to), as the
  // on-CPU segments do.
  for (WindowCut& c : cuts)
    if (const int64_t to = std::min(c.ts, c.on_cpu_to); to > start)
      take(c.before, std::min(end, to) - start);
  take(total, end - start);
  if (exit_ts >= 0 && end > exit_ts) take(after_exit, end - std::max(start, exit_ts));
  if (exit_before_tick_ts >= 0 && end > exit_before_tick_ts)
    take(after_exit_before_tick, end - std::max(start, exit_before_tick_ts));
}

void CounterWindow::AddSwitch(int64_t ts, bool voluntary) {
  for (WindowCut& c : cuts)
    if (ts <= c.ts) ++(voluntary ? c.before.voluntary : c.before.involuntary);
  for (SwitchesDuringRead& r : reads)
    if (r.from < ts && ts <= r.to) {
      // Switches may arrive late (their cause resolved later): keep time order.
      auto at = std::upper_bound(r.switches.begin(), r.switches.end(), ts,
                                 [](int64_t t, const auto& s) { return t < s.first; });
      r.switches.insert(at, {ts, voluntary});
    }
  ++(voluntary ? total.voluntary : total.involuntary);
  if (exit_ts >= 0 && ts >= exit_ts) ++(voluntary ? after_exit.voluntary : after_exit.involuntary);
  if (exit_before_tick_ts >= 0 && ts >= exit_before_tick_ts)
    ++(voluntary ? after_exit_before_tick.voluntary : after_exit_before_tick.involuntary);
}

}  // namespace cstool
