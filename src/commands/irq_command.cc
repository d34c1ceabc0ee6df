#include "commands/irq_command.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "base/cpu_list.h"
#include "base/errors.h"
#include "base/stop_signal.h"
#include "base/temp_file.h"
#include "interrupts/irq_affinity.h"
#include "interrupts/proc_interrupts.h"
#include "output/irq_output.h"
#include "pipeline/irq_analysis.h"
#include "recording/progress_line.h"
#include "recording/recorder.h"
#include "recording/saved_trace_name.h"

namespace cstool {
namespace {

int RunAffinity(const IrqOptions& options, IrqOutput& output) {
  if (options.assignments.empty()) {
    ProcInterrupts pi = ReadProcInterrupts();
    output.RenderAffinity(pi.cpus, ReadIrqAffinities());
    return 0;
  }
  std::vector<AffinityRequest> requests;
  for (const std::string& a : options.assignments) requests.push_back(ParseAffinityRequest(a));
  // Said once, rather than as every IRQ's refusal (ERANGE): a CPU the machine cannot have,
  // or a list with no CPU online. (The kernel takes a list with some CPUs offline.)
  const std::vector<int> online = OnlineCpus();
  const std::vector<int> possible = PossibleCpus();
  auto in = [](const std::vector<int>& cpus, int c) {
    return std::find(cpus.begin(), cpus.end(), c) != cpus.end();
  };
  for (const AffinityRequest& r : requests) {
    for (int c : r.cpus)
      if (!in(possible, c))
        throw Error(fmt::format("there is no CPU {} (this machine's CPUs: {}; online: {})", c,
                                FormatCpuList(possible), FormatCpuList(online)),
                    ExitCode::kUsage);
    if (std::none_of(r.cpus.begin(), r.cpus.end(), [&](int c) { return in(online, c); }))
      throw Error(fmt::format("none of CPUs {} is online (online: {})", FormatCpuList(r.cpus),
                              FormatCpuList(online)),
                  ExitCode::kUsage);
  }
  if (::geteuid() != 0)
    throw Error("moving IRQs needs root privileges (writes /proc/irq/N/smp_affinity_list)",
                ExitCode::kUsage);
  AffinityChangeResult result = ApplyAffinity(requests);
  output.RenderAffinityChange(result);
  for (const AffinityChange& c : result.changes)
    if (c.outcome == AffinityOutcome::kMoved || c.outcome == AffinityOutcome::kUnchanged) return 0;
  return static_cast<int>(ExitCode::kFailure);  // nothing could be applied
}

}  // namespace

int RunIrq(const IrqOptions& options, std::ostream& out, Messages& messages) {
  std::unique_ptr<IrqOutput> output = MakeIrqOutput(options.format, out);  // validate first
  if (!options.assignments.empty() && !options.affinity)
    throw Error(fmt::format("unexpected argument '{}' (IRQ=CPUS goes with --affinity)",
                            options.assignments.front()),
                ExitCode::kUsage);
  if (options.affinity) return RunAffinity(options, *output);
  WarnIfSavedTraceLooksLikeOutput(options.output, messages);
  if (!(options.period_s > 0) || !std::isfinite(options.period_s))
    throw Error("--period must be a positive number of seconds", ExitCode::kUsage);

  RecordOptions record;
  record.system_wide = true;
  record.exclude_self = false;  // every interrupt on a traced CPU counts
  record.event_set = EventSet::kInterrupts;
  record.cpus = options.cpus;
  record.duration_s = options.duration_s;
  record.buffer_kb = options.buffer_kb;
  std::optional<TempFile> temp;
  // With a temporary trace, a signal must not end the process before the file goes: one
  // while recording stops the recording (Record's own scope), one while analysing stops
  // the report once the analysis returns.
  std::optional<StopSignalScope> keeps_temp;
  if (options.output.empty()) {
    keeps_temp.emplace();
    temp.emplace("cstool-irq-", ".dat");
    record.output = temp->path();
  } else {
    record.output = options.output;
  }
  ValidateRecordOptions(record);
  // The progress line, but no per-CPU table: the summary says what was lost, per CPU.
  RecordResult recorded;
  {
    ProgressLine progress(messages);
    recorded = Record(record, messages, &progress);
  }
  if (recorded.exit_status != 0) return recorded.exit_status;

  std::vector<int32_t> cpus(options.cpus.begin(), options.cpus.end());
  if (cpus.empty())
    for (int c : OnlineCpus()) cpus.push_back(c);
  IrqNoiseOptions noise{.period_ns = static_cast<int64_t>(options.period_s * 1e9)};
  std::optional<StopSignalScope> analysing;  // from here a signal stops the report
  if (temp) analysing.emplace();
  IrqReport report = AnalyzeIrqTrace(record.output, cpus, options.noise ? &noise : nullptr);
  if (const int sig = analysing ? StopSignalScope::Received() : 0) return 128 + sig;
  report.file = options.output;
  if (options.noise)
    output->RenderNoise(report);
  else
    output->RenderSummary(report);
  return 0;
}

}  // namespace cstool
