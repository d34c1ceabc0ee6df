// `cstool report`: option parsing only; the work is in commands/report_command.
#include <charconv>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>

#include "cmd/commands.h"
#include "cmd/limit_option.h"
#include "cmd/reader_option.h"
#include "commands/report_command.h"

namespace cstool::cmd {

namespace {

// CLI11's PositiveNumber and NonNegativeNumber print their range, up to DBL_MAX in
// 310 digits; these say what the option takes.
CLI::Validator ThreadIdValidator() {
  return CLI::Validator(
      [](std::string& s) {
        int32_t v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        return ec == std::errc() && end == s.data() + s.size() && v > 0
                   ? std::string()
                   : "takes a thread id (a positive integer), not '" + s + "'";
      },
      "TID", "thread id");
}

CLI::Validator SecondsValidator() {
  return CLI::Validator(
      [](std::string& s) {
        double v = 0;
        return CLI::detail::lexical_cast(s, v) && v >= 0 && std::isfinite(v)
                   ? std::string()
                   : "takes seconds from the trace start (0 or more), not '" + s + "'";
      },
      "SECONDS", "seconds");
}

}  // namespace

RunFn SetupReport(CLI::App& sub) {
  auto opts = std::make_shared<ReportOptions>();
  CLI::Option* file =
      sub.add_option("file", opts->file, "Trace file (cstool or trace-cmd trace.dat v6/v7)")
          ->capture_default_str();
  sub.add_option("--format", opts->format,
                 "Output format: table, json, csv, sqlite or jsonl (the last two: tables for "
                 "query engines, into -o; cstool-export(5))")
      ->capture_default_str();
  sub.add_option("-o,--output", opts->tables.path,
                 "Write the report to this file instead of standard output; with --format "
                 "sqlite: the database to append to (created if missing), with jsonl: the "
                 "directory of .jsonl files");
  sub.add_option("--host", opts->tables.host,
                 "The host column of --format sqlite|jsonl rows (default: this machine's name)");
  sub.add_flag("--replace", opts->tables.replace,
               "--format sqlite|jsonl: if -o holds this trace already, replace its rows (else "
               "the export fails)");
  sub.add_option("-p,--pid", opts->view.pids,
                 "Only threads of these processes (repeatable or comma-separated; none "
                 "matching is an error)")
      ->allow_extra_args(false)  // `-p 12 FILE`: FILE is the file, not a second pid
      ->delimiter(',');
  sub.add_option("-t,--tid", opts->view.tids,
                 "Only these threads (repeatable or comma-separated; none matching is an error)")
      ->allow_extra_args(false)
      ->delimiter(',');
  sub.add_option("-s,--sort", opts->view.sort,
                 "Sort threads by: switches, voluntary, involuntary, lifetime, migrations, "
                 "before_migration (the wait before them), longest_wait (MAXWAIT, perf sched's "
                 "max delay), oncpu, wait, asleep, tid, pid, comm, a "
                 "microstate key (user, sys, sleep_futex, ...), or the table's column title (USR, "
                 "LATW, VCX, LIFE, ...; any case); largest time or count first (the time, not the "
                 "percentage shown), tid, pid and comm ascending")
      ->capture_default_str();
  sub.add_flag("--ms", opts->view.microstates_in_ms,
               "Show the table's microstate columns in milliseconds instead of % of each "
               "thread's lifetime (as perf sched latency shows times; JSON and CSV are in ns)");
  sub.add_flag("--tree", opts->view.tree,
               "Order processes as their tree (parents before children, siblings by creation) "
               "and threads by their process, instead of by --sort");
  sub.add_flag("--explain-anomalies", opts->explain_anomalies,
               "List every anomaly with its time, CPU and thread");
  sub.add_flag("--check", opts->check,
               "Compare with the kernel's own per-thread counters; exit 1 on disagreement");
  auto* timeline = sub.add_option(
      "--timeline", opts->exports.timeline,
      "Also write a Perfetto timeline to this file: protobuf when it ends in .pftrace, "
      ".perfetto-trace or .pb, else Chrome/Perfetto trace-event JSON");
  sub.add_option("--timeline-format", opts->exports.timeline_format,
                 "Format of the --timeline file: auto (by its extension), json, proto")
      ->check(CLI::IsMember({"auto", "json", "proto"}))
      ->needs(timeline)
      ->capture_default_str();
  auto* html =
      sub.add_option("--html", opts->exports.html,
                     "Also write a self-contained HTML page with barscopes and the tables");
  sub.add_option("--html-range", opts->exports.html_range,
                 "Draw only FROM:TO of the trace in the --html barscopes (seconds from the "
                 "trace start; either side may be empty)")
      ->needs(html);
  sub.add_flag("--salvage", opts->salvage,
               "Report what a damaged file still holds (stops or skips at the damage)");
  AddReaderOption(sub, opts->reader);
  AddBufferOption(sub, opts->buffer);
  AddJobsOption(sub, opts->jobs);
  auto* path = sub.add_option("--critical-path", opts->critical_path_tid,
                              "Print the critical path of thread TID instead of the tables: the "
                              "chain of wakers that explains its wall time")
                   ->check(ThreadIdValidator());
  sub.add_option("--from", opts->path_from_s,
                 "Start of the --critical-path interval, in seconds from the trace start "
                 "(default: the thread's first event)")
      ->check(SecondsValidator())
      ->needs(path);
  sub.add_option("--to", opts->path_to_s,
                 "End of the --critical-path interval, in seconds from the trace start "
                 "(default: the thread's end)")
      ->check(SecondsValidator())
      ->needs(path);
  AddLimitOption(sub, opts->critical_path_rows,
                 "Rows of the --critical-path table (0: all): the longest, in time order, "
                 "with the rows between folded into \"...\" lines")
      ->needs(path);
  sub.add_flag("--all-threads", opts->view.all_threads,
               "Also list threads outside the recorded workload");
  sub.footer(
      "Examples:\n"
      "  cstool report                        # cstool.dat, the tables\n"
      "  cstool report run.dat --check        # and how each thread agrees with the kernel\n"
      "  cstool report run.dat --format json -o run.json\n"
      "  cstool report run.dat --timeline run.pftrace --html run.html\n"
      "  cstool report run.dat --tree --ms\n"
      "  cstool report run.dat --critical-path 1234\n"
      "  cstool report run.dat --format sqlite -o fleet.db   # man 5 cstool-export\n"
      "  cstool report damaged.dat --salvage");
  return [opts, file](Messages& messages) {
    opts->file_named = file->count() > 0;
    return RunReport(*opts, std::cout, messages);
  };
}

}  // namespace cstool::cmd
