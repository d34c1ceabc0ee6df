// A scripted trace for state-machine tests: each call pushes one event, with the
// same fields the decoder would produce, into a StateMachine wired to the report
// observers.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analysis/kernel_stacks.h"
#include "analysis/registry.h"
#include "analysis/report_model.h"
#include "model/events.h"
#include "model/syscall_table.h"
#include "sched/state_machine.h"

namespace cstool::testing {

// x86_64 syscall numbers used by the scripts.
inline constexpr int64_t kRead = 0;
inline constexpr int64_t kWrite = 1;
inline constexpr int64_t kPoll = 7;
inline constexpr int64_t kWait4 = 61;
inline constexpr int64_t kSchedYield = 24;
inline constexpr int64_t kFutex = 202;
inline constexpr int64_t kClockNanosleep = 230;
inline constexpr int64_t kExitGroup = 231;

inline constexpr uint16_t kR = 0;
inline constexpr uint16_t kS = kStateInterruptible;
inline constexpr uint16_t kD = kStateUninterruptible;

// A trace with the kernel's run-time increments (sched_stat_runtime).
inline TraceCapabilities WithIncrements() {
  TraceCapabilities caps;
  caps.stat_runtime = true;
  return caps;
}

// A pid-filtered recording: these processes and their descendants are followed.
inline TrackingPolicy Following(std::vector<int32_t> pids) {
  TrackingPolicy policy;
  policy.all = false;
  policy.root_pids = std::move(pids);
  return policy;
}

class Sim {
 public:
  explicit Sim(TraceCapabilities caps = {}, TrackingPolicy policy = {})
      : sm_(syscalls_, caps, std::move(policy)) {
    observers_ = MakeReportObservers(model_);
    for (auto& p : observers_) sm_.AddObserver(p.get());
  }

  static EventCommon C(int64_t ts, int cpu, int pid, uint8_t flags = 0) {
    return {ts, cpu, pid, flags, 0};
  }

