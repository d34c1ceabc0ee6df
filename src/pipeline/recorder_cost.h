// What recording cost the recorded threads, said once in the report's notes: cstool's own
// threads (its loop that reads the buffers every 10 ms, its readers, its listener) run on
// the same CPUs, preempt the workload now and then, and hold CPUs its woken threads wait
// for. Those switches and waits are the workload's as the kernel counts them.
#pragma once

#include <string>

#include "analysis/report_model.h"

namespace cstool {

// Empty when no recorded thread was switched out for, or waited behind, a recorder thread.
std::string RecorderCostNote(const ReportModel& model);

}  // namespace cstool
