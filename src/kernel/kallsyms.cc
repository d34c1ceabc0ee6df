#include "kernel/kallsyms.h"

#include <fstream>
#include <sstream>

namespace cstool {

std::optional<uint64_t> KernelSymbolAddress(std::string_view name, const std::string& path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    // "ffffffff8157b6e0 t perf_swevent_hrtimer" (modules add "\t[module]").
    std::istringstream fields(line);
    std::string addr, type, sym;
    if (!(fields >> addr >> type >> sym) || sym != name) continue;
    uint64_t v = std::strtoull(addr.c_str(), nullptr, 16);
    if (v == 0) return std::nullopt;
    return v;
  }
  return std::nullopt;
}

}  // namespace cstool
