// `cstool report`: read a trace file, run the state machine and the report plugins
// over it, and render the result.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/report_exports.h"
#include "core/report_model.h"
#include "core/report_view.h"
#include "core/state_machine.h"
#include "plugins/plugin.h"

namespace cstool {

struct ReportOptions {
  std::string file = "cstool.dat";
  std::string format = "table";
  ViewOptions view;
  bool explain_anomalies = false;  // list each anomaly with its time, CPU and thread
  bool check = false;     // --check: compare with the kernel's counters (core/kernel_check.h)
  ExportOptions exports;  // --timeline, --html
  bool salvage = false;   // report what a damaged file still holds (ReaderOptions)
};

// Everything a report knows about a file, before selection and rendering.
// Members are declared so that what the model points into outlives it.
struct AnalyzedTrace {
  std::unique_ptr<StateMachine> machine;         // owns the threads the model points to
  std::vector<std::unique_ptr<Plugin>> plugins;  // own names the model points to (irqs)
  ReportModel model;
};

struct AnalyzeOptions {
  bool explain_anomalies = false;  // fill trace.anomaly_details
  bool salvage = false;            // report what a damaged file still holds (ReaderOptions)
  // Per-thread windows cut where the kernel's counters were sampled (ThreadReport::
  // kernel_window), which only `report --check` reads: a plugin call per state segment,
  // so only when asked for.
  bool kernel_windows = false;
  std::vector<Plugin*> extra_plugins;  // owned by the caller, run after the report's own
};

// Reads and analyses `file`. Throws cstool::Error for unreadable or corrupt files (with
// `salvage`: only when nothing can be read; the skipped damage is in trace.damage).
std::unique_ptr<AnalyzedTrace> AnalyzeTrace(const std::string& file, const SyscallTable& syscalls,
                                            const AnalyzeOptions& options = {});

// Returns the process exit status: 1 when --check found a disagreement.
int RunReport(const ReportOptions& options, std::ostream& out);

}  // namespace cstool
