// The event formats the running kernel serves under tracefs (events/SYSTEM/NAME/format),
// compared with a file's: a file recorded on this kernel holds the very same texts.
#pragma once

#include <string_view>

namespace cstool {

// Where tracefs is mounted. Not its older place under debugfs: reading there mounts it.
inline constexpr std::string_view kTracefsRoot = "/sys/kernel/tracing";

// Whether `text` is byte for byte the running kernel's format of system:name, as
// `tracefs` (a test's own folder) serves it. False when it cannot be read (not
// mounted, not root) or names no such event.
bool IsRunningKernelFormat(std::string_view system, std::string_view name, std::string_view text,
                           std::string_view tracefs = kTracefsRoot);

}  // namespace cstool
