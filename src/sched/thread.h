// One thread as the state machine knows it. Observers see it read-only; its address is
// stable for the whole analysis (ThreadTable keeps threads in a deque).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/anomalies.h"
#include "model/microstate.h"
#include "model/syscall_table.h"

namespace cstool {

// On-CPU and sleep states whose exact microstate depends on whether the thread was in
// a syscall, while that is still unknown (see StateMachine, "pending resolution").
enum class AbstractState : uint8_t { kNone, kRunning, kSleepInterruptible, kSleepUninterruptible };

struct Thread {
  uint32_t id = 0;  // internal id: tid reuse never merges two threads
  int32_t tid = 0;
  int32_t tgid = 0;  // 0 while unknown
  std::string comm;
  bool tracked = false;       // belongs to the recorded workload
  bool recorder = false;      // one of the recording cstool's own threads
  bool lost_touched = false;  // a lost-events gap may have changed this thread's numbers
  // Woken onto a CPU the recording left out (record -C) and unknown since: a wakeup before
  // it shows running again means it ran and slept there unseen.
  bool woken_onto_untraced_cpu = false;
  bool created_in_trace = false;
  // Forked in the trace and not yet made runnable (wake_up_new_task): its parent is still
  // creating it, and its observed lifetime begins at that first wakeup.
  bool awaits_first_wakeup = false;
  bool exiting = false;  // sched_process_exit seen
  // Lifetime over: sched_process_free, reaped by wait4, or the final switch with X.
  bool freed = false;
  bool user_thread = false;  // seen in a syscall or a user page fault
  // A kernel thread (kthreadd or its child): never in a syscall, its on-CPU time is sys.
  // A syscall or an exec ends it (a user-mode helper the kernel started, a reused tid).
  bool kernel_thread = false;
  // A page fault seen since it last entered or left a syscall, slept other than in D, was
  // preempted on its way back to user mode, or began its exit.
  bool fault_pending = false;
  int64_t first_ts = 0;  // observed lifetime: [first_ts, end_ts)
  // Since when `tid` names it: its creation (its fork, before the first_ts of a thread
  // forked in the trace; else its first_ts), or when an exec by this non-leader thread
  // gave it its leader's tid (the kernel's counters name it by that tid from then on).
  int64_t tid_since = 0;
  // The tid it had before such an exec (0: it took none): the kernel's events name it by
  // that tid until tid_since, and a user may know it by either.
  int32_t tid_before_exec = 0;
  // Whether `id` names it for a user: its tid, or the one it had before such an exec.
  bool GoesBy(int32_t id) const {
    return id == tid || (tid_before_exec != 0 && id == tid_before_exec);
  }
  int64_t end_ts = -1;
  int64_t exit_switch_ts = -1;  // its final switch-out (an exiting thread's last), -1: none

  // Current microstate, since when, and on which CPU it runs or is queued.
  Microstate state = Microstate::kUnknown;
  AbstractState abstract = AbstractState::kNone;
  int64_t since = 0;
  int32_t cpu = -1;
  bool on_cpu = false;
  // Time in each microstate so far (every segment with its final label), summed by the
  // state machine itself so that the report's totals cost no observer call per segment.
  MicrostateTimes times{};
  // Made runnable by sched_waking and not yet queued (sched_wakeup not seen yet).
  bool waking_unqueued = false;
  // On a runqueue, waiting for a CPU (a move now is one of a queued task, not a woken
  // task's placement before its enqueue).
  bool Queued() const { return !on_cpu && IsWaitingForCpu(state) && !waking_unqueued; }
  // The last sched_waking that made it runnable: when, and on which CPU it was traced.
  int64_t waking_at = -1;
  int32_t waking_cpu = -1;
  // Moved to another CPU while asleep (see SwitchPlacement::asleep_queued_ns): when the
  // trace showed the first move (-1: none), and, for an untraced one, the sleep it may
  // have started in (0: none). Both are for the wait the next wakeup starts.
  int64_t moved_asleep_at = -1;
  int64_t maybe_moved_asleep_ns = 0;

