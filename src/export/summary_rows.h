// The export's per-trace and per-thread tables, written once the analysis is done: trace,
// process, thread, microstate, syscall, irq, kernel_check, lost_events. The same numbers
// as the JSON report (output/json_output.cc): its `threads` with --all-threads are the
// thread table (in_report marks the report's own selection), a thread's
// `microstates_ns`, `syscalls` and `irqs` its microstate, syscall and irq rows.
#pragma once

#include "analysis/report_view.h"
#include "check/kernel_check.h"
#include "export/row_sink.h"

namespace cstool {

// `report` is the report's selection (-p, -t, --all-threads); `check`, when not null, the
// kernel check of that selection (rows only when the recording carried the counters).
void WriteSummaryRows(const ReportView& report, const KernelCheckResult* check, RowSink& sink);

}  // namespace cstool
