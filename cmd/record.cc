// `cstool record`: option parsing only; the work is in commands/record_command.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "base/cpu_list.h"
#include "base/errors.h"
#include "cmd/commands.h"
#include "cmd/duration_option.h"
#include "commands/record_command.h"
#include "counters/event_list.h"

namespace cstool::cmd {

RunFn SetupRecord(CLI::App& sub) {
  auto options = std::make_shared<RecordOptions>();
  auto cpu_list = std::make_shared<std::string>();
  sub.add_option("-o,--output", options->output,
                 "Output file (trace-cmd trace.dat: v7 compressed, v6 with --compress=none)")
      ->capture_default_str();
  // A bare --compress means the default, zstd (the callback below fills it in).
  CLI::Option* compress =
      sub.add_option("--compress", options->compression,
                     "Compression of the per-CPU data, done while recording: zstd (the "
                     "default), zlib, or none (trace.dat v6 with the raw pages)")
          ->expected(0, 1)
          ->type_name("[=ALGO]");
  sub.add_option("-b,--buffer-size", options->buffer_kb, "Ring buffer size per CPU in KiB")
      ->capture_default_str();
  sub.add_flag("-a,--all", options->system_wide, "Trace every task, not just the targets");
  sub.add_option("-C,--cpus", *cpu_list, "CPUs to trace, e.g. 0,1 or 0-3 (default: all)");
  sub.add_option("-p,--pid", options->pids,
                 "Attach to this process and its threads (repeatable or comma-separated)")
      ->allow_extra_args(false)
      ->delimiter(',');
  sub.add_flag("--children", options->children,
               "With -p: also the processes' existing descendants (later forks are followed "
               "anyway)");
  CLI::Option* duration = AddDurationOption(
      sub, options->duration_s,
      "Stop after this many seconds, > 0 (or with a unit: 300ms, 2s), sending a command still "
      "running SIGTERM and exiting 124, as timeout(1) does (omit -N to stop when the command "
      "exits or on Ctrl-C)");
  sub.add_option(
         "-e,--event", options->events,
         "Also record SYSTEM:EVENT, a whole SYSTEM, or an event by its bare name (repeatable)")
      ->allow_extra_args(false);
  sub.add_flag("--no-defaults", options->no_defaults,
               "Record only the -e events, not the default set");
  sub.add_option("--flight", options->flight_s,
                 "Flight recorder: keep only the last SECS seconds (or a duration with its "
                 "unit: 500ms) in memory and write them on a trigger (SIGUSR1, record --dump, "
                 "--trigger) as OUTPUT.N")
      ->transform(SecondsOfDuration)
      ->type_name("SECS")
      ->check(CLI::Validator(
          [](const std::string& value) -> std::string {
            char* end = nullptr;
            const double secs = std::strtod(value.c_str(), &end);
            return end != value.c_str() && *end == '\0' && secs > 0
                       ? ""
                       : "takes a positive number of seconds (or a duration with its "
                         "unit: 500ms)";
          },
          "SECS > 0"));
  sub.add_option("--trigger", options->trigger,
                 "With --flight: dump when a target thread spends longer than a time in a "
                 "state, e.g. 'sleep>100ms', 'wait_cpu>5ms', 'sleep:futex>50ms' ('>=': at "
                 "least)")
      ->type_name("COND");
  sub.add_option("--max-dumps", options->max_dumps,
                 "With --flight: end the recording after N dumps, as -N does (default 0: no "
                 "limit)")
      ->type_name("N");
  sub.add_flag("--dump-at-end", options->dump_at_end,
               "With --flight: also dump the last window when the recording ends (the "
               "command's end, -N, Ctrl-C)");
  auto max_size = std::make_shared<std::string>();
  sub.add_option("--max-size", *max_size,
                 "Stop cleanly when the file would grow past SIZE (e.g. 500M, 2G); the file "
                 "is complete up to then")
      ->type_name("SIZE");
  auto dump_pid = std::make_shared<int>(0);
  CLI::Option* dump_option =
      sub.add_option("--dump", *dump_pid,
                     "Ask the running flight recorder (cstool pid PID when several run) for a "
                     "dump, and exit")
          ->expected(0, 1)
          ->check(CLI::NonNegativeNumber.description(""))
          ->type_name("[=PID]");
  sub.add_flag("--stacks", options->kernel_stacks,
               "Record the kernel call chain of every sleep (a stacktrace trigger on "
               "sched_switch) and kallsyms: report names where each thread blocked");
  auto recover = std::make_shared<std::string>();
  CLI::Option* recover_option =
      sub.add_option("--recover", *recover,
                     "Assemble FILE from what a recording into it left when it was killed")
          ->type_name("FILE");
  CLI::Option* command =
      sub.add_option("command", options->command, "Command to run and trace (after --)");
  for (const char* name : {"--pid", "--all", "--children", "--event", "--no-defaults", "--cpus",
                           "--compress", "--stacks"})
    recover_option->excludes(sub.get_option(name));
  recover_option->excludes(command);
  recover_option->excludes(duration);
  sub.add_option("-c,--counters", options->counters,
                 "Per-thread counters stored with the trace: perf events, comma-separated (" +
                     KnownEventsText() +
                     "); EVENT:ebs=N also stores a sample every N events of EVENT");
  sub.add_option("-V,--virtual-counters", options->virtual_counters,
                 "Per-thread virtual counters stored with the trace: read-bytes, write-bytes "
                 "(from /proc/PID/task/TID/io)");
  sub.add_option("-T,--counter-interval", options->counter_interval_s,
                 "Also sample the counters every this many seconds, or with a unit (200ms) "
                 "(default: at the start and at each thread's exit or the end)")
      ->transform(SecondsOfDuration)
      ->type_name("DURATION");
  for (const char* name :
       {"--pid", "--all", "--children", "--event", "--no-defaults", "--cpus", "--compress",
        "--flight", "--trigger", "--max-dumps", "--dump-at-end", "--max-size", "--recover"})
    dump_option->excludes(sub.get_option(name));
  dump_option->excludes(command);
  dump_option->excludes(duration);
  sub.footer(
      "Examples:\n"
      "  cstool record -- ./server --port 8080\n"
      "  cstool record -c task-clock,page-faults,context-switches -V write-bytes -- ./prog\n"
      "  cstool record -p 1234 -N 10 -o server.dat\n"
      "  cstool record -a -C 0 -N 2.5\n"
      "  cstool record --recover trace.dat   # after the recorder was killed\n"
      "  cstool record --flight 10 --trigger 'sleep>100ms' -p 1234   # dumps cstool.dat.1, ...\n"
      "  cstool record --dump                # from another shell: dump the flight window now\n"
      "Stops when the command exits, after -N seconds, or on SIGINT/SIGTERM/SIGHUP.");
  return [options, cpu_list, duration, recover, compress, max_size, dump_option,
          dump_pid](Messages& messages) -> int {
    if (!recover->empty()) return RunRecover(*recover, messages);
    if (dump_option->count() > 0) return RunDump(*dump_pid, messages);
    if (!max_size->empty()) options->max_size = ParseByteSize(*max_size, "--max-size");
    if (compress->count() > 0 && options->compression.empty()) options->compression = "zstd";
    CheckDuration(*duration, options->duration_s,
                  "record until the command exits (or, with -p or -a, until Ctrl-C)");
    if (!cpu_list->empty()) options->cpus = ParseCpuList(*cpu_list);
    return RunRecord(*options, messages);
  };
}

}  // namespace cstool::cmd
