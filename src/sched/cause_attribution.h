// Why a thread left its CPU: the switch cause of every sched_switch and the microstate
// a sleeping thread sleeps in. A voluntary switch's cause is the syscall (or fault,
// stop, exit) the thread was in; a preemption's is whatever last asked for a reschedule
// on that CPU before an event first showed need-resched set (a wakeup, the tick, a
// migration), and where it was preempted is told by the event just before the switch.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/events.h"
#include "model/microstate.h"
#include "model/switch_cause.h"
#include "model/syscall_table.h"
#include "sched/thread.h"

namespace cstool {

// The kind of the last event on a CPU before a switch (where a preemption happened).
enum class LastEvent : uint8_t { kOther, kSysExit, kIrqExit };

// Per CPU: the latest thing that may have asked for a reschedule here, and what it was
// when an event first showed the flag set (the first such event tells what set it).
struct NeedResched {
  CauseKind candidate = CauseKind::kPreemptUnknown;
  bool seen = false;
  int64_t seen_ts = -1;  // the event that first showed it
  CauseKind origin = CauseKind::kPreemptUnknown;

  // Returns whether this event is the first to show need-resched set.
  bool Note(uint8_t flags, int64_t ts) {
    if (!(flags & (kFlagNeedResched | kFlagNeedReschedLazy)) || seen) return false;
    seen = true;
    seen_ts = ts;
    origin = candidate;
    return true;
  }
  CauseKind Cause() const { return seen ? origin : candidate; }
  void Reset() {
    seen = false;
    candidate = CauseKind::kPreemptUnknown;
  }
};

class CauseAttribution {
 public:
  // `fault_events`: the trace records page faults (exceptions:page_fault_*), so a thread
  // with none pending is not in one.
  CauseAttribution(const SyscallTable& syscalls, bool fault_events)
      : syscalls_(syscalls), fault_events_(fault_events) {}

  // The cause of a switch-out in `state_bits` (prev_state) by a thread that was not
  // preempted.
  SwitchCause Voluntary(uint16_t state_bits, const Thread& t) const;
  // The cause of a preemption of `prev` in favour of a task named `next_comm`.
  SwitchCause Involuntary(const Thread& prev, std::string_view next_comm,
                          const NeedResched& resched) const;
  // Where `prev` was preempted: in the kernel (prev_state "R+"), on its way back from a
  // syscall or an interrupt, or elsewhere.
  static PreemptedAt Where(bool preempted_in_kernel, const Thread& prev, LastEvent last);

  // The microstate of a thread switched out in `state_bits`; `abstract` is set when the
  // exact state waits for the thread's syscall to become known.
  Microstate SleepState(uint16_t state_bits, const Thread& t, AbstractState* abstract) const;
  // The microstate of a stretch labelled `a` once the thread is known to be in syscall
  // `nr` (or none, or never to be known).
  Microstate Resolved(const Thread& t, Microstate s, AbstractState a, int64_t nr) const;

 private:
  const SyscallTable& syscalls_;
  bool fault_events_;
};

inline bool IsInSyscall(int64_t s) { return s >= 0 || s == kInForkReturn; }

}  // namespace cstool
