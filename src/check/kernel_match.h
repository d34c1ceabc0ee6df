// Which of a recording's kernel counter records (kernel/kernel_recording.h) belong to which
// reconstructed thread. Threads are matched by tid AND time, so a reused tid never
// borrows another thread's counters:
//   - a thread owns the records of its tid taken in [tid_since, tid_since of the next
//     thread with that tid); a start sample may predate tid_since (the thread existed but
//     had not shown up in the trace yet) when the thread was not created in the trace;
//   - a thread whose exit the trace saw takes the first taskstats exit record taken at
//     or after that exit; any other thread takes its latest end sample.
// The comparison window then is:
//   absolute  thread created in the trace: its whole life, kernel values as they are;
//   delta     thread alive at the start: end record - start sample, trace cut at the
//             start sample's instant;
//   partial   the start of the thread is not covered (no start sample), or its end is
//             not (it exited after tracing stopped): shown, never judged.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/report_model.h"
#include "kernel/kernel_recording.h"

namespace cstool {

enum class WindowMode { kNone, kAbsolute, kDelta, kPartial };
std::string_view WindowModeName(WindowMode m);  // "none", "absolute", "delta", "partial"

struct KernelMatch {
  WindowMode mode = WindowMode::kNone;
  const KernelTaskCounters* start = nullptr;  // start sample (delta mode)
  const KernelTaskCounters* end = nullptr;    // exit record or end sample
  std::string why;                            // for kNone / kPartial
};

class KernelMatcher {
 public:
  // Both must outlive the matcher.
  KernelMatcher(const KernelRecording& recording, const std::vector<ThreadReport>& threads);

  KernelMatch Match(const ThreadReport& r) const;

 private:
  const KernelRecording& recording_;
  std::map<int32_t, std::vector<const Thread*>> by_tid_;  // sorted by tid_since
};

// The thread's `kernel` JSON object (the counters, their source, taken_at_ns, delays,
// window and the start sample); null without an end record.
nlohmann::json KernelJson(const KernelMatch& m);

// Fills ThreadReport::kernel for every thread of the model from
// model.trace.recording.kernel_counters. Returns a note for the report when the
// counters cannot be read (never throws for bad counters).
std::string AttachKernelCounters(ReportModel& model);

}  // namespace cstool
