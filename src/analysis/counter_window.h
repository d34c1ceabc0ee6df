// What the trace reconstructed for one thread, cut at the instants the kernel's counters
// were sampled (/proc snapshots of the recording, see kernel/kernel_recording.h), so that
// `report --check` compares like with like: kernel delta (end - start snapshot) against
// the reconstruction between the same two instants. Filled by analysis/counter_window_observer.h.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "model/enqueue_dating.h"
#include "model/microstate.h"

namespace cstool {

// What the kernel counts of one wait for a CPU other than its segment: the part before
// sched_wakeup queued the thread is not run delay yet, and sleep before the wait is, when
// the thread was moved between CPUs while asleep (Thread::SwitchPlacement::asleep_queued_ns;
// `asleep_maybe_queued`: at most that much, the move was untraced).
// `enqueue_maybe_earlier`: of `unqueued`, how much may have been run delay after all: the
// enqueue, dated at its sched_wakeup, began at a wakelist flush, or in a call that began
// with its sched_waking and stalled, that much earlier (the virtual CPU stalled between
// the clock read and the event).
// `preempted_asleep`: of a wait after a preemption that caught the thread on its way to
// sleep (Observer::OnWokenWhilePreempted), the part the kernel did not count: up to its
// first move to another runqueue, or all of it.
// `between_runqueues`: of a wait, the part the thread spent detached from one runqueue
// and not yet attached to another, moved in a load balancer's batch
// (Observer::OnBetweenRunqueues), which the kernel does not count.
struct WaitAdjust {
  int64_t unqueued = 0;
  int64_t asleep_queued = 0;
  int64_t asleep_maybe_queued = 0;
  int64_t enqueue_maybe_earlier = 0;
  int64_t preempted_asleep = 0;
  int64_t between_runqueues = 0;

  WaitAdjust Negated() const {
    return {-unqueued,         -asleep_queued,    -asleep_maybe_queued, -enqueue_maybe_earlier,
            -preempted_asleep, -between_runqueues};
  }
  // For the first `dur` of the wait (the parts the kernel did not count come first; a
  // batch's span, in the middle, is clipped alike: a cut inside such a wait is rare).
  WaitAdjust ClippedTo(int64_t dur) const {
    WaitAdjust a = *this;
    a.unqueued = std::min(a.unqueued, dur);
    a.enqueue_maybe_earlier = std::min(a.enqueue_maybe_earlier, a.unqueued);
    a.preempted_asleep = std::min(a.preempted_asleep, dur);
    a.between_runqueues =
        std::clamp<int64_t>(dur - a.unqueued - a.preempted_asleep, 0, a.between_runqueues);
    return a;
  }
};

// The quantities the kernel also counts.
struct WindowTotals {
  uint64_t voluntary = 0;
  uint64_t involuntary = 0;
  int64_t on_cpu_ns = 0;    // user + sys + irq + softirq (sum_exec_runtime includes irq time
                            // on kernels without CONFIG_IRQ_TIME_ACCOUNTING)
  int64_t wait_cpu_ns = 0;  // wait_cpu_wakeup + wait_cpu_preempted (the kernel's run_delay)
  int64_t unknown_ns = 0;   // time the trace could not classify
  // The part of wait_cpu_ns between sched_waking and sched_wakeup: the wakeup path before
  // the kernel queues the thread, where its run_delay starts (0.3-0.6 us a wakeup here,
  // so 10% of a ping-pong's wait).
  int64_t wait_unqueued_ns = 0;
  // Sleep the kernel counts as run delay (WaitAdjust), added when the wait after it ends.
  int64_t asleep_queued_ns = 0;
  int64_t asleep_maybe_queued_ns = 0;
  // Run delay the kernel may have counted before enqueues dated at their event
  // (WaitAdjust::enqueue_maybe_earlier).
  int64_t enqueue_maybe_earlier_ns = 0;
  // On-CPU time the run-time clock did not count (steal), already left out of on_cpu_ns.
  int64_t stolen_ns = 0;
  // The part of wait_cpu_ns after preemptions on the way to sleep that the kernel did
  // not count as run delay (WaitAdjust::preempted_asleep).
  int64_t wait_preempted_asleep_ns = 0;
  // The part of wait_cpu_ns between two runqueues in a load balancer's batch of moves,
  // which the kernel did not count (WaitAdjust::between_runqueues).
  int64_t wait_between_runqueues_ns = 0;

