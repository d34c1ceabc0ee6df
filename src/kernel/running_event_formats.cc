#include "kernel/running_event_formats.h"

#include <fmt/core.h>

#include <optional>
#include <string>

#include "base/read_file.h"
#include "base/text_fields.h"

namespace cstool {

bool IsRunningKernelFormat(std::string_view system, std::string_view name, std::string_view text,
                           std::string_view tracefs) {
  // The names come from a file and end up in a path.
  if (!IsEventName(system) || !IsEventName(name)) return false;
  const std::optional<std::string> kernel =
      ReadWholeFile(fmt::format("{}/events/{}/{}/format", tracefs, system, name));
  return kernel && *kernel == text;
}

}  // namespace cstool
