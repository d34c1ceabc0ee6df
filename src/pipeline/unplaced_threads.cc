#include "pipeline/unplaced_threads.h"

#include <fmt/core.h>

#include <algorithm>

namespace cstool {

std::string UnplacedThreadsNote(const StateMachine& machine, const EventDecoder& decoder,
                                const std::optional<RecordingInfo>& info) {
  if (!info || info->system_wide || info->target_pids.empty() ||
      decoder.Knows(EventKind::kSchedProcessFork))
    return {};
  const std::vector<int32_t>& untraced = info->untraced_tids;
  const auto unplaced = std::count_if(
      machine.threads().begin(), machine.threads().end(), [&untraced](const Thread& t) {
        return t.tid != 0 && !t.tracked &&
               std::find(untraced.begin(), untraced.end(), t.tid) == untraced.end();
      });
  if (unplaced == 0) return {};
  return fmt::format(
      "no sched_process_fork events: the threads the recorded processes started cannot be told "
      "from others that met them in the trace, so only the processes named at the start are "
      "shown; {} other thread{} in the trace {} left out (--all-threads lists them)",
      unplaced, unplaced == 1 ? "" : "s", unplaced == 1 ? "is" : "are");
}

}  // namespace cstool
