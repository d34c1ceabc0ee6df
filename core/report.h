// `cstool report`: read a trace file, run the state machine and the report plugins
// over it, and render the result.
#pragma once

#include <ostream>
#include <string>

#include "core/report_model.h"
#include "core/report_view.h"
#include "core/state_machine.h"

namespace cstool {

struct ReportOptions {
  std::string file = "cstool.dat";
  std::string format = "table";
  ViewOptions view;
  bool explain_anomalies = false;  // list each anomaly with its time, CPU and thread
  bool salvage = false;            // report what a damaged file still holds (ReaderOptions)
};

// Everything a report knows about a file, before selection and rendering.
struct AnalyzedTrace {
  ReportModel model;
  std::unique_ptr<StateMachine> machine;  // owns the threads the model points to
};

// Reads and analyses `file`. Throws cstool::Error for unreadable or corrupt files
// (with `salvage`: only when nothing can be read; the skipped damage is in trace.damage).
std::unique_ptr<AnalyzedTrace> AnalyzeTrace(const std::string& file, const SyscallTable& syscalls,
                                            bool explain_anomalies = false, bool salvage = false);

// Returns the process exit status.
int RunReport(const ReportOptions& options, std::ostream& out);

}  // namespace cstool
