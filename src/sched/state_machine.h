// The scheduler state machine: consumes merged, decoded events (EventSink) and
// reconstructs per-thread microstates and cause-labelled switches, reporting them
// to observers. See state_machine.cc for the timeline of one thread's life.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/last_n.h"
#include "model/anomalies.h"
#include "model/events.h"
#include "model/recording_info.h"
#include "model/syscall_table.h"
#include "sched/cause_attribution.h"
#include "sched/irq_nesting.h"
#include "sched/observer.h"
#include "sched/thread.h"
#include "sched/thread_tracker.h"

namespace cstool {

// Which event families the trace contains; rules that need a missing family degrade
// in documented ways instead of guessing.
struct TraceCapabilities {
  bool syscalls = true;     // raw_syscalls:sys_enter/sys_exit
  bool waking = true;       // sched:sched_waking
  bool wakeup = true;       // sched:sched_wakeup
  bool irqs = true;         // irq:* and irq_vectors:*
  bool page_faults = true;  // exceptions:page_fault_*
  bool renames = true;      // task:task_rename (else a comm shows at the thread's switches)
  // sched:sched_stat_runtime: the kernel's run-time increments place each switch exactly.
  bool stat_runtime = false;
  // Every increment of a followed thread is in the file, in every context (cstool's
  // unfiltered run-time buffer beside the trace, every CPU recorded, nothing lost): a gap
  // in a run's increments is then no filtered-out update but time the run-time clock
  // stood still.
  bool all_increments = false;
  // sched_ttwu_pending's address: csd_function_entry records of it are wakelist flushes
  // (RecordingInfo::wakelist_function); 0: none are.
  uint64_t wakelist_function = 0;
  // The thread a dying thread wakes right after its exit record was taken (the
  // recorder's taskstats listener, RecordingInfo::exit_listener_tid); 0: not known.
  int32_t exit_listener_tid = 0;
  // The moves of followed threads done in unfollowed contexts are in the file
  // (RecordingInfo::unfiltered_migrations): where a followed thread is queued is known.
  bool unfiltered_moves = false;
  // The online CPUs the recording left out (record -C; RecordingInfo::untraced_cpus):
  // what a thread queued on one does there is not in the trace.
  std::vector<int32_t> untraced_cpus;
  bool CpuUntraced(int32_t cpu) const {
    return !untraced_cpus.empty() &&
           std::find(untraced_cpus.begin(), untraced_cpus.end(), cpu) != untraced_cpus.end();
  }
};

class StateMachine final : public EventSink {
 public:
  StateMachine(const SyscallTable& syscalls, TraceCapabilities caps, TrackingPolicy policy);
  ~StateMachine() override;

  // Each observer is called only for the hooks it declares (Observer::Hooks).
  void AddObserver(Observer* observer) {
    const uint32_t hooks = observer->Hooks();
    for (size_t h = 0; h < hooks_.size(); ++h)
      if (hooks & (1u << h)) hooks_[h].push_back(observer);
  }

  // Called for every anomaly with the time, CPU and thread it concerns (for
  // `report --explain-anomalies`).
  // Each anomaly as it is counted, `count` at once (a lost-events gap counts its events).
  using AnomalyLog =
      std::function<void(Anomaly, int64_t ts, int32_t cpu, int32_t tid, uint64_t count)>;
  void SetAnomalyLog(AnomalyLog log) { anomaly_log_ = std::move(log); }

  void PushSchedSwitch(const SchedSwitch& e) override;
  void PushSchedWakeup(const SchedWakeup& e) override;
  void PushSchedMigrateTask(const SchedMigrateTask& e) override;
  void PushSchedStatRuntime(const SchedStatRuntime& e) override;
  void PushUnfilteredRuntime(const SchedStatRuntime& e) override;
  void PushUnfilteredLost(const LostEvents& e) override;
  void PushUnfilteredWakelistFlush(const CsdFunctionEntry& e) override;
  void PushUnfilteredMigrateTask(const SchedMigrateTask& e) override;
  void PushSchedProcessFork(const SchedProcessFork& e) override;
  void PushTaskNewtask(const TaskNewtask& e) override;
  void PushTaskRename(const TaskRename& e) override;
  void PushSchedProcessExec(const SchedProcessExec& e) override;
  void PushSchedProcessExit(const SchedProcessExit& e) override;
  void PushSchedProcessFree(const SchedProcessFree& e) override;
  void PushIrqHandlerEntry(const IrqHandlerEntry& e) override;
  void PushIrqHandlerExit(const IrqHandlerExit& e) override;
  void PushSoftirq(const Softirq& e) override;
  void PushIrqVector(const IrqVector& e) override;
  void PushNmiHandler(const NmiHandler& e) override;
  void PushSysEnter(const SysEnter& e) override;
  void PushSysExit(const SysExit& e) override;
  void PushPageFault(const PageFault& e) override;
  void PushKernelStack(const KernelStack& e) override;
  void PushLostEvents(const LostEvents& e) override;
  void PushOtherEvent(const EventCommon& c, int type_id) override;
  void PushCsdFunctionEntry(const CsdFunctionEntry& e, int type_id) override;

