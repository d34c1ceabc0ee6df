// Analyses plug into the state machine through this one callback interface; every
// hook is a no-op by default, so adding an analysis touches no core file (register
// it in analysis/registry.cc).
#pragma once

#include <cstdint>
#include <string_view>

#include "model/enqueue_dating.h"
#include "model/events.h"
#include "model/microstate.h"
#include "model/switch_cause.h"
#include "sched/thread.h"

namespace cstool {

// Between the runqueue clock read that an increment (sched_stat_runtime) is computed
// with and the event itself: the enqueue and preemption check of a wakeup, or the start
// of __schedule(); measured at 0.2-1.5 us on the reference VM. A larger gap between the
// increments' sum and an increment's time means increments are missing.
constexpr int64_t kIncrementLagNs = 2000;

struct SwitchEvent {
  int64_t ts = 0;
  int32_t cpu = 0;
  const Thread* prev = nullptr;  // null for the idle task or an untracked/unknown task
  const Thread* next = nullptr;
  bool voluntary = false;
  SwitchCause cause;
  PreemptedAt preempted_at = PreemptedAt::kOther;  // meaningful when !voluntary
};

struct WakeupEvent {
  int64_t ts = 0;
  int32_t cpu = 0;         // where the wakeup ran
  int32_t target_cpu = 0;  // where the wakee will run
  // Null when woken from interrupt context or by idle. A sched_wakeup that completes a
  // wakeup begun while the wakee still ran (its wakelist flush, in an interrupt) is the
  // sched_waking's task's.
  const Thread* waker = nullptr;
  const Thread* wakee = nullptr;
  bool from_irq = false;
  bool new_task = false;  // sched_wakeup_new
  // When the waker did the wakeup: `ts`, or that earlier sched_waking's time (before the
  // wakee's sleep began: the waker's part was done by then).
  int64_t waker_ts = 0;
  // The interrupt the wakeup ran in when `from_irq` ("irq:24 virtio0", "softirq:TIMER"),
  // or "irq"/"softirq"/"nmi" when the trace did not show its entry; empty otherwise.
  std::string_view irq_source;
  // Whether the CPU's running task was known when the wakeup ran: a null `waker` then
  // means the idle task (or an interrupt), else the waker is unknown (lost events there,
  // or the CPU's first events).
  bool waker_known = false;
  // The wakee's state the wakeup ended and since when (sleep, or unknown when the trace
  // began with it asleep); its blocked time is [blocked_since, ts).
  Microstate blocked_state = Microstate::kUnknown;
  int64_t blocked_since = 0;
};

// What runs on `cpu` from `ts` on, as the state machine believes it: `current`, or
// nothing when it is idle (`known`) or unknown (!known: before the CPU's first event,
// after lost events there). Emitted exactly when that belief changes: at a recorded
// sched_switch (`sw` points at it), when a task's own events show it running without
// a recorded switch-in (the kernel's missing switch from idle, a switch between
// unfollowed tasks left out by a pid filter), and after lost events. Always in time
// order and never delayed: `sw->cause` may still be a placeholder when
// `cause_pending` (the switch-out's OnSwitch then comes later, from Resolve).
// While `current` is set here, it is in an on-CPU microstate (user, sys, irq, softirq,
// or unknown-while-running) unless its own switch-out was missed.
struct CpuCurrentEvent {
  int64_t ts = 0;
  int32_t cpu = 0;
  const Thread* current = nullptr;
  bool known = false;
  const SwitchEvent* sw = nullptr;  // the switch that made the change, when one did
  bool cause_pending = false;
};

enum class IrqKind : uint8_t { kHardirq, kVector, kSoftirq, kNmi };

// A completed interrupt interval on `cpu`; `interrupted` is the thread that was on the
// CPU (null for idle or an untracked task).
struct IrqInterval {
  IrqKind kind = IrqKind::kHardirq;
  std::string_view name;  // "irq:24 virtio0", "vector:local_timer", "softirq:TIMER", "nmi"
  int32_t cpu = 0;
  int64_t start = 0;
  int64_t end = 0;
  const Thread* interrupted = nullptr;
};

// The kernel call chain of a sleeping switch-out (record --stacks): `thread` went to
// sleep (S or D) at `switch_ts` on `cpu`; frames innermost first, unsymbolized.
struct KernelStackEvent {
  const Thread* thread = nullptr;
  int64_t switch_ts = 0;
  int32_t cpu = 0;
  const KernelStack* stack = nullptr;
};

struct SyscallInterval {
  const Thread* thread = nullptr;
  int64_t nr = -1;
  int64_t start = 0;  // sys_enter, or the thread's first sight when the enter was not seen
  int64_t end = 0;
  bool enter_seen = true;
  bool completed = true;  // false when the trace ended inside the syscall
};

// The hooks of Observer, as bits for Observer::Hooks().
enum class Hook : uint8_t {
  kThreadNew,
  kStateSegment,
  kSwitch,
  kWakeup,
  kEnqueued,
  kWokenWhilePreempted,
  kIrq,
  kSyscall,
  kSyscallBlocked,
  kMigrate,
  kBetweenRunqueues,
  kExit,
  kLostEvents,
  kTraceEnd,
  kCpuCurrent,
  kRuntimeAccounted,
  kStolen,
  kKernelStack,
  kInterruptSegment,
  kUnfollowedRun,
  kCount
};
constexpr uint32_t HookBit(Hook h) { return 1u << static_cast<unsigned>(h); }
inline constexpr uint32_t kAllHooks = (1u << static_cast<unsigned>(Hook::kCount)) - 1;

class Observer {
 public:
  virtual ~Observer() = default;
  // The hooks this observer overrides; the state machine calls only those (the others
  // are no-ops anyway). The default, all, is always correct.
  virtual uint32_t Hooks() const { return kAllHooks; }
  virtual void OnThreadNew(const Thread&) {}
  // `thread` spent [start, end) in `state`, on `cpu` for the states on a CPU (for the
  // others, the CPU it was on or queued at then; -1: none known). Emitted for every
  // segment, in time order per thread; the segments of one thread tile its observed
  // lifetime exactly. A segment may come after the thread moved on (the switch placement
  // holds them up to the kernel's next accounting): `cpu` is the segment's, not the
  // thread's current Thread::cpu.
  virtual void OnStateSegment(const Thread& /*thread*/, Microstate /*state*/, int32_t /*cpu*/,
                              int64_t /*start*/, int64_t /*end*/) {}
  // The segments in the irq and softirq states only (each also goes to OnStateSegment):
  // for an observer that needs just those, which costs a plain report nothing while the
  // others cost a call per segment.
  virtual void OnInterruptSegment(const Thread& /*thread*/, Microstate /*state*/, int32_t /*cpu*/,
                                  int64_t /*start*/, int64_t /*end*/) {}
  virtual void OnSwitch(const SwitchEvent&) {}
  virtual void OnWakeup(const WakeupEvent&) {}
  // sched_wakeup of a thread that sched_waking made runnable at `runnable_since`: the
  // kernel has now queued it, and its own run delay (schedstat) starts here, at `ts` as
  // well as `dating` tells.
  virtual void OnEnqueued(const Thread& /*thread*/, int64_t /*runnable_since*/, int64_t /*ts*/,
                          const EnqueueDating& /*dating*/) {}
  // sched_waking of a thread preempted at `preempted_since` and still queued: a wakeup
  // passes only a task in a sleep state, so the preemption caught it on its way to sleep,
  // after it set that state and before schedule(). It is on its runqueue and waits for a
  // CPU all the same, but the kernel's run delay (schedstat) counts a preempted task only
  // if it was runnable at the switch-out, and this one from a move to another runqueue on.
  virtual void OnWokenWhilePreempted(const Thread& /*thread*/, int64_t /*preempted_since*/,
                                     int64_t /*ts*/) {}
  virtual void OnCpuCurrent(const CpuCurrentEvent&) {}
  virtual void OnIrq(const IrqInterval&) {}
  virtual void OnSyscall(const SyscallInterval&) {}
  // A voluntary switch inside syscall `nr`.
  virtual void OnSyscallBlocked(const Thread&, int64_t /*nr*/) {}
  virtual void OnMigrate(const Thread&, int32_t /*from_cpu*/, int32_t /*to_cpu*/, int64_t /*ts*/) {}
  // `thread`, waiting for a CPU, was moved in a load balancer's batch and was off every
  // runqueue at least from `from` to `to` (StateMachine::NoteMoveOfQueued), where the
  // kernel's run delay does not grow. Called again with the same `from` and a later `to`
  // while the batch goes on; after that move's OnMigrate.
  virtual void OnBetweenRunqueues(const Thread& /*thread*/, int64_t /*from*/, int64_t /*to*/) {}
  virtual void OnExit(const Thread&, int64_t /*ts*/) {}
  virtual void OnLostEvents(int32_t /*cpu*/, int64_t /*ts*/, int64_t /*count*/) {}
  virtual void OnTraceEnd(int64_t /*ts*/) {}
  // The kernel added `thread`'s run time from `from` to `to` to its exec runtime (one
  // sched_stat_runtime increment, computed with the runqueue clock): between two such
  // updates, what /proc shows of it stands still. Before the segments up to `to` arrive.
  // `to` INT64_MAX: no update after `from` to the trace's end (running at the end).
  virtual void OnRuntimeAccounted(const Thread& /*thread*/, int64_t /*from*/, int64_t /*to*/) {}
  // While `thread` ran, the kernel's run-time clock stood still from `from` to `to`: the
  // host ran something else on the virtual CPU (steal), which exec runtime leaves out.
  // Known only when every increment is in the trace (TraceCapabilities::all_increments).
  virtual void OnStolen(const Thread& /*thread*/, int64_t /*from*/, int64_t /*to*/) {}
  // A task the recording does not follow was the current one on `cpu` from `from` to
  // `to`, as its own run-time increment in the unfiltered buffer shows (done in its
  // context: the tick's, or its switch-out's): with a pid filter, the sign of what ran
  // between the switches the trace does not record. `from` is the increment's time less
  // its run time: where the update before read the clock, up to kIncrementLagNs off. An
  // increment at a switch's time comes after that switch's OnCpuCurrent.
  virtual void OnUnfollowedRun(const Thread& /*thread*/, int32_t /*cpu*/, int64_t /*from*/,
                               int64_t /*to*/) {}
  // Right after the sleeping switch-out it belongs to (before the thread runs again);
  // that switch's OnSwitch may come before or, when its cause was pending, after it.
  virtual void OnKernelStack(const KernelStackEvent&) {}
};

}  // namespace cstool