  void Switch(int64_t ts, int cpu, int prev, uint16_t prev_state, int next, bool preempt = false,
              std::string_view next_comm = "task", uint8_t flags = 0,
              std::string_view prev_comm = "task") {
    SchedSwitch e;
    e.c = C(ts, cpu, prev, flags);
    e.prev_comm = prev_comm;
    e.prev_pid = prev;
    e.prev_state = prev_state;
    e.prev_preempted = preempt;
    e.next_comm = next_comm;
    e.next_pid = next;
    sm_.PushSchedSwitch(e);
  }
  void Wake(int64_t ts, int cpu, int waker, int wakee, int target, uint8_t flags = 0,
            WakeupKind kind = WakeupKind::kWaking) {
    SchedWakeup e;
    e.c = C(ts, cpu, waker, flags);
    e.kind = kind;
    e.comm = "task";
    e.pid = wakee;
    e.target_cpu = target;
    sm_.PushSchedWakeup(e);
  }
  // sched_waking followed by sched_wakeup at the same time, as the kernel emits them.
  void WakeBoth(int64_t ts, int cpu, int waker, int wakee, int target, uint8_t flags = 0) {
    Wake(ts, cpu, waker, wakee, target, flags, WakeupKind::kWaking);
    Wake(ts, cpu, waker, wakee, target, flags, WakeupKind::kWakeup);
  }
  void Fork(int64_t ts, int cpu, int parent, int child, bool thread) {
    TaskNewtask n;
    n.c = C(ts, cpu, parent);
    n.pid = child;
    n.comm = "task";
    n.clone_flags = thread ? 0x00010000 : 0;
    sm_.PushTaskNewtask(n);
    ForkWithoutFlags(ts, cpu, parent, child);
  }
  // sched_process_fork alone, as in a file recorded without task:task_newtask.
  void ForkWithoutFlags(int64_t ts, int cpu, int parent, int child) {
    SchedProcessFork f;
    f.c = C(ts, cpu, parent);
    f.parent_comm = "task";
    f.parent_pid = parent;
    f.child_comm = "task";
    f.child_pid = child;
    sm_.PushSchedProcessFork(f);
  }
  // sched_process_exec by the task with tid `old_pid`; it comes out as `pid` (the
  // leader's tid when a non-leader thread execs).
  void Exec(int64_t ts, int cpu, int old_pid, int pid) {
    SchedProcessExec e;
    e.c = C(ts, cpu, pid);
    e.filename = "/bin/task";
    e.pid = pid;
    e.old_pid = old_pid;
    sm_.PushSchedProcessExec(e);
  }
  // sched_migrate_task of `tid` from `from` to `to`, done on `cpu` by `running`.
  void Migrate(int64_t ts, int cpu, int running, int tid, int from, int to) {
    sm_.PushSchedMigrateTask(Move(ts, cpu, running, tid, from, to));
  }
  // The same move from the unfiltered buffer beside a pid-filtered trace.
  void UnfilteredMigrate(int64_t ts, int cpu, int running, int tid, int from, int to) {
    sm_.PushUnfilteredMigrateTask(Move(ts, cpu, running, tid, from, to));
  }
  static SchedMigrateTask Move(int64_t ts, int cpu, int running, int tid, int from, int to) {
    SchedMigrateTask m;
    m.c = C(ts, cpu, running);
    m.comm = "task";
    m.pid = tid;
    m.orig_cpu = from;
    m.dest_cpu = to;
    return m;
  }
  // task:task_rename (prctl PR_SET_NAME, or the comm an exec gives).
  void Rename(int64_t ts, int cpu, int tid, std::string_view comm) {
    TaskRename r;
    r.c = C(ts, cpu, tid);
    r.pid = tid;
    r.oldcomm = "task";
    r.newcomm = comm;
    sm_.PushTaskRename(r);
  }
  void SysEnter(int64_t ts, int cpu, int tid, int64_t nr, uint8_t flags = 0) {
    sm_.PushSysEnter({C(ts, cpu, tid, flags), nr});
  }
  void SysExit(int64_t ts, int cpu, int tid, int64_t nr, uint8_t flags = 0, int64_t ret = 0) {
    sm_.PushSysExit({C(ts, cpu, tid, flags), nr, ret});
  }
  void Exit(int64_t ts, int cpu, int tid, std::string_view comm = "task") {
    SchedProcessExit e;
    e.c = C(ts, cpu, tid);
    e.comm = comm;
    e.pid = tid;
    sm_.PushSchedProcessExit(e);
  }
  void Free(int64_t ts, int cpu, int running, int tid) {
    SchedProcessFree e;
    e.c = C(ts, cpu, running, kFlagSoftirq);
    e.comm = "task";
    e.pid = tid;
    sm_.PushSchedProcessFree(e);
  }
  void IrqEntry(int64_t ts, int cpu, int running, int irq = 24) {
    IrqHandlerEntry e;
    e.c = C(ts, cpu, running, kFlagHardirq);
    e.irq = irq;
    e.name = "virtio0";
    sm_.PushIrqHandlerEntry(e);
  }
  void IrqExit(int64_t ts, int cpu, int running, int irq = 24, uint8_t flags = kFlagHardirq) {
    IrqHandlerExit e;
    e.c = C(ts, cpu, running, flags);
    e.irq = irq;
    sm_.PushIrqHandlerExit(e);
  }
  void Vector(int64_t ts, int cpu, int running, bool entry, std::string_view name = "local_timer",
              uint8_t flags = kFlagHardirq) {
    IrqVector e;
    e.c = C(ts, cpu, running, flags);
    e.entry = entry;
    e.vector = 236;
    e.name = name;
    sm_.PushIrqVector(e);
  }
  void Soft(int64_t ts, int cpu, int running, bool entry, uint32_t vec = 1) {
    Softirq e;
    e.c = C(ts, cpu, running, kFlagSoftirq);
    e.phase = entry ? SoftirqPhase::kEntry : SoftirqPhase::kExit;
    e.vec = vec;
    e.name = "TIMER";
    sm_.PushSoftirq(e);
  }
  void Nmi(int64_t ts, int cpu, int running, int64_t delta) {
    NmiHandler e;
    e.c = C(ts, cpu, running, kFlagNmi);
    e.delta_ns = delta;
    e.handled = 1;
    sm_.PushNmiHandler(e);
  }
  void Fault(int64_t ts, int cpu, int tid, bool user = true) {
    PageFault e;
    e.c = C(ts, cpu, tid);
    e.user = user;
    sm_.PushPageFault(e);
  }
  void Lost(int64_t ts, int cpu, int64_t count) { sm_.PushLostEvents({ts, cpu, count}); }
  // Any event that shows the CPU's flags (e.g. the need-resched bit) at `ts`.
  // The kernel's run-time increment of `pid`, done on `cpu` by `running` (default: `pid`
  // itself; another task when a wakeup there accounted `pid` running on another CPU).
  void StatRuntime(int64_t ts, int cpu, int pid, uint64_t runtime, uint8_t flags = 0,
                   int running = -1) {
    SchedStatRuntime e;
    e.c = C(ts, cpu, running < 0 ? pid : running, flags);
    e.comm = "task";
    e.pid = pid;
    e.runtime = runtime;
    sm_.PushSchedStatRuntime(e);
  }
  // The same increment from the unfiltered run-time buffer beside a pid-filtered trace.
  void UnfilteredRuntime(int64_t ts, int cpu, int pid, uint64_t runtime, int running = -1) {
    SchedStatRuntime e;
    e.c = C(ts, cpu, running < 0 ? pid : running);
    e.comm = "task";
    e.pid = pid;
    e.runtime = runtime;
    sm_.PushUnfilteredRuntime(e);
  }
  // A wakelist flush (csd_function_entry of `func`, sched_ttwu_pending) from that buffer.
  void UnfilteredWakelistFlush(int64_t ts, int cpu, uint64_t func) {
    CsdFunctionEntry e;
    e.c = C(ts, cpu, 0);
    e.func = func;
    sm_.PushUnfilteredWakelistFlush(e);
  }
  // csd_function_entry of `func` in the trace (-a), in the idle task's context.
  void CsdEntry(int64_t ts, int cpu, uint64_t func) {
    CsdFunctionEntry e;
    e.c = C(ts, cpu, 0);
    e.func = func;
    sm_.PushCsdFunctionEntry(e, 528);
  }
  // That buffer lost events on `cpu` just before `ts`.
  void UnfilteredLost(int64_t ts, int cpu, int64_t count) {
    sm_.PushUnfilteredLost({ts, cpu, count});
  }
  const StateMachine& machine() const { return sm_; }
  StateMachine& machine() { return sm_; }
  void Tick(int64_t ts, int cpu, int running, uint8_t flags) {
    sm_.PushOtherEvent(C(ts, cpu, running, flags), 9999);
  }
  // An ftrace:kernel_stack record (record --stacks) in the context of `tid`.
  void Stack(int64_t ts, int cpu, int tid, const std::vector<uint64_t>& frames) {
    KernelStack e;
    e.c = C(ts, cpu, tid);
    e.frames = reinterpret_cast<const uint8_t*>(frames.data());
    e.depth = static_cast<uint32_t>(frames.size());
    sm_.PushKernelStack(e);
  }
  // The analysis of a file with kernel stacks (ReportModel::has_stacks), before any event.
  void EnableStacks() {
    model_.has_stacks = true;
    observers_.push_back(std::make_unique<KernelStackObserver>(model_));
    sm_.AddObserver(observers_.back().get());
  }
  void Finish(int64_t ts) { sm_.Finish(ts); }
  // msa's interval boundary: every thread's open stretch is cut at `ts`.
  void Cut(int64_t ts) { sm_.CutSegments(ts); }
  // Extra analyses (e.g. the timeline export) run after the report observers.
  void AddObserver(Observer* observer) { sm_.AddObserver(observer); }

