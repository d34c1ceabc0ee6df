// An EventSink that writes down every call it receives, every field and string included,
// one line per call: two sinks saw the same thing exactly when their lines are equal.
#pragma once

#include <fmt/core.h>

#include <string>
#include <string_view>
#include <vector>

#include "model/events.h"

namespace cstool::testing {

class CallLog : public EventSink {
 public:
  std::vector<std::string> lines;

  void PushSchedSwitch(const SchedSwitch& e) override {
    Add("switch", e.c,
        fmt::format("{} {} {} {} {} {} {} {}", e.prev_comm, e.prev_pid, e.prev_prio, e.prev_state,
                    e.prev_preempted, e.next_comm, e.next_pid, e.next_prio));
  }
  void PushSchedWakeup(const SchedWakeup& e) override {
    Add("wakeup", e.c,
        fmt::format("{} {} {} {} {}", static_cast<int>(e.kind), e.comm, e.pid, e.prio,
                    e.target_cpu));
  }
  void PushSchedMigrateTask(const SchedMigrateTask& e) override {
    Add("migrate", e.c, fmt::format("{} {} {} {}", e.comm, e.pid, e.orig_cpu, e.dest_cpu));
  }
  void PushSchedStatRuntime(const SchedStatRuntime& e) override {
    Add("runtime", e.c, fmt::format("{} {} {}", e.comm, e.pid, e.runtime));
  }
  void PushUnfilteredRuntime(const SchedStatRuntime& e) override {
    Add("unfiltered_runtime", e.c, fmt::format("{} {} {}", e.comm, e.pid, e.runtime));
  }
  void PushCsdFunctionEntry(const CsdFunctionEntry& e, int type_id) override {
    Add("csd_entry", e.c, fmt::format("{} {} {}", e.func, e.csd, type_id));
  }
  void PushUnfilteredWakelistFlush(const CsdFunctionEntry& e) override {
    Add("unfiltered_flush", e.c, fmt::format("{} {}", e.func, e.csd));
  }
  void PushUnfilteredMigrateTask(const SchedMigrateTask& e) override {
    Add("unfiltered_migrate", e.c,
        fmt::format("{} {} {} {}", e.comm, e.pid, e.orig_cpu, e.dest_cpu));
  }
  void PushUnfilteredLost(const LostEvents& e) override {
    lines.push_back(fmt::format("unfiltered_lost {} {} {}", e.ts, e.cpu, e.count));
  }
  void PushSchedProcessFork(const SchedProcessFork& e) override {
    Add("fork", e.c,
        fmt::format("{} {} {} {}", e.parent_comm, e.parent_pid, e.child_comm, e.child_pid));
  }
  void PushTaskNewtask(const TaskNewtask& e) override {
    Add("newtask", e.c, fmt::format("{} {} {}", e.pid, e.comm, e.clone_flags));
  }
  void PushTaskRename(const TaskRename& e) override {
    Add("rename", e.c, fmt::format("{} {} {}", e.pid, e.oldcomm, e.newcomm));
  }
  void PushSchedProcessExec(const SchedProcessExec& e) override {
    Add("exec", e.c, fmt::format("{} {} {}", e.filename, e.pid, e.old_pid));
  }
  void PushSchedProcessExit(const SchedProcessExit& e) override {
    Add("exit", e.c, fmt::format("{} {} {}", e.comm, e.pid, e.group_dead));
  }
  void PushSchedProcessFree(const SchedProcessFree& e) override {
    Add("free", e.c, fmt::format("{} {}", e.comm, e.pid));
  }
  void PushIrqHandlerEntry(const IrqHandlerEntry& e) override {
    Add("irq_entry", e.c, fmt::format("{} {}", e.irq, e.name));
  }
  void PushIrqHandlerExit(const IrqHandlerExit& e) override {
    Add("irq_exit", e.c, fmt::format("{} {}", e.irq, e.ret));
  }
  void PushSoftirq(const Softirq& e) override {
    Add("softirq", e.c, fmt::format("{} {} {}", static_cast<int>(e.phase), e.vec, e.name));
  }
  void PushIrqVector(const IrqVector& e) override {
    Add("vector", e.c, fmt::format("{} {} {}", e.entry, e.vector, e.name));
  }
  void PushNmiHandler(const NmiHandler& e) override {
    Add("nmi", e.c, fmt::format("{} {} {}", e.handler, e.delta_ns, e.handled));
  }
  void PushSysEnter(const SysEnter& e) override { Add("sys_enter", e.c, fmt::format("{}", e.id)); }
  void PushSysExit(const SysExit& e) override {
    Add("sys_exit", e.c, fmt::format("{} {}", e.id, e.ret));
  }
  void PushPageFault(const PageFault& e) override {
    Add("page_fault", e.c, fmt::format("{} {} {} {}", e.user, e.address, e.ip, e.error_code));
  }
  void PushKernelStack(const KernelStack& e) override {
    std::string frames;
    for (uint32_t i = 0; i < e.depth; ++i) frames += fmt::format(" {:x}", e.Frame(i));
    Add("stack", e.c, fmt::format("{} {} {}{}", e.depth, e.word_size, e.swap, frames));
  }
  void PushLostEvents(const LostEvents& e) override {
    lines.push_back(fmt::format("lost {} {} {}", e.ts, e.cpu, e.count));
  }
  void PushOtherEvent(const EventCommon& c, int type_id) override {
    Add("other", c, fmt::format("{}", type_id));
  }

 private:
  void Add(std::string_view what, const EventCommon& c, const std::string& fields) {
    lines.push_back(fmt::format("{} {} {} {} {} {} | {}", what, c.ts, c.cpu, c.pid, c.flags,
                                c.preempt_count, fields));
  }
};

}  // namespace cstool::testing
