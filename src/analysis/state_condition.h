// `record --trigger COND`: a thread of the target spending longer than a threshold in
// a group of microstates without a break, e.g. "sleep>100ms" (any sleep),
// "wait_cpu>5ms" (runnable, waiting for a CPU), "sleep:futex>50ms" (asleep inside that
// syscall) or any microstate key ("sleep_uninterruptible>20ms"). The observer checks a
// stretch when it ends, so a dump taken then holds the whole episode.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "model/syscall_table.h"
#include "sched/observer.h"

namespace cstool {

struct StateCondition {
  std::string text;          // as given
  uint32_t states = 0;       // bit (1 << Microstate) per microstate that counts
  std::string syscall;       // "sleep:SYSCALL": only while blocked in this syscall
  int64_t threshold_ns = 0;  // the stretch must last longer than this (">=": one less)
};

// Parses COND; throws cstool::Error (exit 2) naming what is wrong.
StateCondition ParseStateCondition(std::string_view text, const SyscallTable& syscalls);

// Whether the scheduler's events alone decide the condition: any sleep, waiting for a
// CPU (after a wakeup or preempted), stopped and zombie are told apart by
// sched_switch's prev_state and the wakeups; a syscall, user/sys time, interrupts and
// the kinds of sleep (futex, poll, paging) need the syscall, fault and interrupt events.
bool SchedulerEventsSuffice(const StateCondition& condition);

class StateConditionObserver final : public Observer {
 public:
  StateConditionObserver(StateCondition condition, const SyscallTable& syscalls)
      : condition_(std::move(condition)), syscalls_(syscalls) {}
  const StateCondition& condition() const { return condition_; }
  uint32_t Hooks() const override { return HookBit(Hook::kStateSegment); }
  void OnStateSegment(const Thread& thread, Microstate state, int32_t cpu, int64_t start,
                      int64_t end) override;

  // `thread`'s state in progress, with every event up to `now` seen: a stretch that
  // lasts longer than the threshold and than `at_least_ns` already holds, without waiting
  // for its end (a thread stuck in it would never end it). Each stretch holds once, here
  // or at its end.
  void CheckOpen(const Thread& thread, int64_t now, int64_t at_least_ns = 0);

  // The first stretch that held since the last call, described ("tid 12 (worker): sleep
  // 200.1 ms from ... to ..."), with the time it ended (or was seen to hold).
  struct Hit {
    int64_t ts = 0;
    std::string what;
  };
  std::optional<Hit> Take();

 private:
  struct Run {
    int64_t start = 0;
    int64_t end = 0;
  };
  // Whether `thread` in `state` is what the condition is about.
  bool Counts(const Thread& thread, Microstate state) const;
  // Whether `run` is the stretch the condition held for already (forgetting an earlier
  // stretch's mark).
  bool Reported(const Thread& thread, const Run& run);
  StateCondition condition_;
  const SyscallTable& syscalls_;
  std::unordered_map<uint32_t, Run> runs_;  // by Thread::id: the stretch in progress
  // By Thread::id: an instant of the last stretch the condition held for. (A mark, not a
  // flag on the run: segments of that stretch from before where CheckOpen saw it may come
  // later, after a break in the runs.)
  std::unordered_map<uint32_t, int64_t> reported_;
  std::optional<Hit> hit_;
};

}  // namespace cstool
