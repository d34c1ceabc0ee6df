#include "commands/record_command.h"

#include <fmt/core.h>

#include <algorithm>

#include "base/stop_signal.h"
#include "model/recording_info.h"
#include "pipeline/kernel_agreement.h"
#include "recording/progress_line.h"
#include "recording/recorder.h"
#include "recording/recovery.h"

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

}  // namespace

int RunRecord(const RecordOptions& options, Messages& messages) {
  RecordResult result;
  {
    ProgressLine progress(messages);
    result = Record(options, messages, &progress);
  }
  // The exit status is settled: Ctrl-C no longer cuts the summary (and its kernel
  // check, which analyses the whole file) short, as while recording.
  StopSignalScope signals;
  PrintSummary(messages, result);
  messages.Detail(fmt::format("  {}", KernelAgreementLine(result.path)));
  if (result.still_running_pid != 0)
    messages.Warning(fmt::format("command (pid {}) is still running", result.still_running_pid));
  return result.exit_status;
}

int RunRecover(const std::string& file, Messages& messages) {
  RecoveryResult r = RecoverRecording(file, messages);
  messages.Status(fmt::format(
      "recovered {:.1f} MiB of events on {} CPU{} into {} (killed while recording: no kernel "
      "counters, and the pages not yet written then are missing)",
      static_cast<double>(r.bytes) / (1024.0 * 1024.0), r.cpus, r.cpus == 1 ? "" : "s", file));
  return 0;
}

}  // namespace cstool
