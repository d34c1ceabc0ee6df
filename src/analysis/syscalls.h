#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
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
  // Per thread (by Thread::id), the entries of its syscalls in a small direct-mapped table
  // (slot nr % kSlots), so that the hash map is searched once per (thread, syscall) and
  // again only when two of a thread's syscalls share a slot. 256 bytes a thread stay in
  // the caches: a 4 KiB row a thread, indexed by syscall number, missed them once a trace
  // had hundreds of threads (7 % of a report of 64 CPUs and 1 810 threads went to those
  // loads). Entries of an unordered_map keep their address, also when ThreadReport moves
  // (nothrow move).
  static constexpr size_t kSlots = 16;
  struct Slot {
    int64_t nr = 0;
    SyscallStats* stats = nullptr;  // null: empty
  };
  using Slots = std::array<Slot, kSlots>;
  static_assert(std::is_nothrow_move_constructible_v<ThreadReport>);
  static size_t SlotOf(int64_t nr) { return static_cast<uint64_t>(nr) % kSlots; }
  // Inline for the entry already there (about every call), the rest out of line.
  [[gnu::always_inline]] SyscallStats& Stats(const Thread& t, int64_t nr) {
    if (t.id < slots_.size()) [[likely]] {
      const Slot& slot = slots_[t.id][SlotOf(nr)];
      if (slot.nr == nr && slot.stats != nullptr) [[likely]]
        return *slot.stats;
    }
    return NewStats(t, nr);
  }
  [[gnu::noinline]] SyscallStats& NewStats(const Thread& t, int64_t nr) {
    SyscallStats& stats = model_.For(t).syscalls[nr];
    if (t.id >= slots_.size()) slots_.resize(t.id + 1);
    slots_[t.id][SlotOf(nr)] = {nr, &stats};
    return stats;
  }

  ReportModel& model_;
  std::vector<Slots> slots_;  // by Thread::id
};

}  // namespace cstool