  // Closes every open segment at `end_ts` (the end of the trace window: where the
  // recording stopped, or its last event), an exited thread's at the last event.
  void Finish(int64_t end_ts);
  // Whether a thread of the recorded workload has not exited (so far).
  bool FollowedThreadAlive() const;

  // Where a thread no event names (seen first as an event's task) gets its name: the
  // file's saved cmdlines ("" leaves one unnamed), from its creation on, so that what
  // observers write as they go (a timeline's tracks) has it too. Unset: none; set before
  // the first event, and unset before what it reads goes.
  using SavedComm = std::function<std::string(int32_t tid)>;
  void SetSavedComm(SavedComm saved_comm) { saved_comm_ = std::move(saved_comm); }

  // Live use (msa): emits every thread's state in progress up to `ts` as a segment and
  // starts a new one, so per-interval sums are complete at an interval boundary.
  void CutSegments(int64_t ts);

  // Live use: a thread that exists before the first event, in the state /proc showed at
  // `ts` (the state letter R/S/D/T/t/Z/I, the syscall from /proc/TID/syscall).
  void SeedThread(const AttachSeed& seed, int64_t ts);
  // The trace begins at `ts` (its first record; before it, a flight dump's window start
  // or the time attached threads were read): threads alive then start there. Only the
  // first call counts.
  void BeginAt(int64_t ts);
  // After the last event: a thread the trace never showed was in the state /proc showed
  // at the end (nothing changed it: that would be an event) from `ts` on.
  void SeedUnseenThread(const AttachSeed& seed, int64_t ts);

  const std::deque<Thread>& threads() const { return threads_.threads(); }
  // Increments of followed threads that only the unfiltered run-time buffer had.
  uint64_t unfiltered_increments_used() const { return unfiltered_increments_used_; }
  uint64_t unfiltered_migrations_used() const { return unfiltered_migrations_used_; }
  // The wakelist flushes seen (NoteWakelistFlush), and the enqueues dated at their event
  // that one of them bounded.
  uint64_t wakelist_flushes() const { return wakelist_flushes_; }
  uint64_t enqueues_after_flush() const { return enqueues_after_flush_; }
  // Threads the file did not name as the kernel's, taken for kernel threads
  // (TakenForKernelThread).
  uint64_t inferred_kernel_threads() const { return inferred_kernel_threads_; }
  // Every increment was in the trace up to here (no loss turned the steal rule off).
  bool increments_complete() const { return increments_complete_; }
  const AnomalyCounters& anomalies() const { return anomalies_; }
  int64_t first_ts() const { return first_ts_; }
  bool events_lost() const { return events_lost_; }
  int64_t last_ts() const { return last_ts_; }

