// `msa` and `irq` save their raw trace with -o, where `report` writes its output: a name
// that looks like a report's (out.json) gets a trace.dat, so the user is told.
#pragma once

#include <string_view>

#include "base/messages.h"

namespace cstool {

// Warns when `path` (the -o of a trace) ends like a report's output file.
void WarnIfSavedTraceLooksLikeOutput(std::string_view path, Messages& messages);

}  // namespace cstool
