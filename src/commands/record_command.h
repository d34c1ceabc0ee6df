// `cstool record`: records (recording/recorder.h) with the progress line, then tells
// the user how it went: the per-CPU table and the kernel's agreement.
#pragma once

#include "base/messages.h"
#include "recording/record_options.h"

namespace cstool {

// Records; returns the process exit status (the child's for `-- CMD`).
int RunRecord(const RecordOptions& options, Messages& messages);

}  // namespace cstool
