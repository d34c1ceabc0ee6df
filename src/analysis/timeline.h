// `report --timeline`: streams the analysis as Chrome/Perfetto trace-event JSON.
//
// Tracks: one per selected thread (grouped under its process) whose slices are its
// microstates ("Running (user)", "Sleeping: futex", ...; the slice that ends in a
// switch-out carries the cause and preempted_at in args); one per CPU under a
// synthetic "CPUs" process with the running thread's slices and, nested in them, the
// IRQ/softirq/NMI slices; wakeup flow arrows from the waker (its thread track, or the
// CPU track when woken from an interrupt or by an unselected task) to the wakee; an
// instant event on the CPU track for each lost-events gap.
//
// Slices are written as the state machine reports them; a thread's latest slice is
// held back until its switch-out cause is known, so memory stays per thread and CPU.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <ostream>
#include <unordered_map>
#include <vector>

#include "analysis/cpu_occupancy.h"
#include "format/trace_event_writer.h"
#include "model/syscall_table.h"
#include "sched/observer.h"

namespace cstool {

class TimelineObserver : public Observer {
 public:
  using ThreadFilter = std::function<bool(const Thread&)>;
  // The synthetic process that holds the CPU tracks; CPU n is tid kCpuPid + 1 + n.
  static constexpr int64_t kCpuPid = 1'000'000'000;

  TimelineObserver(std::ostream& os, const SyscallTable& syscalls, ThreadFilter selected);

  void OnStateSegment(const Thread& t, Microstate s, int64_t start, int64_t end) override;
  void OnSwitch(const SwitchEvent& e) override;
  void OnCpuCurrent(const CpuCurrentEvent& e) override;
  void OnWakeup(const WakeupEvent& w) override;
  void OnIrq(const IrqInterval& iv) override;
  void OnLostEvents(int32_t cpu, int64_t ts, int64_t count) override;
  void OnTraceEnd(int64_t ts) override;

  uint64_t events() const { return writer_.events(); }

 private:
  struct SwitchInfo {
    int64_t ts = -1;
    SwitchCause cause;
    PreemptedAt preempted_at = PreemptedAt::kOther;
    bool voluntary = false;
  };
  struct Slice {
    Microstate state;
    int64_t start;
    int64_t end;
    bool has_out = false;  // ends with a switch-out
    SwitchInfo out;
    bool has_after = false;  // starts with a switch-out
    SwitchInfo after;
  };
  struct Track {
    bool named = false;
    std::string comm;
    SwitchInfo last_switch;
    std::deque<Slice> held;
  };

  Track& TrackOf(const Thread& t);
  void Flush(const Thread& t, Track& tr, size_t keep);
  void WriteSlice(const Thread& t, Track& tr, const Slice& s);
  void NameThread(const Thread& t, Track& tr);
  void WriteCpuRun(const CpuRun& r);
  void NameCpu(int32_t cpu);
  static int64_t CpuTid(int32_t cpu) { return kCpuPid + 1 + cpu; }

  TraceEventWriter writer_;
  const SyscallTable& syscalls_;
  ThreadFilter selected_;
  CpuOccupancy occupancy_;
  std::vector<Track> tracks_;                    // by Thread::id
  std::vector<const Thread*> threads_;           // by Thread::id, for the final flush
  std::unordered_map<int32_t, bool> processes_;  // pid -> named after its leader
  std::vector<bool> cpu_named_;
  uint64_t next_flow_ = 1;
  bool cpus_process_named_ = false;
};

}  // namespace cstool