  // The run delay as the kernel counts it.
  int64_t QueuedWaitNs() const {
    return wait_cpu_ns - wait_unqueued_ns - wait_preempted_asleep_ns - wait_between_runqueues_ns +
           asleep_queued_ns;
  }
  void AddTime(Microstate s, int64_t dur, const WaitAdjust& adjust = {});
  WindowTotals operator-(const WindowTotals& o) const;
  bool operator==(const WindowTotals&) const = default;
};

// Totals of everything at or before `ts`, counted the way the kernel's counters grow:
// switches with ts <= cut; the part of each on-CPU (or unknown) segment before the cut;
// a wait for a CPU once it has ended by the cut, or up to its last move to another
// runqueue before it (run_delay grows when the waiting thread is switched in or moved,
// not while it waits).
struct WindowCut {
  int64_t ts = 0;
  WindowTotals before;
  // /proc reads a thread's exec runtime as its last update left it (schedstat does not
  // update a running task's): on-CPU time counts up to the kernel's last update at or
  // before `ts`, known from the increment that spans it (none: up to `ts`).
  int64_t on_cpu_to = std::numeric_limits<int64_t>::max();
  // What the trace knew about the thread at the cut: the state of the segment covering
  // it (if any), and the first known (not unknown) state starting after it.
  bool covered = false;
  Microstate at = Microstate::kUnknown;
  int64_t next_known_start = std::numeric_limits<int64_t>::max();
  Microstate next_known = Microstate::kUnknown;

  // Whether the trace can account the thread's time from this cut on: its state at the
  // cut was known, or it was asleep then (the first known state after is a sleep or a
  // wait after a wakeup). A thread that was on a CPU or queued, unseen, at the cut has
  // run time or run delay in progress that the kernel counts and the trace cannot.
  bool TimeCovered() const;
};

// The switches traced while the kernel's switch counts were being read (from, to]: the
// read took them at one instant inside, so any number of the last of them may be
// missing from the counts. In time order.
struct SwitchesDuringRead {
  int64_t from = 0;
  int64_t to = 0;
  std::vector<std::pair<int64_t, bool>> switches;  // (ts, voluntary)

  // The counts the kernel may have missed: the last k switches, for k = 0..size().
  std::vector<std::pair<int64_t, int64_t>> MissedCounts() const;  // (voluntary, involuntary)
};

// How long after the clock an enqueue read the kernel writes its sched_wakeup (the
// enqueue itself and the preemption check come between; 1-3 us measured). Learnt from
// the wakeups the kernel switched in at the enqueue's clock (no run delay: the switch-in
// the trace places comes before the event), for the ones that waited, whose enqueue no
// increment dates: a histogram of 100 ns bins up to kMaxNs, its median.
class EnqueueLag {
 public:
  static constexpr int64_t kMaxNs = 10'000;
  static constexpr int64_t kBinNs = 100;
  void Add(int64_t lag_ns) {
    if (lag_ns < 0 || lag_ns >= kMaxNs) return;
    ++bins_[static_cast<size_t>(lag_ns / kBinNs)];
    ++count_;
  }
  uint64_t count() const { return count_; }
  // The median, at its bin's middle; 0 before any wakeup was measured.
  int64_t Median() const;

 private:
  std::array<uint64_t, kMaxNs / kBinNs> bins_{};
  uint64_t count_ = 0;
};

struct CounterWindow {
  std::vector<WindowCut> cuts;            // per sample of this tid: its instant, its read's end
  std::vector<SwitchesDuringRead> reads;  // one per /proc read of its switch counts
  WindowTotals total;                     // the whole observed lifetime
  int64_t exit_ts = -1;  // where the kernel's exit record was sampled, -1 if no exit seen
  // What happened at or after sched_process_exit: the final switch of a dying thread
  // (and the rest of do_exit()), which taskstats, sampled in do_exit() just before the
  // tracepoint, does not count.
  WindowTotals after_exit;
  // The other instant the exit record may hold (Thread::accounted_before_exit_tick: before
  // a tick between the exit's start and the record), earlier than exit_ts; -1: none. And
  // what happened at or after it.
  int64_t exit_before_tick_ts = -1;
  WindowTotals after_exit_before_tick;

