// Reads the options section of a trace.dat v6 file (layout: core/trace_file_format.h),
// e.g. to get the cstool RecordingInfo JSON (option kOptionCstoolInfo) back.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cstool {

struct TraceFileOption {
  uint16_t id = 0;
  std::string payload;
};

// All options of a v6 file, in file order. Throws cstool::Error if the file is not a
// readable little-endian trace.dat v6 file.
std::vector<TraceFileOption> ReadTraceFileOptions(const std::filesystem::path& path);

// The payload of the first kOptionCstoolInfo option, if any.
std::optional<std::string> ReadCstoolInfoJson(const std::filesystem::path& path);

}  // namespace cstool
