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
        samples_[c.tid].push_back({c.taken_at_ns, c.SwitchesRead()});
  } catch (const Error&) {
    samples_.clear();  // the check reports the malformed counters itself
  }
}

void CounterWindowObserver::OnThreadNew(const Thread& t) {
  // Cuts at every /proc sample of this tid (a reused tid's samples are matched to the
  // right thread by time later, in the check).
  CounterWindow& w = model_.For(t).counter_window;
  if (auto it = samples_.find(t.tid); it != samples_.end() && w.cuts.empty())
    for (const SampleInstants& c : it->second)
      w.AddSample(c.taken_at, c.switches_read.from, c.switches_read.to);
}

// Where the exit record was sampled is known from the exit syscall's entry on, before the
// segments (and stolen stretches) after it arrive.
CounterWindow& CounterWindowObserver::WindowWithExitCuts(const Thread& t) {
  CounterWindow& w = model_.For(t).counter_window;
  if (t.accounted_at_exit >= 0 && (w.exit_ts < 0 || t.accounted_at_exit < w.exit_ts))
    w.exit_ts = t.accounted_at_exit;
  if (t.accounted_before_exit_tick >= 0 && w.exit_before_tick_ts < 0)
    w.exit_before_tick_ts = t.accounted_before_exit_tick;
  return w;
}

void CounterWindowObserver::OnStateSegment(const Thread& t, Microstate s, int32_t /*cpu*/,
                                           int64_t start, int64_t end) {
  WindowWithExitCuts(t).PushSegment(s, start, end, model_.enqueue_lag);
}

}  // namespace cstool
