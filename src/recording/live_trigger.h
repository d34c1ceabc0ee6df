// A condition the flight recorder evaluates on the events while they are recorded
// (`record --trigger`). The recording engine reads every CPU's ring buffer live
// (tracefs/live_cpu_source.h), keeps the pages for the window and hands the decoded
// records to the trigger; what the condition means (the scheduler state machine) is the
// command's business, so this library depends on no analysis.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cstool {

class LiveCpuSource;
class TracefsSession;

struct TriggerHit {
  int64_t ts = 0;    // trace-clock time the condition held
  std::string what;  // e.g. "sleep>100ms: tid 1234 (worker) slept 200.1 ms"
};

class LiveTrigger {
 public:
  virtual ~LiveTrigger() = default;
  // Once, before tracing starts: the session's event formats and the followed
  // processes (empty with -a: every thread).
  virtual void Start(const TracefsSession& session, int file_cpus,
                     const std::vector<int32_t>& target_pids) = 0;
  // Consumes every queued record with ts <= cut from `sources`, in time order;
  // returns the first time the condition held in them, if it did.
  virtual std::optional<TriggerHit> Feed(const std::vector<LiveCpuSource*>& sources,
                                         int64_t cut) = 0;
};

}  // namespace cstool
