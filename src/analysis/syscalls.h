#pragma once

#include <type_traits>
#include <vector>

#include "analysis/report_model.h"
#include "sched/observer.h"

namespace cstool {

// Per-thread, per-syscall table: calls, times blocked, time inside.
class SyscallObserver : public Observer {
 public:
  explicit SyscallObserver(ReportModel& model) : model_(model) {}
  uint32_t Hooks() const override {
    return HookBit(Hook::kSyscall) | HookBit(Hook::kSyscallBlocked);
  }
  void OnSyscall(const SyscallInterval& s) override {
    SyscallStats& st = Stats(*s.thread, s.nr);
    if (s.enter_seen) ++st.calls;
    st.time_ns += s.end - s.start;
  }
  void OnSyscallBlocked(const Thread& t, int64_t nr) override { ++Stats(t, nr).blocked; }

 private:
  // Per thread, the entry of each syscall number below kDirect, so the hash map is
  // searched once per (thread, syscall) instead of once per call. Entries of an
  // unordered_map keep their address, also when ThreadReport moves (nothrow move).
  static constexpr int64_t kDirect = 512;
  static_assert(std::is_nothrow_move_constructible_v<ThreadReport>);
  // Inline for the entry already there (about every call), the rest out of line.
  [[gnu::always_inline]] SyscallStats& Stats(const Thread& t, int64_t nr) {
    if (static_cast<uint64_t>(nr) < kDirect && t.id < direct_.size()) [[likely]] {
      const std::vector<SyscallStats*>& row = direct_[t.id];
      if (!row.empty())
        if (SyscallStats* p = row[static_cast<size_t>(nr)]) [[likely]]
          return *p;
    }
    return NewStats(t, nr);
  }
  [[gnu::noinline]] SyscallStats& NewStats(const Thread& t, int64_t nr) {
    if (nr < 0 || nr >= kDirect) return model_.For(t).syscalls[nr];
    if (t.id >= direct_.size()) direct_.resize(t.id + 1);
    std::vector<SyscallStats*>& row = direct_[t.id];
    if (row.empty()) row.assign(kDirect, nullptr);
    SyscallStats*& p = row[static_cast<size_t>(nr)];
    if (p == nullptr) p = &model_.For(t).syscalls[nr];
    return *p;
  }

  ReportModel& model_;
  std::vector<std::vector<SyscallStats*>> direct_;  // by Thread::id
};

}  // namespace cstool