 private:
  // Per-CPU context.
  struct Cpu {
    bool current_known = false;
    Thread* current = nullptr;  // null: idle (or unknown while !current_known)
    IrqNesting irqs;
    NeedResched resched;
    LastEvent last_event = LastEvent::kOther;
    int64_t last_ts = INT64_MIN;  // of its latest record (INT64_MIN: none yet)
    // The runqueue clock as the kernel last updated it here (a wakeup queueing a task on
    // this CPU, the tick, a switch), and whether a wakeup that found need-resched set
    // asked the next __schedule() to reuse it (rq_clock_skip_update()): then the kernel
    // switches at that instant, not when the trace shows the switch.
    int64_t rq_clock_ts = -1;
    bool clock_skip = false;
    // The task running here when the skip was asked for (0: idle; -1: not known): a
    // switch out of another one shows a switch in between, untraced, which took the skip.
    int32_t clock_skip_pid = -1;
    int64_t accounted_ts = -1;          // the clock of the latest increment of the current task
    const Thread* accounted = nullptr;  // that task
    // A wakeup from another CPU queued a task here; whether it found need-resched set
    // shows in this CPU's next events' flags.
    bool clock_skip_unconfirmed = false;
    // A sched_waking here, in a context the pid filter leaves out, whose sched_wakeup
    // has not come yet: its enqueue (clock read, the running task there accounted, the
    // increment filtered out) may land on `waking_target` (the CPU the wakee was on, as
    // sched_waking names it) before the trace shows it.
    int64_t filtered_waking_ts = -1;
    int32_t filtered_waking_target = -1;
    // The latest switch here when it put its task to sleep (S or D): a kernel_stack
    // record right after it is that sleep's call chain.
    Thread* sleep_switch_prev = nullptr;
    int64_t sleep_switch_ts = 0;
    // The latest wakelist flush here (the unfiltered run-time buffer's): the enqueues it
    // did read the runqueue clock right after it.
    int64_t wakelist_flush_ts = -1;
    // Events were lost here after this time, and no record has come since (-1: none);
    // last_ts is then INT64_MAX, and this the time of the record before the gap.
    int64_t lost_gap_from = -1;
    int64_t last_ts_before_gap = INT64_MIN;
    // The gaps here that have closed, in time order: [from, to).
    std::vector<std::pair<int64_t, int64_t>> lost_gaps;
    // The latest outermost interrupts here that ended (NMIs too), oldest first: a task
    // switched in at the kernel's instant, before the trace shows its switch, may have
    // run some of one (the rest of the tick that preempted the previous task). Eight
    // cover what comes between the two: an interrupt, its softirqs, an NMI.
    struct ClosedInterrupt {
      int64_t start = 0;
      int64_t end = 0;
      Microstate state = Microstate::kIrq;
    };
    LastN<ClosedInterrupt, 8> closed_interrupts;
    // The latest batch of moves of queued tasks done here (NoteMoveOfQueued).
    struct MoveBatch {
      int32_t orig_cpu = -1;
      int32_t dest_cpu = -1;
      int64_t first_ts = -1;
      int64_t last_ts = -1;
      bool unfiltered = false;      // its records are the unfiltered buffer's
      std::vector<Thread*> queued;  // the followed tasks it moved while they waited
    } move_batch;
    int64_t unfiltered_last_ts = INT64_MIN;  // of its latest record in the unfiltered buffer
  };
  struct PendingSwitch {
    SwitchEvent event;
    bool resolved = false;
  };

