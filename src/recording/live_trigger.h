// A condition the flight recorder evaluates on the events while they are recorded
// (`record --trigger`). The window stays in the kernel, unread (recording/kernel_window.h);
// the trigger has an instance of its own, with only the events it needs, whose ring
// buffers the recording engine reads live (tracefs/live_cpu_source.h) and whose decoded
// records it hands to the trigger. What the condition means (the scheduler state
// machine) is the command's business, so this library depends on no analysis.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/recording_info.h"

namespace cstool {

class LiveCpuSource;
class TracefsSession;

struct TriggerHit {
  int64_t ts = 0;    // trace-clock time the condition held
  std::string what;  // e.g. "sleep>100ms: tid 1234 (worker) slept 200.1 ms"
};

// Whose events a trigger evaluates.
struct TriggerScope {
  std::vector<int32_t> target_pids;  // the followed processes; empty with -a: every thread
  // The threads /proc listed (their processes: a thread running before tracing began
  // shows no fork to tell whose it is).
  std::vector<ThreadIdentity> known_threads;
  // The recorder's own threads, which -a may trace (where the kernel cannot leave them
  // out): never the condition's, as they are never the report's.
  std::vector<int32_t> recorder_tids;
  // -p: the targets' threads as /proc showed them just before tracing, at `seeds_ts`
  // (RecordingInfo::attach_seeds): a thread already asleep when tracing began is in the
  // condition's state from there, as the report has it.
  std::vector<AttachSeed> seeds;
  int64_t seeds_ts = 0;
  // The flight window: a stretch is checked when it ends, so that the dump holds the
  // whole episode, but one still going on once it is longer than this (and the
  // threshold) holds already: waiting would keep no more of it, and a thread stuck in it
  // would never end it.
  int64_t window_ns = 0;
};

class LiveTrigger {
 public:
  virtual ~LiveTrigger() = default;
  // Whether the scheduler events (EventSet::kScheduler) are all the condition needs;
  // otherwise its instance records the recording's whole event set.
  virtual bool SchedulerEventsSuffice() const = 0;
  // Once, before tracing starts: the session's event formats and whose events count.
  virtual void Start(const TracefsSession& session, int file_cpus, const TriggerScope& scope) = 0;
  // Consumes every queued record with ts <= cut from `sources`, in time order;
  // returns the first time the condition held in them, if it did.
  virtual std::optional<TriggerHit> Feed(const std::vector<LiveCpuSource*>& sources,
                                         int64_t cut) = 0;
};

}  // namespace cstool
