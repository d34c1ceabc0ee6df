// Kernel addresses to names with the kallsyms a trace file carries (record --stacks
// stores /proc/kallsyms as trace-cmd does; both readers load it into the tep_handle).
#pragma once

#include <cstdint>
#include <string>

struct tep_handle;

namespace cstool {

// "function+0xoffset" for `addr`, or "0x<addr>" when no symbol covers it (a file
// without kallsyms, or an address in a module loaded after the recording).
std::string KernelSymbol(tep_handle* tep, uint64_t addr);

}  // namespace cstool