  // Common per-event work: time bookkeeping, need-resched flag, and making sure the
  // event's task is known to be the one on this CPU.
  Cpu& Enter(const EventCommon& c, bool note_flags = true);
  void FirstOnCpu(const EventCommon& c);  // Enter's rare part: first event, new CPU
  // The thread `tid` when it is the CPU's current one (the usual case for a task's own
  // event), else by lookup; `comm` names it if it is new. OwnThread is for the task that
  // wrote the event (common_pid, a switch's prev): an exiting leader's last events may
  // carry the tid of the thread that took its own in an exec (EventTask).
  Thread* CurrentNamed(const Cpu& cpu, int32_t tid) const;
  Thread& IncrementThread(const Cpu& cpu, int32_t tid, std::string_view comm = {});
  Thread& OwnThread(const Cpu& cpu, int32_t tid, std::string_view comm = {});
  bool RunsHere(const Cpu& cpu, int32_t cpu_id, const Thread& t) const;
  void NoteIdleEvent(Cpu& cpu, const EventCommon& c);
  void NoteEventTask(Cpu& cpu, const EventCommon& c);
  void NoteFlags(Cpu& cpu, uint8_t flags, int32_t pid);
  void Flag(Anomaly a, Thread* t, uint64_t n = 1);
  Thread& Lookup(int32_t tid, std::string_view comm);
  // A non-leader's exec exchanges its tid with its leader's (StateMachine::EventTask).
  Thread* TakingLeaderTid(const Cpu& cpu, int32_t tid, Thread* leader);
  Thread* LeaderUnderExecingTid(const Cpu& cpu, int32_t tid);
  Thread* ExecWaiterWokenBy(int32_t leader_tid, int32_t cpu_id) const;
  Thread* IncrementSubjectExchanging(int32_t pid);
  void QueuedOnUntracedCpu(Thread& t, int64_t ts, bool woken);
  void ExchangeTids(Thread& execing, int32_t leader_tid, Thread* leader);
  Thread& EventTask(const Cpu& cpu, int32_t tid, std::string_view comm = {});
  Thread& NewThread(int32_t tid, std::string_view comm, int64_t ts, bool in_trace);
  void MarkOnCpu(Cpu& cpu, int32_t cpu_id, Thread* t, int64_t ts);
  void MarkOnCpuChanged(Cpu& cpu, int32_t cpu_id, Thread* t, int64_t ts);
  void NoteEnqueued(Thread& wakee, int64_t enqueued, const EnqueueDating& dating = {});
  // `t` moved between CPUs, as `e` shows (from the trace or the unfiltered buffer).
  void Migrate(Thread& t, const SchedMigrateTask& e);
  // A move recorded on `cpu` whose record before it there (in either buffer) was at
  // `prev_ts` (LastRecordTs); `queued`: the moved thread, when it was waiting for a CPU.
  void NoteMoveOfQueued(Cpu& cpu, const SchedMigrateTask& e, int64_t prev_ts, bool unfiltered,
                        Thread* queued);
  // Notes an unfiltered buffer's record on its CPU; that CPU (null when no record of the
  // trace named it yet).
  Cpu* EnterUnfiltered(const EventCommon& c);
  // When the latest record of CPU `cpu_id`, in either buffer, was (INT64_MIN: none).
  int64_t LastRecordTs(int32_t cpu_id) const;
  Thread* UnfilteredSubject(int32_t context, int32_t pid);
  void NoteUnfollowedRun(const SchedStatRuntime& e);
  void NoteUnfollowedCurrent(int32_t cpu_id, int32_t pid, int64_t ts);
  void NoteWakelistFlush(const CsdFunctionEntry& e);
  int64_t EnqueueClock(int32_t target_cpu, const Thread& wakee, int64_t ts) const;
  bool ReplaceUntracedCurrent(Cpu& cpu, int32_t cpu_id, int64_t ts);
  Microstate RunningState(const Thread& t, const Cpu& cpu) const;
  void Transition(Thread& t, Microstate next, AbstractState abstract, int64_t ts);
  // Lost events on a CPU: its threads are unknown from the gap's start (OpenLostGap) to
  // their next event or the CPU's next record (CloseLostGap, from Enter).
  void OpenLostGap(Thread& t, int32_t cpu_id, int64_t ts);
  void CloseLostGap(Cpu& cpu, int32_t cpu_id, int64_t ts);
  // A record earlier than the CPU's last: its clock went backwards, or the gap closes.
  void EarlierThanLast(Cpu& cpu, const EventCommon& c);
  // In a gap OpenLostGap began, with nothing shown of it since.
  static bool InLostGapUntouched(const Thread& t);
  void LeaveIdleCpu(int32_t cpu_id, int64_t ts);
  void ForgetWaitInLostGap(Thread& t);
  bool ForgetSleepAcrossLostGap(Thread& t, int64_t ts);
  void PickedUpByIdleCpu(Thread& t, int32_t from_cpu, int64_t ts);
  int64_t FirstLossSince(int64_t from) const;
  static int64_t StretchBegan(const Thread& t);
  bool QueuedInLostGap(const Thread& t) const;
  void MakeOpenStretchUnknown(Thread& t);
  void RefreshRunning(Cpu& cpu, int64_t ts);
  void EmitSegment(Thread& t, Microstate s, AbstractState a, int64_t start, int64_t end);
  void EmitSegmentNow(Thread& t, Microstate s, AbstractState a, int32_t cpu, int64_t start,
                      int64_t end);
  void EmitUnresolvedSegment(Thread& t, Microstate s, AbstractState a, int32_t cpu, int64_t start,
                             int64_t end);
  // A segment whose microstate is final: into the thread's times and to the observers.
  void Deliver(Thread& t, Microstate s, int32_t cpu, int64_t start, int64_t end);
  bool EmitSwitch(Thread* prev, const SwitchEvent& e);
  void SetCurrent(Cpu& cpu, int32_t cpu_id, Thread* t, bool known, int64_t ts,
                  const SwitchEvent* sw = nullptr, bool cause_pending = false);
  void Resolve(Thread& t, int64_t syscall_or_none);
  // No answer will come (the trace ended, or too much waits): resolved as a kernel thread
  // when TakenForKernelThread (then true), else as unknown.
  bool ResolveUnanswered(Thread& t);
  bool TakenForKernelThread(const Thread& t) const;
  // The kernel switch instant (see state_machine.cc).
  void NoteRqClock(Cpu& cpu, int64_t ts);
  void RequestClockSkip(Cpu& cpu, int32_t current_pid);
  bool ClockStoodStillAtSwitch(const Thread& next, const Thread& prev, int64_t measured) const;
  void NoteRemoteReschedule(Cpu& cpu, int64_t ts, int32_t pid);
  void NoteFilteredRemoteUpdate(Cpu& target, int32_t target_id, int64_t waking_ts,
                                int64_t wakeup_ts, bool is_waking);
  void AssumeIncrement(Thread& t, int64_t clock_ts);
  void NoteEnqueueInFlight(Thread& prev, int32_t cpu_id, int64_t ts);
  int64_t KernelSwitchTs(const Cpu& cpu, const Thread* prev, bool voluntary, int64_t ts,
                         int32_t prev_pid) const;
  int64_t KernelSwitchTs(const Cpu& cpu, const Thread* prev, bool voluntary, int64_t ts,
                         int32_t prev_pid, const Thread* accounted_prev) const;
  void ReleaseHeld(Thread& t, int64_t before);
  void StartRun(Thread& t, Microstate s, AbstractState a, int64_t in_ts, int64_t ts);
  void RunInterruptsSince(Thread& t, const Cpu& cpu, int64_t ts);
  void SettleIn(Thread& t, int64_t start);
  void RelabelHeld(Thread& t, int64_t from, int64_t to, const Thread::Segment& as);
  void ReleaseHeldRelabelled(Thread& t, int64_t from, int64_t to, const Thread::Segment& as);
  bool AccountIncrement(Thread& t, const SchedStatRuntime& e);
  static int64_t IncrementClock(const Cpu& cpu, const SchedStatRuntime& e);
  static bool FreshIncrementClock(const Thread& t, const SchedStatRuntime& e);
  void NoteWakeupIncrement(Thread& waker, const Thread& wakee);
  void NoteIncrementShortfall(Thread& t, const SchedStatRuntime& e, int64_t previous_end,
                              int64_t clock_ts);
  struct FirstIncrement {
    int64_t start;           // the kernel's switch-in
    int64_t stood_still_to;  // the clock stood still from `start` to here (steal)
  };
  int64_t UpdateFrom(const Thread& t, const std::optional<FirstIncrement>& first,
                     int64_t measured) const;
  FirstIncrement FirstIncrementStart(const Thread& t, const SchedStatRuntime& e,
                                     int64_t measured) const;
  void NoteStolen(Thread& t, int64_t from, int64_t to);
  void FlushHeld(Thread& t);
  // A pending gap in `t`'s increments (Thread::gap_from) is settled: the part of it up to
  // where the run ended, `end`, is steal (INT64_MAX: all of it).
  void ConfirmGap(Thread& t, int64_t end);
  void NoteExitRecord(Thread& t, int64_t ts);
  bool WakesExitListener(const Thread& dying, int32_t wakee_tid) const;
  void NoteSignalExitCandidate(Thread& t, int64_t ts);
  void BeginSignalExit(Thread& t, int64_t ts);
  static void DropEqualExitCandidate(Thread& t);
  static void SettleExitRecord(Thread& t, int64_t update, int64_t before, int64_t event_ts);
  static int64_t FinalUpTo(const Thread& t, int64_t to);
  static bool ExitRecordUnsettled(const Thread& t);
  static int64_t AccountedSoFar(const Thread& t);
  static bool AccountedAtUnsettledSwitchIn(const Thread& t);
  void RewindHeld(Thread& t, int64_t kernel_ts, int64_t ts, Thread* settled_by = nullptr);
  void SettleOut(Thread& t, int64_t end);
  void NoteUntracedSwitchOut(Thread& t, int64_t ts);
  void NoteUntracedRun(Thread& t);
  void EmitUntracedSwitchOut(Thread& t, bool voluntary);
  void ResetClock(Cpu& cpu);
  void EndLifetime(Thread& t, int64_t ts);
  // A child its parent created (sched_process_fork) and nothing has begun the states of:
  // its observed life begins at its first wakeup (wake_up_new_task), not at its fork.
  static bool LifeNotBegun(const Thread& t) {
    return t.awaits_first_wakeup && t.since == t.first_ts;
  }
  static void BeginLifeAt(Thread& t, int64_t ts) { t.first_ts = t.since = ts; }
  void ReapZombie(int64_t pid, int64_t ts);
  // A thread outside a pid-filtered recording: the trace has its switches only to and
  // from a followed task, so it runs unseen.
  bool RunsUnseen(const Thread& t) const { return !t.tracked && !follow_all_; }
  void CloseOpenSyscall(Thread& t, int64_t ts);
  void PushIrqFrame(Cpu& cpu, IrqKind kind, const std::string* name, int64_t ts);
  void PopIrqFrame(Cpu& cpu, int32_t cpu_id, IrqKind kind, int64_t ts);