  // Totals at or before `ts`: a cut's values if one was taken at exactly `ts`, else the
  // whole lifetime (callers only ask for instants they registered as cuts).
  const WindowTotals& Before(int64_t ts) const;
  const WindowCut* Cut(int64_t ts) const;            // nullptr when none was registered at `ts`
  const SwitchesDuringRead* Read(int64_t to) const;  // the read ending at `to`, or nullptr

  // Registers a sample: cuts at `ts` and at the end of its switch-count read (nothing
  // where one is), and for a read of some length (from < to) a record of the switches
  // inside it.
  void AddSample(int64_t ts, int64_t switches_from, int64_t switches_to);

  // A segment of the thread, in time order (the state machine sends one thread's in
  // order, unlike its switches). The pieces of one wait for a CPU after a
  // wakeup (the state machine may release a wait in parts, at the increments that date
  // them) are joined before they count: where the wait ends tells how its enqueue was
  // dated (TakeWaitAdjust), and the kernel adds the whole wait at the switch-in.
  void PushSegment(Microstate s, int64_t start, int64_t end, EnqueueLag& lag);
  // `adjust`: of a wait_cpu_wakeup segment, what the kernel counts otherwise.
  void AddSegment(Microstate s, int64_t start, int64_t end, const WaitAdjust& adjust = {}) {
    if (cuts.empty() && exit_ts < 0 && exit_before_tick_ts < 0) [[likely]] {  // most threads
      total.AddTime(s, end - start, adjust);
      return;
    }
    AddSegmentToCuts(s, start, end, adjust);
  }
  void AddSwitch(int64_t ts, bool voluntary);
  // While on a CPU, [start, end) was not exec runtime (Observer::OnStolen): what the kernel
  // counts is the on-CPU segments less that.
  void AddStolen(int64_t start, int64_t end);
  // The kernel accounted the thread's run time from `from` to `to`: a cut inside that
  // span saw the exec runtime of `from`. Unlike the rest of the window this depends on
  // order: it must come before the segments it covers, which the state machine holds
  // until the increment (it flushes them unheld only after lost events or a run with
  // tens of thousands of segments and no increment; the cut then counts up to its own instant).
  void NoteAccounted(int64_t from, int64_t to) {
    for (WindowCut& c : cuts)
      if (from <= c.ts && c.ts < to && c.on_cpu_to > c.ts) c.on_cpu_to = from;
  }

  // sched_wakeup queued the thread at `ts`, in the wait that began at `since` (sleep the
  // kernel counted as run delay before it: `asleep_queued`, at most `asleep_maybe_queued`
  // more): remembered until that wait's segment arrives (segments may be held back while
  // the thread's syscall state is resolved, so several can be outstanding, oldest first).
  // `dating`: how well `ts` stands for the enqueue's clock.
  void NoteEnqueued(int64_t since, int64_t ts, const EnqueueDating& dating = {},
                    int64_t asleep_queued = 0, int64_t asleep_maybe_queued = 0) {
    pending_.push_back({since, dating, {ts - since, asleep_queued, asleep_maybe_queued}});
  }
  // What was noted for the wait_cpu_wakeup segment [start, end) (its part before the
  // enqueue at most its length), none if nothing was; forgets it and any older wait's
  // (one whose segment was empty, never sent).
  // An enqueue dated at its event is moved back by the median lag when the wait went on
  // past the event, and may lie as far back as its wakelist flush, or as its sched_waking
  // in the same call when that call stalled (enqueue_maybe_earlier);
  // one whose wait ended before it measures the lag (`lag`); one queued in place (no
  // flush, with every flush in the file) whose wait ended at the event had none.
  WaitAdjust TakeWaitAdjust(int64_t start, int64_t end, EnqueueLag& lag);
  // A thread waiting for a CPU was moved to another CPU's runqueue at `ts`: the kernel
  // adds its run delay so far there (dequeued, then queued anew), not only at the
  // switch-in, so a cut between the move and the switch-in sees the wait up to the move.
  // Moves arrive in time order, before the segments of the wait they split.
  // `wait_since`: the start of the wait it moved in.
  void NoteQueuedMove(int64_t ts, int64_t wait_since) {
    if (!cuts.empty()) queued_moves_.push_back(ts);
    if (wait_since != moved_wait_.since) moved_wait_ = {wait_since, ts};
    if (!preempted_asleep_.empty() && preempted_asleep_.back().since == wait_since &&
        preempted_asleep_.back().first_move < 0)
      preempted_asleep_.back().first_move = ts;
  }
  // The preemption at `since` caught the thread on its way to sleep
  // (Observer::OnWokenWhilePreempted): the kernel counts the wait after it only from its
  // first move to another runqueue, if any. Comes before that wait's segments.
  void NotePreemptedAsleep(int64_t since) {
    if (!preempted_asleep_.empty() && preempted_asleep_.back().since == since) return;
    preempted_asleep_.push_back({since, moved_wait_.since == since ? moved_wait_.first_move : -1});
  }
  // A load balancer's batch moved the thread, waiting for a CPU, and it was between two
  // runqueues at least over [from, to) (Observer::OnBetweenRunqueues): the kernel counts
  // none of that as run delay. A later call with the same `from` (the batch went on)
  // widens it. Comes before the segments of the wait it is in.
  void NoteBetweenRunqueues(int64_t from, int64_t to) {
    if (!between_runqueues_.empty() && between_runqueues_.back().first == from) {
      between_runqueues_.back().second = std::max(between_runqueues_.back().second, to);
      return;
    }
    between_runqueues_.emplace_back(from, to);
  }
  // The trace ended at `ts`: the wait pushed last counts now (the cuts' totals are final
  // from here on), and a wait for a CPU still in progress then (its segment ends there)
  // had not ended, so the kernel had counted it at a cut after the end only up to its
  // last move.
  void EndTrace(int64_t ts, EnqueueLag& lag);

