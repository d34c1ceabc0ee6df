#include "recording/previous_output.h"

#include <fmt/core.h>

#include <string>

#include "base/errors.h"

namespace cstool {

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
