#include "kernel/running_event_formats.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

#include "base/read_file.h"

namespace cstool {
namespace {

// A name from a file ends up in a path: nothing but the characters of event names.
bool IsEventName(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

}  // namespace

bool IsRunningKernelFormat(std::string_view system, std::string_view name, std::string_view text) {
  if (!IsEventName(system) || !IsEventName(name)) return false;
  // tracefs's own mount first, then where debugfs shows it on older systems.
  for (std::string_view root : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    std::optional<std::string> kernel =
        ReadWholeFile(fmt::format("{}/events/{}/{}/format", root, system, name));
    if (kernel) return *kernel == text;
  }
  return false;
}

}  // namespace cstool
