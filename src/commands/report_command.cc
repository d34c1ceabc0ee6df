#include "commands/report_command.h"

#include <fmt/core.h>

#include <optional>

#include "analysis/report_view.h"
#include "base/errors.h"
#include "check/kernel_check.h"
#include "commands/report_exports.h"
#include "model/syscall_table.h"
#include "output/output.h"
#include "pipeline/analyze_trace.h"

namespace cstool {

int RunReport(const ReportOptions& options, std::ostream& out, Messages& messages) {
  std::unique_ptr<Output> output = MakeOutput(options.format, out);  // validate first
  SyscallTable syscalls;
  ReportExports exports(options.exports, options.view, syscalls);
  auto analyzed = AnalyzeTrace(options.file, syscalls,
                               {.explain_anomalies = options.explain_anomalies,
                                .salvage = options.salvage,
                                .counter_windows = options.check,
                                .extra_observers = exports.observers()});
  for (const std::string& d : analyzed->model.trace.damage)
    messages.Warning(fmt::format("salvaged: {}", d));
  ReportView view = BuildView(analyzed->model, syscalls, options.view);
  std::optional<KernelCheckResult> check;
  if (options.check) {
    check = CheckAgainstKernel(analyzed->model, view.threads);
    view.check = &*check;
  }
  output->Render(view);
  exports.Finish(view);
  return check && !check->passed() ? static_cast<int>(ExitCode::kFailure) : 0;
}

}  // namespace cstool
