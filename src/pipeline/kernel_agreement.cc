#include "pipeline/kernel_agreement.h"

#include <fmt/core.h>

#include <exception>

#include "analysis/report_view.h"
#include "check/kernel_check.h"
#include "model/host_steal_text.h"
#include "model/syscall_table.h"
#include "pipeline/analyze_trace.h"
#include "sched/state_machine.h"

namespace cstool {

std::string KernelAgreementLine(const std::string& file) {
  try {
    SyscallTable syscalls;
    auto analyzed = AnalyzeTrace(file, syscalls, {.counter_windows = true});
    ReportView view = BuildView(analyzed->model, syscalls, ViewOptions{});
    KernelCheckResult check = CheckAgainstKernel(analyzed->model, view.threads);
    if (!check.has_counters)
      return fmt::format("kernel agrees: not checked ({})", check.no_counters_reason);
    if (check.compared == 0)  // "0/0 threads" read as a verdict
      return fmt::format(
          "kernel agrees: not checked (no thread could be compared: {} partial, {} with lost "
          "events, {} untraced, {} without counters)",
          check.partial, check.lost, check.untraced, check.no_counters);
    // With no thread's times compared (a recording of some CPUs only), "agrees" alone read
    // as a verdict on the times.
    std::string line = fmt::format("kernel agrees{}: {}/{} threads",
                                   check.TimesCompared() ? "" : " on switch counts only",
                                   check.agreeing, check.compared);
    if (check.partial + check.lost + check.untraced + check.no_counters > 0)
      line += fmt::format(" ({} partial, {} with lost events, {} untraced, {} without counters)",
                          check.partial, check.lost, check.untraced, check.no_counters);
    line += check.JudgedText() + check.DisagreeingText();
    if (check.times_disagree && check.host_steal_ns > 0)
      line += fmt::format(
          "; the host stole {} of CPU time meanwhile (up to that much of a time difference "
          "can be the host's, not the trace's)",
          StealMsText(analyzed->model.trace.recording, check.host_steal_ns));
    if (!check.passed()) line += check.MissingEventsText() + "; see cstool report --check";
    return line;
  } catch (const std::exception& e) {
    return fmt::format("kernel agrees: not checked ({})", e.what());
  }
}

}  // namespace cstool
