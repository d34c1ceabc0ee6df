// Outputs never replace a recording. `cstool report --timeline run.dat` (the output's name
// forgotten) takes the recording as the output and reads ./cstool.dat instead: the
// recording was overwritten, and the report was of another file.
#pragma once

#include <string>
#include <string_view>

namespace cstool {

// Throws a usage error when `path` is an existing trace.dat file; `option` names the
// output option that gave it ("--timeline", "-o").
void RefuseToOverwriteRecording(const std::string& path, std::string_view option);

}  // namespace cstool