  // The report of the live (or last) thread with this tid.
  const ThreadReport& Report(int tid) const {
    const ThreadReport* found = nullptr;
    for (const ThreadReport& r : model_.threads)
      if (r.thread && r.thread->tid == tid) found = &r;
    if (!found) throw std::runtime_error("no thread " + std::to_string(tid));
    return *found;
  }
  // A /proc sample of `tid` at `ts` (its window is cut there, CounterWindow::AddSample),
  // registered before the segments around it arrive.
  void SampleAt(int tid, int64_t ts) {
    const_cast<ThreadReport&>(Report(tid)).counter_window.AddSample(ts, ts, ts);
  }
  int64_t Micro(int tid, Microstate m) const {
    return Report(tid).microstates[static_cast<size_t>(m)];
  }
  uint64_t Cause(int tid, const std::string& label) const {
    for (auto [k, n] : Report(tid).causes)
      if (syscalls_.CauseLabel(SwitchCause::Unpack(k)) == label) return n;
    return 0;
  }
  uint64_t PreemptedAt(int tid, cstool::PreemptedAt at) const {
    return Report(tid).preempted_at[static_cast<size_t>(at)];
  }
  // Microstates must tile each thread's lifetime exactly.
  bool SumsToLifetime(std::string* why) const {
    for (const ThreadReport& r : model_.threads) {
      if (!r.thread) continue;
      int64_t sum = 0;
      for (int64_t v : r.microstates) sum += v;
      if (sum != r.Lifetime()) {
        *why = "tid " + std::to_string(r.thread->tid) + ": sum " + std::to_string(sum) +
               " != lifetime " + std::to_string(r.Lifetime());
        return false;
      }
    }
    return true;
  }
  const StateMachine& sm() const { return sm_; }
  const ReportModel& model() const { return model_; }
  // What the check learnt of the enqueue lag so far; a test may seed it.
  EnqueueLag& enqueue_lag() { return model_.enqueue_lag; }
  const SyscallTable& syscalls() const { return syscalls_; }

 private:
  SyscallTable syscalls_;
  ReportModel model_;
  StateMachine sm_;
  std::vector<std::unique_ptr<Observer>> observers_;
};

}  // namespace cstool::testing
