#include "decode/kernel_symbols.h"

#include <fmt/format.h>
#include <traceevent/event-parse.h>

namespace cstool {

std::string KernelSymbol(tep_handle* tep, uint64_t addr) {
  const char* name = tep != nullptr ? tep_find_function(tep, addr) : nullptr;
  if (name == nullptr) return fmt::format("0x{:x}", addr);
  const unsigned long long start = tep_find_function_address(tep, addr);
  return fmt::format("{}+0x{:x}", name, addr - start);
}

}  // namespace cstool
