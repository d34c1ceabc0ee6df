// The analysis every command that reads a file shares (report, record's kernel check,
// irq): read the trace file, decode and merge its CPUs, run the state machine with the
// report's observers, and fill the report model.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "analysis/report_model.h"
#include "format/trace_file_reader.h"
#include "model/syscall_table.h"
#include "sched/observer.h"
#include "sched/state_machine.h"

namespace cstool {

// Everything a report knows about a file, before selection and rendering.
// Members are declared so that what the model points into outlives it.
struct AnalyzedTrace {
  std::unique_ptr<StateMachine> machine;             // owns the threads the model points to
  std::vector<std::unique_ptr<Observer>> observers;  // own names the model points to (irqs)
  ReportModel model;
};

struct AnalyzeOptions {
  bool explain_anomalies = false;  // fill trace.anomaly_details
  bool salvage = false;            // report what a damaged file still holds (ReaderOptions)
  ReaderBackend reader = ReaderBackend::kAuto;  // which trace.dat reader (ReaderOptions)
  std::string buffer;  // the buffer instance to read (ReaderOptions; "": the default one)
  // Threads reading the file (ReaderOptions); 0: as many as this process may run on.
  int jobs = 1;
  // Per-thread windows cut where the kernel's counters were sampled (ThreadReport::
  // counter_window), which only `report --check` reads: a observer call per state segment,
  // so only when asked for.
  bool counter_windows = false;
  std::vector<Observer*> extra_observers;  // owned by the caller, run after the report's own
  // Called once the file is open, before its first event is analysed, with its cstool
  // recording information (null for files cstool did not make).
  std::function<void(const RecordingInfo*)> on_open;
};

// The warning for a file whose records are damaged (ANOMALIES of severity error: records
// skipped or out of time order), which the tables alone would only list; empty if none.
std::string DamagedRecordsWarning(const TraceSummary& trace);

// Reads and analyses `file`. Throws cstool::Error for unreadable or corrupt files (with
// `salvage`: only when nothing can be read; the skipped damage is in trace.damage).
std::unique_ptr<AnalyzedTrace> AnalyzeTrace(const std::string& file, const SyscallTable& syscalls,
                                            const AnalyzeOptions& options = {});

}  // namespace cstool
