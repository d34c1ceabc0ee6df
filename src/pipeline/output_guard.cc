#include "pipeline/output_guard.h"

#include <fmt/format.h>

#include <array>
#include <fstream>

#include "base/errors.h"
#include "format/trace_file_format.h"

namespace cstool {

void RefuseToOverwriteRecording(const std::string& path, std::string_view option) {
  std::ifstream in(path, std::ios::binary);
  std::array<char, tracefile::kTraceDatMagic.size()> head{};
  if (!in.read(head.data(), head.size())) return;  // absent, unreadable or short: no recording
  if (std::string_view(head.data(), head.size()) != tracefile::kTraceDatMagic) return;
  throw Error(fmt::format("{} {}: that is a recording (a trace.dat file), and an output never "
                          "replaces one: give the output a name of its own after {}",
                          option, path, option),
              ExitCode::kUsage);
}

}  // namespace cstool
