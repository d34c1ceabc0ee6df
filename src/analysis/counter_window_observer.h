#pragma once

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "analysis/report_model.h"
#include "kernel/kernel_counters.h"
#include "sched/observer.h"

namespace cstool {

// Fills ThreadReport::counter_window: each thread's switches and CPU/wait times, cut at
// the instants the recorder sampled its tid's counters from /proc (analysis/counter_window.h).
class CounterWindowObserver : public Observer {
 public:
  // Takes the sampling instants from model.trace.recording.kernel_counters; a recording
  // without (or with unreadable) kernel counters gives no cuts. With `windows` false it
  // records only each thread's exit time (CounterWindow::exit_ts, which matching the
  // kernel's exit records needs) and leaves the totals and cuts empty.
  CounterWindowObserver(ReportModel& model, bool windows);

  uint32_t Hooks() const override {
    if (!windows_) return HookBit(Hook::kExit);
    return HookBit(Hook::kThreadNew) | HookBit(Hook::kStateSegment) | HookBit(Hook::kSwitch) |
           HookBit(Hook::kEnqueued) | HookBit(Hook::kExit) | HookBit(Hook::kRuntimeAccounted) |
           HookBit(Hook::kStolen) | HookBit(Hook::kTraceEnd) | HookBit(Hook::kMigrate) |
           HookBit(Hook::kBetweenRunqueues) | HookBit(Hook::kWokenWhilePreempted);
  }
  void OnThreadNew(const Thread& t) override;
  void OnStateSegment(const Thread& t, Microstate s, int32_t cpu, int64_t start,
                      int64_t end) override;
  void OnEnqueued(const Thread& t, int64_t runnable_since, int64_t ts,
                  const EnqueueDating& dating) override {
    model_.For(t).counter_window.NoteEnqueued(runnable_since, ts, dating,
                                              t.moved_asleep_at >= 0 ? ts - t.moved_asleep_at : 0,
                                              t.maybe_moved_asleep_ns);
  }
  // A move of a queued thread (not a woken one's placement, before its enqueue).
  void OnMigrate(const Thread& t, int32_t, int32_t, int64_t ts) override {
    if (t.Queued()) model_.For(t).counter_window.NoteQueuedMove(ts, t.since);
  }
  void OnBetweenRunqueues(const Thread& t, int64_t from, int64_t to) override {
    model_.For(t).counter_window.NoteBetweenRunqueues(from, to);
  }
  void OnWokenWhilePreempted(const Thread& t, int64_t preempted_since, int64_t) override {
    model_.For(t).counter_window.NotePreemptedAsleep(preempted_since);
  }
  void OnRuntimeAccounted(const Thread& t, int64_t from, int64_t to) override {
    model_.For(t).counter_window.NoteAccounted(from, to);
  }
  void OnStolen(const Thread& t, int64_t from, int64_t to) override {
    WindowWithExitCuts(t).AddStolen(from, to);
  }
  void OnTraceEnd(int64_t ts) override {
    for (ThreadReport& r : model_.threads) r.counter_window.EndTrace(ts, model_.enqueue_lag);
  }
  void OnSwitch(const SwitchEvent& e) override {
    if (e.prev) model_.For(*e.prev).counter_window.AddSwitch(e.ts, e.voluntary);
  }
  void OnExit(const Thread& t, int64_t ts) override {
    CounterWindow& w = model_.For(t).counter_window;
    // The kernel samples a dying thread's exec runtime (taskstats, early in do_exit()) as
    // its accounting left it at its last update, not at this instant; when that is known
    // only from a later increment, OnStateSegment moves the cut there (the segments after
    // it are held until then).
    if (w.exit_ts < 0)
      w.exit_ts = t.accounted_at_exit >= 0 ? std::min(ts, t.accounted_at_exit) : ts;
  }

 private:
  CounterWindow& WindowWithExitCuts(const Thread& t);

  ReportModel& model_;
  bool windows_;
  // tid -> its /proc samples' instants: when taken, and where the switch counts were read.
  struct SampleInstants {
    int64_t taken_at;
    KernelTaskCounters::Span switches_read;
  };
  std::unordered_map<int32_t, std::vector<SampleInstants>> samples_;
};

}  // namespace cstool
