#include "commands/record_command.h"

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

#include "base/errors.h"
#include "base/stop_signal.h"
#include "commands/record_trigger.h"
#include "decode/decode_trace.h"
#include "format/trace_file_reader.h"
#include "model/recording_info.h"
#include "pipeline/kernel_agreement.h"
#include "pipeline/lost_events.h"
#include "recording/flight_recorders.h"
#include "recording/progress_line.h"
#include "recording/recorder.h"
#include "recording/recovery.h"
#include "tracefs/tracefs_session.h"

namespace cstool {
namespace {

uint64_t LostOf(const CpuRecordStats& s) {
  // Overwritten events show up both in the pages' missed counts and in "overrun".
  return std::max(s.lost_events, s.overrun) + s.dropped;
}

void PrintSummary(Messages& messages, const RecordResult& r) {
  const RecordingInfo& info = r.info;
  uint64_t total = 0, lost = 0;
  for (const auto& c : info.cpus) {
    total += c.events;
    lost += LostOf(c);
  }
  messages.Status(
      fmt::format("wrote {} ({}) in {:.3f} s", r.path, HumanBytes(r.file_size), r.seconds));
  messages.Detail(fmt::format("  {:>5} {:>12} {:>10} {:>10} {:>10} {:>10}", "cpu", "events", "lost",
                              "lost-pages", "overrun", "dropped"));
  for (const auto& c : info.cpus)
    messages.Detail(fmt::format("  {:>5} {:>12} {:>10} {:>10} {:>10} {:>10}", c.cpu, c.events,
                                LostOf(c), c.lost_pages, c.overrun, c.dropped));
  messages.Detail(fmt::format("  total {} events, {:.0f} events/s, lost {} events", total,
                              r.seconds > 0 ? total / r.seconds : 0.0, lost));
  for (const auto& c : info.cpus) {
    if (c.lost_pages > 0 || LostOf(c) > 0)
      messages.Warning(fmt::format("events were lost on CPU {}; try a bigger buffer (-b)", c.cpu));
  }
}

// How the `-- CMD` child ended, when not with status 0 (then cstool's own exit status is
// that status, or 128 + the signal, and the summary says why), or that the recording's end
// ended it (then the status is timeout(1)'s).
void PrintChildEnding(Messages& messages, const RecordResult& result) {
  const ChildCounters& child = result.info.child;
  if (result.command_timed_out) {
    messages.Status(fmt::format(
        "the command was still running at the end: sent SIGTERM as timeout(1) does (exit "
        "status {}, as timeout's){}",
        kCommandTimedOut,
        child.reaped && child.wait_status != 0 && WIFEXITED(child.wait_status)
            ? fmt::format("; it exited with status {}", WEXITSTATUS(child.wait_status))
            : ""));
    return;
  }
  if (!child.reaped || child.wait_status == 0) return;
  const int status = child.wait_status;
  if (WIFSIGNALED(status))
    messages.Status(fmt::format("the command was ended by signal {} ({})", WTERMSIG(status),
                                ::strsignal(WTERMSIG(status))));
  else if (WIFEXITED(status))
    messages.Status(fmt::format("the command exited with status {}", WEXITSTATUS(status)));
}

// --flight: what was dumped; the kernel check needs a whole run, a dump is a window.
void PrintFlightSummary(Messages& messages, const RecordResult& r) {
  if (r.dumps_not_written > 0)
    messages.Warning(fmt::format("{} dump{} asked for could not be written (see above)",
                                 r.dumps_not_written, r.dumps_not_written == 1 ? "" : "s"));
  if (r.dumps.empty()) {
    messages.Status(fmt::format(
        "flight recorder: no dump in {:.3f} s (nothing written: dumps are taken when --trigger "
        "holds, on `cstool record --dump`, and at the end with --dump-at-end)",
        r.seconds));
    return;
  }
  messages.Status(fmt::format("flight recorder: {} dump{} in {:.3f} s: {}", r.dumps.size(),
                              r.dumps.size() == 1 ? "" : "s", r.seconds, fmt::join(r.dumps, ", ")));
}

}  // namespace

int RunRecord(const RecordOptions& options, Messages& messages) {
  std::unique_ptr<LiveTrigger> trigger;
  if (!options.trigger.empty()) trigger = MakeStateTrigger(options.trigger);
  RecordResult result;
  {
    ProgressLine progress(messages);
    result = Record(options, messages, &progress, trigger.get());
  }
  if (options.flight_s > 0) {
    PrintFlightSummary(messages, result);
    PrintChildEnding(messages, result);  // --max-dumps ends it like -N
    if (result.still_running_pid != 0)
      messages.Warning(fmt::format("command (pid {}) is still running", result.still_running_pid));
    return result.exit_status;
  }
  // The exit status is settled: Ctrl-C no longer cuts the summary (and its kernel
  // check, which analyses the whole file) short, as while recording.
  StopSignalScope signals;
  PrintSummary(messages, result);
  PrintChildEnding(messages, result);
  if (!result.info.ended_early.empty())
    messages.Warning(fmt::format("the recording stopped early: {}; {} is complete up to then",
                                 result.info.ended_early, result.path));
  messages.Detail(fmt::format("  {}", KernelAgreementLine(result.path)));
  if (result.still_running_pid != 0)
    messages.Warning(fmt::format("command (pid {}) is still running", result.still_running_pid));
  return result.exit_status;
}

int RunDump(int pid, Messages& messages) {
  // A flight recorder is found by its tracefs instance, which only who may trace can see
  // (a dump is no tracing of one's own: the error says what needs the rights).
  TracefsSession::CheckAccess(
      "--dump needs root, as the flight recorder does: it finds the recorder by its tracefs "
      "instance and signals it; run it as root, e.g. with sudo");
  std::vector<FlightRecorderProcess> running = RunningFlightRecorders();
  const FlightRecorderProcess* target = nullptr;
  for (const FlightRecorderProcess& r : running)
    if (pid == 0 || r.pid == pid) target = &r;
  // None running is the machine's state (exit 1), whichever pid was named; a pid that
  // is not one of those running is a wrong argument (usage).
  if (running.empty() && pid == 0)
    throw Error("no flight recorder is running (cstool record --flight SECS ...)");
  if (running.empty())
    throw Error(
        fmt::format("pid {} is not a flight recorder: none is running (cstool record "
                    "--flight SECS ...)",
                    pid));
  if (target == nullptr)
    throw Error(fmt::format("cstool pid {} is not a running flight recorder", pid),
                ExitCode::kUsage);
  if (pid == 0 && running.size() > 1) {
    std::string list;
    for (const FlightRecorderProcess& r : running)
      list += fmt::format("\n  {}: {}", r.pid, r.command_line);
    throw Error(fmt::format("{} flight recorders are running; name one with --dump PID:{}",
                            running.size(), list),
                ExitCode::kUsage);
  }
  if (::kill(target->pid, SIGUSR1) != 0)
    throw Error(fmt::format("cannot signal cstool pid {}: {}", target->pid, std::strerror(errno)));
  messages.Status(fmt::format("asked the flight recorder (cstool pid {}: {}) for a dump",
                              target->pid, target->command_line));
  return 0;
}

namespace {

// What a recovered file holds, as report will count it: its events, and what the ring
// buffers lost (a killed recording's last pages may end in a loss of unknown size, which
// counts as one). One pass over the file's records, without decoding them.
std::string RecoveredContents(const std::string& file) {
  try {
    auto reader = OpenTraceFile(file);
    EventSink counted_only;
    DecodeOptions options;
    options.decode = false;
    const DecodeStats stats = DecodeTrace(*reader, counted_only, options);
    uint64_t total = 0;
    std::vector<std::string> per_cpu;
    bool at_least = false;
    for (auto [cpu, n] : LostEventsPerCpu(stats, *reader, &at_least)) {
      total += n;
      if (n > 0) per_cpu.push_back(fmt::format("cpu{} {}", cpu, n));
    }
    return fmt::format("{} holds {} events; lost {}{} events{}", file, stats.events,
                       at_least ? "at least " : "", total,
                       per_cpu.empty() ? "" : fmt::format(" ({})", fmt::join(per_cpu, ", ")));
  } catch (const Error& e) {
    return fmt::format(
        "{} could not be read through to count its events ({}); `cstool report "
        "{} --salvage` reads what it can",
        file, e.what(), file);
  }
}

// `record --recover` run again on the file it made: no note is left, and the file says
// it was recovered (else RecoverRecording says what is missing).
bool RecoveredAlready(const std::string& file) {
  std::error_code ec;
  if (std::filesystem::exists(RecoveryNoteFor(file), ec) || !std::filesystem::exists(file, ec))
    return false;
  try {
    const auto reader = OpenTraceFile(file);
    return reader->recording_info() && reader->recording_info()->recovered;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

int RunRecover(const std::string& file, Messages& messages) {
  if (RecoveredAlready(file))
    throw Error(fmt::format("nothing to recover: '{}' was recovered already (`cstool report {}` "
                            "reads it)",
                            file, file),
                ExitCode::kUsage);
  RecoveryResult r = RecoverRecording(file, messages);
  // In KiB below a MiB: a small recording's "0.0 MiB" read as nothing recovered.
  auto size = [](uint64_t bytes) {
    const double kib = static_cast<double>(bytes) / 1024.0;
    return kib < 1024.0 ? fmt::format("{:.1f} KiB", kib) : fmt::format("{:.1f} MiB", kib / 1024.0);
  };
  if (r.ended) {
    messages.Status(
        fmt::format("recovered {} of events on {} CPU{} into {} (the recording had "
                    "ended and only writing the file had failed: nothing is missing)",
                    size(r.bytes), r.cpus, r.cpus == 1 ? "" : "s", file));
    messages.Status(RecoveredContents(file));
    return 0;
  }
  const std::string unread =
      r.drained_bytes == 0 ? std::string()
                           : fmt::format(", {} of them unread in the killed recorder's buffers",
                                         size(r.drained_bytes));
  messages.Status(
      fmt::format("recovered {} of events on {} CPU{} into {}{} (the recording did not end: no "
                  "kernel counters, and {} is missing)",
                  size(r.bytes + r.drained_bytes), r.cpus, r.cpus == 1 ? "" : "s", file, unread,
                  r.drained ? "what it had read but not yet written"
                            : "what it had not yet written (its tracefs instance was not there "
                              "to read)"));
  messages.Status(RecoveredContents(file));
  return 0;
}

}  // namespace cstool
