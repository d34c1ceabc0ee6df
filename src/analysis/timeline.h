// `report --timeline`: streams the analysis to a TimelineSink (analysis/timeline_sink.h),
// which writes it as Perfetto JSON or protobuf (output/timeline_output.h).
//
// Tracks: one per selected thread (grouped under its process) whose slices are its
// microstates ("user", "sys", "sleep:read", "runnable", ...; the slice that ends in a
// switch-out carries the cause, and preempted_at when involuntary, in args); one per
// CPU under a synthetic "CPUs" process with the running thread's slices ("comm tid",
// with the switch-out's cause) and, nested in them, the IRQ/softirq/NMI slices; wakeup
// flow arrows from the waker (its thread track, or the CPU track when woken from an
// interrupt or by an unselected task) to the wakee; an instant event on the CPU track
// for each lost-events gap.
//
// Slices are written as the state machine reports them, except that consecutive
// segments of one state with no switch between them make one slice (the state machine
// splits a state at events that do not change it). A thread's latest slice is held
// back until the next one shows whether a switch-out ends it and its cause is known,
// so memory stays per thread and CPU.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <unordered_map>
#include <vector>

#include "analysis/cpu_occupancy.h"
#include "analysis/critical_path.h"
#include "analysis/timeline_sink.h"
#include "model/syscall_table.h"
#include "sched/observer.h"

namespace cstool {

class TimelineObserver : public Observer {
 public:
  using ThreadFilter = std::function<bool(const Thread&)>;
  // The synthetic process that holds the CPU tracks; CPU n is tid kCpuPid + 1 + n.
  static constexpr int64_t kCpuPid = 1'000'000'000;

  TimelineObserver(TimelineSink& sink, const SyscallTable& syscalls, ThreadFilter selected);

  void OnStateSegment(const Thread& t, Microstate s, int32_t cpu, int64_t start,
                      int64_t end) override;
  void OnSwitch(const SwitchEvent& e) override;
  void OnCpuCurrent(const CpuCurrentEvent& e) override;
  void OnWakeup(const WakeupEvent& w) override;
  void OnIrq(const IrqInterval& iv) override;
  void OnLostEvents(int32_t cpu, int64_t ts, int64_t count) override;
  void OnTraceEnd(int64_t ts) override;

  // Leave the file open at the trace end, for WriteCriticalPath; Close ends it.
  void KeepOpen() { keep_open_ = true; }
  // `report --critical-path`: the path as a track of its own (the "Critical path"
  // process), one slice per segment named "comm tid: state" (what ends the path, when
  // something does, as its cause), and a flow arrow on the threads' own tracks wherever
  // the path passes from one thread to another.
  void WriteCriticalPath(const CriticalPath& path);
  void Close() { sink_.Close(); }
  static constexpr int64_t kPathPid = kCpuPid - 1;

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
    bool has_out = false;     // ends with a switch-out; then `out` is it
    bool awaits_out = false;  // ends with a switch-out whose OnSwitch has not come yet
    SwitchInfo out;
    bool has_after = false;  // starts with a switch-out; then `after` is it
    SwitchInfo after;
  };
  struct Track {
    bool named = false;
    std::string comm;
    std::deque<Slice> held;
    // Switch-outs delivered before the segments that end in them: the thread's times
    // place a switch at the kernel's instant, up to the traced one, and segments may be
    // released after the switch (sched/switch_placement.cc).
    std::deque<SwitchInfo> unplaced;
  };

  Track& TrackOf(const Thread& t);
  void Flush(const Thread& t, Track& tr, size_t keep);
  void WriteSlice(const Thread& t, Track& tr, const Slice& s);
  std::string SliceName(const Slice& s) const;
  void SetSwitchOut(TimelineSlice& slice, std::string& cause, SwitchCause c, bool voluntary,
                    PreemptedAt at) const;
  void NameThread(const Thread& t, Track& tr);
  void WriteCpuRun(const CpuRun& r);
  void NameCpu(int32_t cpu);
  static int64_t CpuTid(int32_t cpu) { return kCpuPid + 1 + cpu; }

  TimelineSink& sink_;
  const SyscallTable& syscalls_;
  ThreadFilter selected_;
  CpuOccupancy occupancy_;
  std::vector<Track> tracks_;           // by Thread::id
  std::vector<const Thread*> threads_;  // by Thread::id, for the final flush
  // pid -> the comm it is named after: its leader's, or its only thread's when the process
  // is unknown (empty: another thread's, the first seen of a process).
  std::unordered_map<int32_t, std::string> processes_;
  std::vector<bool> cpu_named_;
  std::vector<int64_t> lost_ts_;  // where lost-events gaps began, sorted
  uint64_t next_flow_ = 1;
  bool cpus_process_named_ = false;
  bool keep_open_ = false;
};

}  // namespace cstool
