// The running kernel's build configuration (/proc/config.gz, or /boot/config-<release>):
// what it counts in which clock depends on options no other file shows.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cstool {

// Pure parser of a kernel .config text: the value of `option` ("CONFIG_HZ" -> "250",
// "y", "m"); "n" for a "# CONFIG_X is not set" line; nullopt when the text lacks it.
std::optional<std::string> KernelConfigValue(std::string_view config, std::string_view option);

// The running kernel's .config text; nullopt when the kernel does not expose it.
std::optional<std::string> ReadRunningKernelConfig();

}  // namespace cstool
