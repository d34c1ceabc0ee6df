#include "recording/record_options.h"

#include <fmt/core.h>

#include <cmath>

#include "base/errors.h"
#include "counters/event_list.h"
#include "counters/virtual_counters.h"

namespace cstool {

void ValidateRecordOptions(const RecordOptions& o) {
  if (o.command.empty() && o.pids.empty() && !o.system_wide)
    throw Error("nothing to record: give -- CMD, -p PID or -a", ExitCode::kUsage);
  if (o.buffer_kb == 0) throw Error("buffer size (-b) must be at least 1 KiB", ExitCode::kUsage);
  if (o.duration_s < 0 || !std::isfinite(o.duration_s))
    throw Error("duration (-N) must be a positive number of seconds", ExitCode::kUsage);
  if (o.output.empty()) throw Error("empty output file name (-o)", ExitCode::kUsage);
  if (o.no_defaults && o.events.empty())
    throw Error("--no-defaults needs at least one -e event", ExitCode::kUsage);
  for (int pid : o.pids)
    if (pid <= 0) throw Error(fmt::format("invalid pid {}", pid), ExitCode::kUsage);
  if (o.compression != "none" && o.compression != "zstd" && o.compression != "zlib")
    throw Error(fmt::format("unknown compression \"{}\": --compress takes zstd, zlib or none",
                            o.compression),
                ExitCode::kUsage);
  if (!o.counters.empty()) ParseEventList(o.counters);
  if (!o.virtual_counters.empty()) {
    for (const VirtualCounter& v : ParseVirtualList(o.virtual_counters))
      if (!v.per_thread())
        throw Error(fmt::format("record stores per-thread counters only; '{}' is system-wide (use "
                                "`cstool msa -V {}`)",
                                v.name, v.name),
                    ExitCode::kUsage);
  }
  if (o.counter_interval_s != 0 &&
      (!std::isfinite(o.counter_interval_s) || o.counter_interval_s < 0.01))
    throw Error("counter interval (-T) must be at least 0.01 seconds", ExitCode::kUsage);
  if (o.counter_interval_s != 0 && o.counters.empty() && o.virtual_counters.empty())
    throw Error("-T samples the counters: it goes with -c or -V", ExitCode::kUsage);
  if (o.children && o.pids.empty())
    throw Error("--children goes with -p PID (a -- CMD's children are always recorded)",
                ExitCode::kUsage);
}

}  // namespace cstool
