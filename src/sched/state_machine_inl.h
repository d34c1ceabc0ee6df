// The state machine's per-event helpers, inline in every file of the state machine
// (they run for about every event), and the limits its rules share. Private to
// sched/state_machine*.cc and the files that implement its parts.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sched/state_machine.h"

namespace cstool {

constexpr size_t kMaxPendingSegments = 4096;
// A thread's segments are held from one of the kernel's run-time increments to the next
// (the tick makes one every 4 ms at HZ=250): hackbench's senders write for 3 ms between
// two, 6 000 segments; the exit check needs them all held (the exit record may hold the
// accounting of the increment before). 65 536 hold some 30 ms of back-to-back syscalls.
constexpr size_t kMaxHeldSegments = 65536;
// From a wakeup on another CPU to its reschedule IPI's entry here: an IPI in a VM (exit,
// injection) takes a few microseconds; a last increment older than this was not that
// wakeup's.
constexpr int64_t kIpiLatencyNs = 20000;
// The longest a reschedule IPI is taken as delayed behind need-resched showing.
constexpr int64_t kMaxIpiDelayNs = 200000;
// A wakeup's target CPU comes from the record itself; a damaged file's absurd value must
// not size the per-CPU table (the readers' own limit on CPUs is the same).
constexpr int32_t kMaxCpuId = 1 << 16;

// The first event that shows need-resched set tells what set it: the latest candidate.
// (`pid`: the event's task, the one running on `cpu`.)
[[gnu::always_inline]] inline void StateMachine::NoteFlags(Cpu& cpu, uint8_t flags, int32_t pid) {
  if (cpu.resched.Note(flags, cpu.last_ts) && cpu.clock_skip_unconfirmed &&
      (flags & kFlagNeedResched))
    RequestClockSkip(cpu, pid);
}

// Per event: keep this small and inlined (it runs for every record).
[[gnu::always_inline]] inline StateMachine::Cpu& StateMachine::Enter(const EventCommon& c,
                                                                     bool note_flags) {
  if (first_ts_ < 0 || static_cast<size_t>(c.cpu) >= cpus_.size()) [[unlikely]]
    FirstOnCpu(c);
  Cpu& cpu = cpus_[c.cpu];
  cur_ts_ = c.ts;
  cur_cpu_ = c.cpu;
  // Also how the first record after lost events shows: PushLostEvents set last_ts past
  // any time, so that closing the gap costs the other records nothing.
  if (c.ts < cpu.last_ts) [[unlikely]]
    EarlierThanLast(cpu, c);
  cpu.last_ts = c.ts;
  if (c.ts > last_ts_) last_ts_ = c.ts;
  if (note_flags) NoteFlags(cpu, c.flags, c.pid);
  return cpu;
}

// The CPU's current thread when `tid` names it (the usual case for an event's task):
// exactly what Lookup would return, without the lookup's call and pointer chase.
[[gnu::always_inline]] inline Thread* StateMachine::CurrentNamed(const Cpu& cpu,
                                                                 int32_t tid) const {
  Thread* cur = cpu.current;
  return cur && cur->tid == tid && threads_.Names(*cur) ? cur : nullptr;
}

// The thread `tid` an increment on this CPU is about (it may be another CPU's).
[[gnu::always_inline]] inline Thread& StateMachine::IncrementThread(const Cpu& cpu, int32_t tid,
                                                                    std::string_view comm) {
  if (Thread* cur = CurrentNamed(cpu, tid)) [[likely]]
    return *cur;
  if (Thread* t = IncrementSubjectExchanging(tid)) return *t;
  return Lookup(tid, comm);
}

// The task that wrote an event on this CPU (common_pid, a switch's prev).
[[gnu::always_inline]] inline Thread& StateMachine::OwnThread(const Cpu& cpu, int32_t tid,
                                                              std::string_view comm) {
  if (Thread* cur = CurrentNamed(cpu, tid)) [[likely]]
    return *cur;
  return EventTask(cpu, tid, comm);
}

// Whether `t` is already known to run on this CPU (then MarkOnCpu has nothing to do
// but re-derive its running state, which the syscall handlers do anyway).
[[gnu::always_inline]] inline bool StateMachine::RunsHere(const Cpu& cpu, int32_t cpu_id,
                                                          const Thread& t) const {
  return cpu.current == &t && cpu.current_known && t.on_cpu && t.cpu == cpu_id;
}

// An event's task (common_pid) is running on its CPU, whatever the event: an interrupt's
// is the task it interrupted, an increment's the one whose context did the accounting.
// The kernel (6.18) often records no switch from idle to it: this is where that shows.
[[gnu::always_inline]] inline void StateMachine::NoteEventTask(Cpu& cpu, const EventCommon& c) {
  if (c.pid == 0) [[unlikely]] {
    NoteIdleEvent(cpu, c);
    return;
  }
  const Thread* cur = cpu.current;
  if (cpu.current_known && cur && cur->tid == c.pid && cur->on_cpu) [[likely]]
    return;
  MarkOnCpu(cpu, c.cpu, &EventTask(cpu, c.pid), c.ts);
}

// Runs for about every event: the common case (syscall state known, no observer wants
// segments, as in a plain report) stays inline; the rest is out of line.
[[gnu::always_inline]] inline void StateMachine::EmitSegment(Thread& t, Microstate s,
                                                             AbstractState a, int64_t start,
                                                             int64_t end) {
  if (end <= start) return;
  if (t.held_from >= 0) [[unlikely]] {
    if (t.held_segments.size() < kMaxHeldSegments) {
      t.held_segments.push_back({s, a, t.cpu, start, end});
      return;
    }
    FlushHeld(t);  // a very long run without the kernel's accounting: keep the model
  }
  EmitSegmentNow(t, s, a, t.cpu, start, end);
}

[[gnu::always_inline]] inline void StateMachine::EmitSegmentNow(Thread& t, Microstate s,
                                                                AbstractState a, int32_t cpu,
                                                                int64_t start, int64_t end) {
  if (t.syscall == kSyscallUnknown) [[unlikely]] {
    EmitUnresolvedSegment(t, s, a, cpu, start, end);
    return;
  }
  Deliver(t, s, cpu, start, end);
}

[[gnu::always_inline]] inline void StateMachine::Deliver(Thread& t, Microstate s, int32_t cpu,
                                                         int64_t start, int64_t end) {
  t.times[static_cast<size_t>(s)] += end - start;
  const std::vector<Observer*>& observers = On(Hook::kStateSegment);
  if (!observers.empty()) [[unlikely]]
    for (Observer* p : observers) p->OnStateSegment(t, s, cpu, start, end);
  if (s == Microstate::kIrq || s == Microstate::kSoftirq) [[unlikely]]
    for (Observer* p : On(Hook::kInterruptSegment)) p->OnInterruptSegment(t, s, cpu, start, end);
}

[[gnu::always_inline]] inline void StateMachine::Transition(Thread& t, Microstate next,
                                                            AbstractState abstract, int64_t ts) {
  EmitSegment(t, t.state, t.abstract, t.since, ts);
  t.waking_unqueued = false;
  t.state = next;
  t.abstract = abstract;
  t.since = ts;
}

// `t` (or nothing, with null) runs on the CPU at `ts`, as an event shows. Inline for a
// thread already known to run there (about every call); the rest out of line.
[[gnu::always_inline]] inline void StateMachine::MarkOnCpu(Cpu& cpu, int32_t cpu_id, Thread* t,
                                                           int64_t ts) {
  if (t && RunsHere(cpu, cpu_id, *t)) [[likely]] {
    RefreshRunning(cpu, ts);
    return;
  }
  MarkOnCpuChanged(cpu, cpu_id, t, ts);
}

// Re-derives the running thread's microstate after its syscall or the CPU's interrupt
// nesting changed. Not where the CPU's task is unknown: the one it last showed may run
// on another CPU by now (an interrupt of the idle task here is none of its time).
[[gnu::always_inline]] inline void StateMachine::RefreshRunning(Cpu& cpu, int64_t ts) {
  Thread* t = cpu.current;
  if (!t || !t->on_cpu || !cpu.current_known) return;
  Microstate s = RunningState(*t, cpu);
  AbstractState a = s == Microstate::kUnknown ? AbstractState::kRunning : AbstractState::kNone;
  if (s != t->state || a != t->abstract) Transition(*t, s, a, ts);
}

}  // namespace cstool
