// `cstool report`: analyse a trace file (pipeline/analyze_trace.h), select and render
// the result in the chosen format, and compare it with the kernel's counters on --check.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include "analysis/report_view.h"
#include "base/messages.h"
#include "commands/report_exports.h"
#include "export/table_export.h"
#include "format/trace_file_reader.h"
#include "output/critical_path_output.h"

namespace cstool {

struct ReportOptions {
  std::string file = "cstool.dat";
  bool file_named = false;       // FILE was given (else a missing cstool.dat gets a hint)
  std::string format = "table";  // table, json, csv; sqlite and jsonl write `tables`
  TableExportOptions tables;     // -o, --host, --replace (format and path filled by RunReport)
  ViewOptions view;
  bool explain_anomalies = false;  // list each anomaly with its time, CPU and thread
  bool check = false;     // --check: compare with the kernel's counters (check/kernel_check.h)
  ExportOptions exports;  // --timeline, --html
  bool salvage = false;   // report what a damaged file still holds (ReaderOptions)
  ReaderBackend reader = ReaderBackend::kAuto;  // --reader
  std::string buffer;  // --buffer: the file's buffer instance to read ("": the default)
  int jobs = 0;        // -j: threads reading the file (0: as many as this process may run on)
  // --critical-path TID: print that thread's critical path instead of the tables, over
  // [--from, --to] in seconds from the trace start (negative: the thread's own start/end).
  int32_t critical_path_tid = 0;
  size_t critical_path_rows = kCriticalPathRows;  // --limit: its table's rows (0: all)
  double path_from_s = -1;
  double path_to_s = -1;
};

// Returns the process exit status: 1 when --check found a disagreement. With --format
// sqlite|jsonl the rows go to -o and a status line to `messages`, nothing to `out`. Throws
// cstool::Error (exit 1) when -p/-t select no thread, naming what the file holds.
// Warnings (what --salvage skipped) go to `messages`.
int RunReport(const ReportOptions& options, std::ostream& out, Messages& messages);

}  // namespace cstool
