// Which thread ran on each CPU when, for the per-CPU pictures (timeline CPU tracks,
// the cpu barscope). Built on the state machine's own notion of each CPU's current
// task (Observer::OnCpuCurrent), so a thread's runs cover exactly the time its own
// microstates show it on a CPU: a run starts when the thread becomes a CPU's current
// task (a recorded switch-in, or a switch-in inferred from its own events: the
// kernel's missing switch from idle, switches between unfollowed tasks left out by a
// pid filter) and ends when something else does, at lost events on that CPU, or at
// the end of the trace (or of the thread's observed life). Time when a CPU's current
// task is unknown (before its first event, after lost events) belongs to no run.
//
// A run ended by the thread's own recorded sched_switch carries that switch's
// voluntary flag, cause and preemption point. A sleep whose cause waits for the
// thread's syscall to be known (StateMachine::Resolve) is held back until OnSwitch
// delivers the resolved cause, so sinks may see runs out of time order.
// Memory: one entry per CPU and per thread, plus the runs waiting for a cause.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "sched/observer.h"
#include "sched/thread.h"

namespace cstool {

struct CpuRun {
  int32_t cpu = 0;
  const Thread* thread = nullptr;
  int64_t start = 0;
  int64_t end = 0;
  bool switched_out = false;  // ended by the thread's own sched_switch; then:
  bool voluntary = false;
  SwitchCause cause;
  PreemptedAt preempted_at = PreemptedAt::kOther;  // meaningful when !voluntary
};

class CpuOccupancy {
 public:
  using Sink = std::function<void(const CpuRun&)>;
  explicit CpuOccupancy(Sink sink) : sink_(std::move(sink)) {}

  void OnCpuCurrent(const CpuCurrentEvent& e);
  // Delivers the resolved cause of a run held back by OnCpuCurrent.
  void OnSwitch(const SwitchEvent& e);
  void OnTraceEnd(int64_t ts);

 private:
  struct Open {
    const Thread* thread = nullptr;  // null: no run open on this CPU
    int64_t start = 0;
  };
  Open& CpuAt(int32_t cpu);
  void Close(int32_t cpu, int64_t ts, const CpuCurrentEvent* e);

  Sink sink_;
  std::vector<Open> cpus_;
  std::vector<int32_t> open_cpu_;  // by Thread::id: the CPU its run is open on, or -1
  struct Waiting {
    CpuRun run;
    int64_t switch_ts = 0;
  };
  std::vector<Waiting> waiting_;  // runs whose switch-out cause is pending
};

}  // namespace cstool