  const SyscallTable& syscalls_;
  CauseAttribution causes_;
  TraceCapabilities caps_;
  const bool follow_all_;  // -a or a foreign file: every thread is the report's
  // The recorder listed the kernel's threads (cstool's recordings): none is guessed.
  const bool kernel_threads_named_;
  const std::vector<Observer*>& On(Hook h) const { return hooks_[static_cast<size_t>(h)]; }
  std::array<std::vector<Observer*>, static_cast<size_t>(Hook::kCount)> hooks_;
  ThreadTracker threads_;
  uint64_t unfiltered_increments_used_ = 0;
  uint64_t unfiltered_migrations_used_ = 0;
  uint64_t wakelist_flushes_ = 0;
  uint64_t enqueues_after_flush_ = 0;
  uint64_t inferred_kernel_threads_ = 0;
  // caps_.all_increments until either buffer shows lost events.
  bool increments_complete_;
  std::vector<Cpu> cpus_;
  // Rewriting a thread's held segments swaps them with this list and back, so that
  // neither side allocates once both have grown (a fresh list per rewrite cost two
  // allocations per context switch). ScratchSegments lends it out, or a fresh one when
  // it is already lent.
  Thread::SegmentList held_scratch_;
  class ScratchSegments {
   public:
    explicit ScratchSegments(Thread::SegmentList& shared)
        : shared_(shared.empty() ? &shared : nullptr) {}
    ~ScratchSegments() {
      if (shared_ != nullptr) shared_->clear();
    }
    ScratchSegments(const ScratchSegments&) = delete;
    ScratchSegments& operator=(const ScratchSegments&) = delete;
    Thread::SegmentList& get() { return shared_ != nullptr ? *shared_ : own_; }

