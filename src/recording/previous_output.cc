#include "recording/previous_output.h"

#include <fmt/core.h>

#include <array>
#include <fstream>
#include <string>
#include <string_view>

#include "base/errors.h"
#include "format/trace_file_format.h"

namespace cstool {
namespace {

// What KeepPreviousOutput would move or replace: a regular file with something in it.
bool HoldsSomething(const std::filesystem::path& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) > 0 &&
         !ec;
}

// Whether `path` starts as a trace.dat does (one this process cannot read is no recording
// it can vouch for).
bool IsRecording(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<char, 16> head{};
  in.read(head.data(), head.size());
  return std::string_view(head.data(), static_cast<size_t>(in.gcount()))
      .starts_with(tracefile::kTraceDatMagic);
}

}  // namespace

void CheckPreviousOutputCanBeKept(const std::filesystem::path& out) {
  if (!HoldsSomething(out)) return;
  if (!IsRecording(out))
    throw Error(fmt::format("-o {}: that file exists and is no recording, so it stays as it "
                            "is (only an earlier recording is moved aside, to {}.old): give the "
                            "output another name, or move the file away first",
                            out.string(), out.string()),
                ExitCode::kUsage);
  const std::filesystem::path old = out.string() + ".old";
  if (HoldsSomething(old) && !IsRecording(old))
    throw Error(fmt::format("-o {}: {} is no recording, and keeping the recording in {} as {} "
                            "would replace it: move it away first",
                            out.string(), old.string(), out.string(), old.string()),
                ExitCode::kUsage);
}

std::optional<std::filesystem::path> KeepPreviousOutput(const std::filesystem::path& out,
                                                        Messages& messages) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(out, ec) || std::filesystem::file_size(out, ec) == 0 || ec)
    return std::nullopt;
  std::filesystem::path old = out.string() + ".old";
  std::filesystem::rename(out, old, ec);
  if (ec)
    throw Error(fmt::format("cannot keep the previous {} as {}: {}", out.string(), old.string(),
                            ec.message()));
  messages.Status(fmt::format("the previous {} is kept as {}", out.string(), old.string()));
  return old;
}

}  // namespace cstool