  // A stretch of one state, not yet final (see held_segments and pending_segments).
  // `cpu`: the thread's CPU when the stretch was made (Thread::cpu then): the one it ran
  // on, for the states on a CPU. Kept with it because a held stretch is final only later,
  // when the thread may be queued on another CPU already.
  struct Segment {
    Microstate state;
    AbstractState abstract;
    int32_t cpu;
    int64_t start;
    int64_t end;
  };
  // Segments in time order. Appending runs for about every event of a running thread
  // whose run-time increments are traced, so it is inline: std::vector's push_back
  // compiled to a call here (4 % of a report's instructions). The storage grows, and is
  // given back only when a large one empties; `size()` is what is in use.
  class SegmentList {
   public:
    SegmentList() = default;
    SegmentList(SegmentList&& other) noexcept
        : store_(std::move(other.store_)), size_(std::exchange(other.size_, 0)) {}
    SegmentList& operator=(SegmentList&& other) noexcept {
      store_ = std::move(other.store_);
      size_ = std::exchange(other.size_, 0);
      return *this;
    }
    SegmentList(const SegmentList&) = default;
    SegmentList& operator=(const SegmentList&) = default;
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    void clear() {
      size_ = 0;
      ReleaseLargeStore();
    }
    void push_back(const Segment& s) {
      if (size_ == store_.size()) [[unlikely]]
        Grow();
      store_[size_++] = s;
    }
    void truncate(size_t n) {
      size_ = std::min(n, size_);
      ReleaseLargeStore();
    }
    Segment& operator[](size_t i) { return store_[i]; }
    Segment* begin() { return store_.data(); }
    Segment* end() { return store_.data() + size_; }
    const Segment* begin() const { return store_.data(); }
    const Segment* end() const { return store_.data() + size_; }
    void swap(SegmentList& other) noexcept {
      store_.swap(other.store_);
      std::swap(size_, other.size_);
    }

   private:
    [[gnu::noinline]] void Grow() { store_.resize(store_.empty() ? 8 : 2 * store_.size()); }
    // Emptied after a long run, the list gives its memory back: a run of thousands of
    // syscalls between two increments would otherwise leave that much with every thread
    // that once had one.
    void ReleaseLargeStore() {
      constexpr size_t kKeptCapacity = 1024;
      if (size_ == 0 && store_.size() > kKeptCapacity) [[unlikely]]
        store_ = {};
    }
    std::vector<Segment> store_;
    size_t size_ = 0;
  };

  // Where the kernel's accounting puts this thread's switches, compared with the trace
  // (StateMachine, "kernel switch instant"): time the kernel counted as this thread's run
  // time between a rescheduling wakeup and its traced switch-in, time it no longer counted
  // as run time between such a wakeup and its traced switch-out, and switch-ins the kernel
  // did not trace at all (an idle CPU picking it up without sched_switch).
  struct SwitchPlacement {
    int64_t in_early_ns = 0;
    int64_t out_early_ns = 0;
    uint64_t untraced_switch_ins = 0;
    uint64_t untraced_switch_outs = 0;
    // Sleep the kernel counts as run delay: a task that sleeps stays on its runqueue for
    // a while (EEVDF's delayed dequeue), and when the load balancer moves it to another
    // CPU then, enqueueing it there starts its run delay (sched_info) although it still
    // sleeps. Known to the ns when the trace shows the move (sched_migrate_task); when
    // the move is untraced (done from an unfollowed task's context) and shows only as a
    // wakeup on another CPU than the task slept on, at most `asleep_maybe_queued_ns`.
    int64_t asleep_queued_ns = 0;
    int64_t asleep_maybe_queued_ns = 0;
    // On-CPU time the kernel's run-time clock did not count: the host ran something else
    // on the virtual CPU while the thread ran (steal; StateMachine::NoteStolen).
    int64_t stolen_ns = 0;
  };
  SwitchPlacement placement;
  AnomalyCounters anomalies;  // the anomalies that concerned this thread
  // Switched out at this instant with no sched_switch recorded (-1: not): a switch still
  // to be emitted, voluntary if a wakeup of it comes next, involuntary if it runs again.
  int64_t untraced_out_ts = -1;
  int32_t untraced_out_cpu = -1;  // where it ran then
  bool seen_running = false;      // the trace has shown it on a CPU at least once
  // While the kernel's instant of this thread's last switch-in or of its coming switch-out
  // is not known yet, its segments from `held_from` on wait here, to be relabelled.
  int64_t held_from = -1;
  SegmentList held_segments;
  // Switched in at `settle_in_from` at the earliest (the runqueue clock model) and at
  // `settle_in_to` (the trace) at the latest; its first sched_stat_runtime tells where.
  int64_t settle_in_from = -1;
  int64_t settle_in_to = -1;
  Segment settle_in_before{};  // the state it was in before, since `start`
  Segment settle_in_run{};     // the run's first state
  // The kernel's accounting of the current run (with sched_stat_runtime): on CPU from
  // `run_start`, `run_ns` accounted so far. -1: not known.
  int64_t run_start = -1;
  int64_t run_ns = 0;
  int64_t run_ns_before_ipi = -1;  // run_ns before an increment was assumed missing
  // A gap in the run's increments (one measured from after where those before it ended)
  // with every increment in the file: either the run-time clock stood still (steal) or
  // that increment's event was written well after its clock was read (the vCPU stalled
  // between them; the kernel then gives the stall to whatever runs next), or that
  // increment used an old, reused clock. At a voluntary switch-out the next task's first
  // increment tells which; at a preemption by an unfollowed task it is a reused clock; an
  // increment that counts from before its event takes that part back; otherwise it is
  // steal. -1: none.
  int64_t gap_from = -1;       // where the increments before it ended
  int64_t gap_ns = 0;          // its length: the steal, if it is steal
  int64_t gap_clock_end = -1;  // the run's accounting without it: that increment's clock if late
  // The increment after the gap was a tick's (or another interrupt's), or a wakeup's
  // that queued a task on this CPU: update_rq_clock() read its clock right then, so it
  // was no clock a switch reused.
  bool gap_clock_fresh = false;
  // Preempted: switched out at `settle_out_from` by its increments at the earliest (before
  // an increment a reschedule IPI assumed missing), at `settle_out_to` by the trace; the
  // task that took the CPU (settles_out_of points back here) tells where, and if it never
  // does, the model's instant `settle_out_default` stands.
  int64_t settle_out_from = -1;
  int64_t settle_out_to = -1;
  int64_t settle_out_default = -1;
  Segment settle_out_after{};   // the state it switched out to
  bool settle_out_gap = false;  // a gap (gap_from) is pending: the settled end tells its steal
  Thread* settles_out_of = nullptr;
  // Where the kernel's accounting stood when the thread entered exit/exit_group: the
  // exit record (taskstats, early in do_exit()) samples its exec runtime there. -1: unknown.
  int64_t accounted_at_exit = -1;
  // Entered exit (an exit syscall, or a fatal signal's exit seen at sched_process_exit);
  // no increment seen since.
  bool exit_accounting_pending = false;
  // When the exit record was taken (-1: not yet): taskstats_exit() woke the recorder's
  // listener (the first wakeup from the thread itself since the exit began), or
  // sched_process_exit, whichever came first.
  int64_t exit_record_ts = -1;
  int64_t accounted_at_record = -1;  // the accounting the trace showed then (-1: none)
  // The record came before the run's first increment: accounted_at_record is the run's
  // switch-in as the model placed it, which that increment settles (an untraced switch-in
  // after a move to another CPU stood 0.24 ms after the kernel's).
  bool record_at_switch_in = false;
  // Where the accounting stood before the first increment after the exit began, when that
  // increment (a tick) came before the record: taskstats reads the exec runtime at an
  // instant the trace does not show, before it wakes the listener, so the record holds
  // either this or accounted_at_exit. -1: no such increment, no second candidate.
  int64_t accounted_before_exit_tick = -1;
  // The first wakeup the thread did in task context outside any syscall since its last
  // one, and the accounting then: where a fatal signal's exit took its record
  // (StateMachine::BeginSignalExit). -1: none.
  int64_t signal_exit_wakeup_ts = -1;
  int64_t accounted_at_signal_exit_wakeup = -1;
  // The same for that wakeup: it came before the run's first increment, and
  // accounted_at_signal_exit_wakeup is the switch-in the model placed (SettleIn moves it).
  bool signal_exit_at_switch_in = false;
  // Where the first update after that wakeup began (the wakeup's own, when the listener
  // was woken on this CPU), -1: none yet. Were it the record's, it is the first after it.
  int64_t update_after_signal_exit_wakeup = -1;

