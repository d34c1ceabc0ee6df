// `cstool record`: records (recording/recorder.h) with the progress line, then tells
// the user how it went: the per-CPU table and the kernel's agreement.
#pragma once

#include <string>

#include "base/messages.h"
#include "recording/record_options.h"

namespace cstool {

// Records; returns the process exit status (the child's for `-- CMD`).
int RunRecord(const RecordOptions& options, Messages& messages);

// `record --dump [PID]`: asks the running flight recorder (the one with that pid when
// several run) for a dump (SIGUSR1). Returns the exit status.
int RunDump(int pid, Messages& messages);

// `record --recover FILE`: assembles FILE from what a killed recording left
// (recording/recovery.h). Returns the exit status.
int RunRecover(const std::string& file, Messages& messages);

}  // namespace cstool