 private:
  void AddSegmentToCuts(Microstate s, int64_t start, int64_t end, const WaitAdjust& adjust);
  // The last queued move in (after, to], or -1.
  int64_t LastQueuedMove(int64_t after, int64_t to) const;
  // NoteQueuedMove: of the current wait, and of later ones whose segments are still held
  // back. (A move while a woken thread waits for its sched_wakeup, or in a trace without
  // one, is not noted: that wait may then be counted short at a cut inside it.)
  std::vector<int64_t> queued_moves_;
  // The first queued move of the latest wait that had one (its start, the move).
  struct FirstMove {
    int64_t since = -1;
    int64_t first_move = -1;  // -1: none
  } moved_wait_;
  // Preemptions on the way to sleep whose wait has not ended yet, oldest first.
  std::vector<FirstMove> preempted_asleep_;
  // The end of the last wait_cpu_preempted segment pushed, while the wait goes on (-1:
  // the last segment was another state): a preempted wait may come in pieces.
  int64_t preempted_to_ = -1;
  // The WaitAdjust of the wait_cpu_preempted segment [start, end): what the kernel did
  // not count of it (its part in a noted preemption's wait before the first move).
  WaitAdjust PreemptedAdjust(int64_t start, int64_t end) const;
  // Spans between runqueues (NoteBetweenRunqueues) whose wait has not been pushed past
  // them, oldest first: [from, to).
  std::vector<std::pair<int64_t, int64_t>> between_runqueues_;
  // Of the wait segment [start, end) with `adjust`, the part between runqueues added; the
  // spans that end by `end` are done with.
  WaitAdjust WithBetweenRunqueues(int64_t start, int64_t end, WaitAdjust adjust);
  struct PendingWait {
    int64_t since;  // start of the wait_cpu_wakeup segment
    EnqueueDating dating;
    WaitAdjust adjust;
  };
  std::vector<PendingWait> pending_;
  // The wait_cpu_wakeup pushed last, still growing while its pieces arrive (start -1: none).
  struct OpenWait {
    int64_t start = -1;
    int64_t end = -1;
  } open_wait_;
  void CloseWait(EnqueueLag& lag);
  // The wait current_wait_ holds is over (`ended`: by a switch-in, not cut short by the
  // trace's end): counted at the cuts, whole where it had ended, else up to its last move.
  void FinishWait(bool ended);
  struct WaitPart {
    Microstate state;
    int64_t start;
    int64_t end;
    WaitAdjust adjust;
  };
  std::vector<WaitPart> current_wait_;  // the segments of the latest wait, in order, not
                                        // yet counted at the cuts (FinishWait)
};

}  // namespace cstool