  int64_t syscall = kSyscallUnknown;
  int64_t syscall_start = 0;
  bool syscall_enter_seen = false;
  uint32_t last_waker = UINT32_MAX;
  // A task's sched_waking of this thread while it still ran (on its way to sleep, so the
  // kernel queues the wakeup to complete once it is off its CPU, often in the wakelist
  // interrupt there): that task is the waker of the sleep its sched_wakeup ends. Null when
  // none is pending; cleared at its next switch-in, and at a sleep that began after a
  // change of state the waking came before (ttwu found it still runnable then).
  const Thread* early_waker = nullptr;
  int64_t early_waking_ts = -1;
  // The thread whose fork created this one (sched_process_fork), null when the trace does
  // not show it: a child process's parent process is the creator's thread group.
  const Thread* forked_by = nullptr;

  // Pending resolution: while `syscall == kSyscallUnknown`, segments and sleep causes
  // that depend on it wait here and are relabelled once the first syscall event (or an
  // R preemption, which proves user mode) tells where the thread was.
  std::vector<Segment> pending_segments;
  std::vector<uint32_t> pending_switches;  // indexes into StateMachine's pending switch list
  // A lost-events gap on its CPU left it `unknown` from lost_gap_at (-1: none open); if
  // nothing shows it before that CPU's next record, it resumes this state there.
  int64_t lost_gap_at = -1;
  int32_t lost_gap_cpu = -1;
  Microstate state_before_gap = Microstate::kUnknown;
  AbstractState abstract_before_gap = AbstractState::kNone;
  bool waking_unqueued_before_gap = false;
  // Where the CPU's next record resumed that state (a sleep's wakeup may be in the gap).
  int64_t resumed_after_gap_at = -1;
  // msa's interval cuts end a stretch without changing state: where the last cut was
  // made, and where the stretch it cut had begun (StateMachine::StretchBegan).
  int64_t cut_at = -1;
  int64_t stretch_began = -1;
};

}  // namespace cstool
