// What `cstool diff` compares of one recording: its threads with their totals, labelled
// (syscall and cause names instead of numbers), so that recordings made on different
// kernels compare by name and the analysis behind them can be freed.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/report_model.h"
#include "analysis/report_view.h"
#include "model/microstate.h"

namespace cstool {

struct DiffThread {
  int32_t tid = 0;
  int32_t pid = 0;  // 0: the file does not tell the thread's process
  std::string comm;
  bool created_in_trace = false;  // its fork is in the trace (else it existed before)
  int64_t first_ts = 0;
  int64_t lifetime_ns = 0;
  MicrostateTimes microstates{};
  std::map<std::string, uint64_t> causes;        // switch cause label -> count
  std::map<std::string, SyscallStats> syscalls;  // syscall name -> stats
  std::map<std::string, IrqStats> irqs;          // interrupt name -> stats
};

struct DiffRecording {
  std::string file;
  std::vector<DiffThread> threads;
  std::vector<std::string> command;         // argv of `record -- CMD`, empty otherwise
  std::vector<std::string> missing_events;  // default events the file lacks
  bool recorded_by_cstool = false;          // its recording information is in the file
  // Why the file holds only part of its run (a flight recorder's dump, a recording cut
  // short or recovered after a kill), empty for a whole run; and whether that part is a
  // dump's window (dumps of one length compare like with like).
  std::string part_of_run;
  bool window_dump = false;
};

// The threads of `view` (its selection: the recorded workload, or all threads).
DiffRecording DiffRecordingOf(const ReportView& view, std::string file);

}  // namespace cstool
