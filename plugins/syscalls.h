#pragma once

#include "core/report_model.h"
#include "plugins/plugin.h"

namespace cstool {

// Per-thread, per-syscall table: calls, times blocked, time inside.
class SyscallPlugin : public Plugin {
 public:
  explicit SyscallPlugin(ReportModel& model) : model_(model) {}
  void OnSyscall(const SyscallInterval& s) override {
    SyscallStats& st = model_.For(*s.thread).syscalls[s.nr];
    if (s.enter_seen) ++st.calls;
    st.time_ns += s.end - s.start;
  }
  void OnSyscallBlocked(const Thread& t, int64_t nr) override {
    ++model_.For(t).syscalls[nr].blocked;
  }

 private:
  ReportModel& model_;
};

}  // namespace cstool
