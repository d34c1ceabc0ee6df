#include "recording/record_options.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "base/errors.h"
#include "counters/event_list.h"
#include "counters/virtual_counters.h"

namespace cstool {

uint64_t ParseByteSize(const std::string& text, const char* option) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  const std::string unit(end);
  double scale = 0;
  if (unit.empty() || unit == "B")
    scale = 1;
  else if (unit == "K" || unit == "KiB" || unit == "k")
    scale = 1024.0;
  else if (unit == "M" || unit == "MiB")
    scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "GiB")
    scale = 1024.0 * 1024 * 1024;
  if (end == text.c_str() || scale == 0 || !std::isfinite(value) || value * scale < 1)
    throw Error(fmt::format("{} '{}': expected a size such as 500M, 2G or 64K", option, text),
                ExitCode::kUsage);
  return static_cast<uint64_t>(value * scale);
}

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
  if (o.flight_s < 0 || !std::isfinite(o.flight_s))
    throw Error("--flight takes a positive number of seconds", ExitCode::kUsage);
  if (o.flight_s == 0 && (o.max_dumps != 0 || !o.trigger.empty() || o.dump_at_end))
    throw Error("--trigger, --max-dumps and --dump-at-end go with --flight SECS", ExitCode::kUsage);
  if (o.max_dumps < 0) throw Error("--max-dumps must be 0 (no limit) or more", ExitCode::kUsage);
  if (o.flight_s > 0 && o.max_size != 0)
    throw Error("--max-size limits a normal recording; a flight recorder writes only dumps",
                ExitCode::kUsage);
  if (o.kernel_stacks && o.no_defaults &&
      std::find(o.events.begin(), o.events.end(), "sched:sched_switch") == o.events.end() &&
      std::find(o.events.begin(), o.events.end(), "sched") == o.events.end())
    throw Error("--stacks needs sched:sched_switch (add -e sched:sched_switch)", ExitCode::kUsage);
  if (o.flight_s > 0 && (!o.counters.empty() || !o.virtual_counters.empty()))
    // A dump is the trace window only: counters would be read and never written.
    throw Error(
        "-c and -V go with a normal recording; a flight recorder's dumps carry no "
        "counters",
        ExitCode::kUsage);
  if (!o.counters.empty()) ParseEventList(o.counters);  // a bad list fails here, not later
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
