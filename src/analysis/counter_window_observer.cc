#include "analysis/counter_window_observer.h"

#include <algorithm>

#include "base/errors.h"
#include "kernel/kernel_recording.h"

namespace cstool {

CounterWindowObserver::CounterWindowObserver(ReportModel& model, bool windows)
    : model_(model), windows_(windows) {
  model.has_kernel_windows = windows;
  if (!windows || !model.trace.has_recording_info) return;
  try {
    KernelRecording rec = KernelRecording::FromJson(model.trace.recording.kernel_counters);
    for (const KernelTaskCounters& c : rec.counters.records())
      if (c.source == KernelTaskCounters::Source::kProcSnapshot)
        cut_times_[c.tid].push_back(c.taken_at_ns);
  } catch (const Error&) {
    cut_times_.clear();  // the check reports the malformed counters itself
  }
  for (auto& [tid, times] : cut_times_) {
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
  }
}

void CounterWindowObserver::OnThreadNew(const Thread& t) {
  // Cuts at every /proc sample of this tid (a reused tid's samples are matched to the
  // right thread by time later, in the check).
  CounterWindow& w = model_.For(t).counter_window;
  if (auto it = cut_times_.find(t.tid); it != cut_times_.end() && w.cuts.empty())
    for (int64_t ts : it->second) w.cuts.push_back({ts, {}});
}

void CounterWindowObserver::OnStateSegment(const Thread& t, Microstate s, int64_t start,
                                           int64_t end) {
  CounterWindow& w = model_.For(t).counter_window;
  // Known from the exit syscall's entry on, before the segments after it arrive.
  if (t.accounted_at_exit >= 0 && (w.exit_ts < 0 || t.accounted_at_exit < w.exit_ts))
    w.exit_ts = t.accounted_at_exit;
  if (t.accounted_before_exit_tick >= 0 && w.exit_before_tick_ts < 0)
    w.exit_before_tick_ts = t.accounted_before_exit_tick;
  w.AddSegment(s, start, end,
               s == Microstate::kWaitCpuWakeup ? w.TakeWaitAdjust(start, end) : WaitAdjust{});
}

}  // namespace cstool