   private:
    Thread::SegmentList* shared_;
    Thread::SegmentList own_;
  };
  std::vector<PendingSwitch> pending_switches_;
  // Leader tids an exec'ing thread took before its sched_process_exec showed it.
  struct TidTaken {
    int32_t leader_tid;
    int32_t old_tid;
    Thread* leader;  // null when the trace had not shown it
  };
  std::vector<TidTaken> leader_tids_taken_;
  // Threads in an exec syscall that their process's exiting leader woke: de_thread()
  // sleeps until the leader is a zombie, and the leader's exit_notify() wakes it. When
  // its switch-in goes untraced, its first event already carries the leader's tid.
  struct WokenExecWaiter {
    int32_t leader_tid;
    Thread* execing;
  };
  std::vector<WokenExecWaiter> woken_exec_waiters_;
  IrqNames irq_names_;
  AnomalyCounters anomalies_;
  AnomalyLog anomaly_log_;
  SavedComm saved_comm_;
  int64_t cur_ts_ = 0;
  int32_t cur_cpu_ = 0;
  int64_t first_ts_ = -1;
  bool events_lost_ = false;                     // the trace so far lost events (PushLostEvents)
  std::vector<LostEvents> losses_before_start_;  // reported before any record
  int open_lost_gaps_ = 0;                       // CPUs with Cpu::lost_gap_from set
  int64_t last_ts_ = 0;
  bool finished_ = false;
  // A sched_wakeup_new was seen: the trace records wake_up_new_task (Finish).
  bool wakeup_new_seen_ = false;
};

}  // namespace cstool
