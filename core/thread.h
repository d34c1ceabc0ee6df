// One thread as the state machine knows it. Plugins see it read-only; its address is
// stable for the whole analysis (ThreadTable keeps threads in a deque).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/microstate.h"

namespace cstool {

// Thread::syscall values besides a syscall number.
inline constexpr int64_t kNotInSyscall = -1;
inline constexpr int64_t kSyscallUnknown = -2;  // present since before the trace: not known yet
inline constexpr int64_t kInForkReturn = -3;    // new task: in the kernel until its first sys_exit
inline constexpr int64_t kSyscallAbandoned = -4;  // stopped waiting to learn it (see Resolve)

// On-CPU and sleep states whose exact microstate depends on whether the thread was in
// a syscall, while that is still unknown (see StateMachine, "pending resolution").
enum class AbstractState : uint8_t { kNone, kRunning, kSleepInterruptible, kSleepUninterruptible };

struct Thread {
  uint32_t id = 0;  // internal id: tid reuse never merges two threads
  int32_t tid = 0;
  int32_t tgid = 0;  // 0 while unknown
  std::string comm;
  bool tracked = false;       // belongs to the recorded workload
  bool lost_touched = false;  // a lost-events gap may have changed this thread's numbers
  bool created_in_trace = false;
  bool exiting = false;        // sched_process_exit seen
  bool freed = false;          // lifetime over: sched_process_free, or the final switch with X
  bool user_thread = false;    // seen in a syscall or a user page fault
  bool fault_pending = false;  // page fault seen since it last blocked or entered a syscall
  int64_t first_ts = 0;        // observed lifetime: [first_ts, end_ts)
  int64_t end_ts = -1;

  // Current microstate, since when, and on which CPU it runs or is queued.
  Microstate state = Microstate::kUnknown;
  AbstractState abstract = AbstractState::kNone;
  int64_t since = 0;
  int32_t cpu = -1;
  bool on_cpu = false;
  // Time in each microstate so far (every segment with its final label), summed by the
  // state machine itself so that the report's totals cost no plugin call per segment.
  MicrostateTimes times{};
  // Made runnable by sched_waking and not yet queued (sched_wakeup not seen yet).
  bool waking_unqueued = false;

  int64_t syscall = kSyscallUnknown;
  int64_t syscall_start = 0;
  bool syscall_enter_seen = false;
  uint32_t last_waker = UINT32_MAX;

  // Pending resolution: while `syscall == kSyscallUnknown`, segments and sleep causes
  // that depend on it wait here and are relabelled once the first syscall event (or an
  // R preemption, which proves user mode) tells where the thread was.
  struct PendingSegment {
    Microstate state;
    AbstractState abstract;
    int64_t start;
    int64_t end;
  };
  std::vector<PendingSegment> pending_segments;
  std::vector<uint32_t> pending_switches;  // indexes into StateMachine's pending switch list
};

}  // namespace cstool
