// The export's large tables, written while the state machine runs (nothing of them is
// kept): thread_state (every microstate interval of every thread), sched_slice (every
// run of a thread on a CPU, analysis/cpu_occupancy.h) and switch (every switch-out of a
// thread, with its cause).
//
// thread_state rows are the state machine's segments, so a thread's rows sum, by state,
// to its microstates exactly; consecutive segments of one state (split at events that do
// not change it) make one row. `cpu` is set for on-CPU states: the CPU the thread was
// current on at the middle of the interval (the segments follow the kernel's switch
// instants, which may precede the traced switch by a little); `waker_utid` and
// `irq_context` for wait_cpu_wakeup: the wakeup that started the wait.
// Memory: per thread one held row and a few recent CPU changes and wakeups.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/cpu_occupancy.h"
#include "export/row_sink.h"
#include "model/syscall_table.h"
#include "sched/observer.h"

namespace cstool {

class StreamedRowObserver : public Observer {
 public:
  StreamedRowObserver(RowSink& sink, const SyscallTable& syscalls);

  uint32_t Hooks() const override {
    return HookBit(Hook::kStateSegment) | HookBit(Hook::kSwitch) | HookBit(Hook::kWakeup) |
           HookBit(Hook::kCpuCurrent) | HookBit(Hook::kTraceEnd);
  }
  void OnStateSegment(const Thread& t, Microstate s, int32_t cpu, int64_t start,
                      int64_t end) override;
  void OnSwitch(const SwitchEvent& e) override;
  void OnWakeup(const WakeupEvent& w) override;
  void OnCpuCurrent(const CpuCurrentEvent& e) override;
  void OnTraceEnd(int64_t ts) override;

  // Writes the rows still held (idempotent; OnTraceEnd does it too).
  void Flush();

 private:
  static constexpr int64_t kNone = -1;
  struct Row {
    bool open = false;
    Microstate state = Microstate::kUnknown;
    int64_t start = 0;
    int64_t end = 0;
    int64_t cpu = kNone;
    int64_t waker = kNone;        // utid
    int64_t irq_context = kNone;  // 0/1 for wait_cpu_wakeup
  };
  struct CpuChange {
    int64_t ts;
    int32_t cpu;  // -1: not current anywhere from ts on
  };
  struct Wakeup {
    int64_t ts;
    int64_t waker;  // utid, or kNone
    bool from_irq;
  };
  struct PerThread {
    Row held;
    std::deque<CpuChange> cpus;
    std::deque<Wakeup> wakeups;
  };

  PerThread& Of(const Thread& t);
  int64_t CpuDuring(PerThread& p, int64_t start, int64_t end);
  void WriteState(uint32_t utid, const Row& r);
  void WriteSlice(const CpuRun& run);
  std::string_view CauseLabel(SwitchCause c);

  RowSink& sink_;
  const SyscallTable& syscalls_;
  CpuOccupancy occupancy_;
  std::vector<PerThread> threads_;      // by Thread::id
  std::vector<const Thread*> current_;  // by CPU: its current thread, as last told
  std::unordered_map<uint32_t, std::string> cause_labels_;  // packed SwitchCause -> label
};

}  // namespace cstool
