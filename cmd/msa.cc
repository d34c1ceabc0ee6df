// `cstool msa`: option parsing only; the work is in commands/msa_command.
#include <unistd.h>

#include <iostream>
#include <memory>

#include "cmd/commands.h"
#include "cmd/duration_option.h"
#include "commands/msa_command.h"
#include "counters/event_list.h"

namespace cstool::cmd {

RunFn SetupMsa(CLI::App& sub) {
  auto options = std::make_shared<MsaOptions>();
  sub.add_option("pid", options->pid, "Process to watch (its threads and the tasks it creates)")
      ->required();
  sub.add_option("-T,--interval", options->interval_s,
                 "Seconds per interval (fractions allowed), or with a unit (200ms)")
      ->transform(SecondsOfDuration)
      ->type_name("DURATION")
      ->capture_default_str();
  sub.add_option("-n,--count", options->count, "Stop after this many intervals (0: no limit)")
      ->capture_default_str();
  sub.add_flag("-A,--processes", options->per_process, "One row per process instead of per thread");
  sub.add_flag("--children", options->children,
               "Also the process's existing descendants (its later forks are always followed)");
  sub.add_option("--format", options->format, "Output format: table or json (JSON lines)")
      ->capture_default_str();
  sub.add_option("-o,--output", options->output,
                 "Also save the raw trace to this file (trace.dat v6, for cstool report)");
  sub.add_option("-c,--counters", options->counters,
                 "Per-thread counters as columns: perf events, comma-separated (" +
                     KnownEventsText() +
                     "); EVENT:ebs=N also prints a sample row every N events of EVENT");
  sub.add_option("-V,--virtual-counters", options->virtual_counters,
                 "Virtual counters as columns: read-bytes, write-bytes (per thread, from "
                 "/proc), energy (RAPL package energy of the machine)");
  sub.footer(
      "Examples:\n"
      "  cstool msa 1234\n"
      "  cstool msa $(pgrep -n server) -T 0.5 -n 4 --format json\n"
      "  cstool msa 1234 -c task-clock,page-faults,context-switches -V write-bytes\n"
      "Stops when the process exits (printing totals), after -n intervals, or on "
      "SIGINT/SIGTERM/SIGHUP.");
  return [options](Messages& messages) -> int {
    return RunMsa(*options, std::cout, ::isatty(STDOUT_FILENO) == 1, messages);
  };
}

}  // namespace cstool::cmd
