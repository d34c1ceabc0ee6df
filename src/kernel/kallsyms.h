// Kernel symbol addresses from /proc/kallsyms (readable with real addresses by root
// unless kernel.kptr_restrict forbids it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cstool {

// The address of text symbol `name`, or nullopt when absent or hidden (shown as 0).
std::optional<uint64_t> KernelSymbolAddress(std::string_view name,
                                            const std::string& path = "/proc/kallsyms");

}  // namespace cstool
