// The event formats the running kernel serves under tracefs (events/SYSTEM/NAME/format),
// compared with a file's: a file recorded on this kernel holds the very same texts.
#pragma once

#include <string_view>

namespace cstool {

// Whether `text` is byte for byte the running kernel's format of system:name. False
// when tracefs cannot be read (not mounted, not root) or names no such event. Reading
// it never mounts tracefs.
bool IsRunningKernelFormat(std::string_view system, std::string_view name, std::string_view text);

}  // namespace cstool
