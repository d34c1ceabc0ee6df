#include "kernel/cpu_steal.h"

#include <unistd.h>

#include <charconv>
#include <fstream>
#include <sstream>

namespace cstool {

namespace {

// The next space-separated word of `line` from `*at` ("" at the end).
std::string_view NextWord(std::string_view line, size_t* at) {
  size_t i = line.find_first_not_of(' ', *at);
  if (i == std::string_view::npos) {
    *at = line.size();
    return {};
  }
  size_t end = line.find(' ', i);
  if (end == std::string_view::npos) end = line.size();
  *at = end;
  return line.substr(i, end - i);
}

template <typename T>
bool ParseWhole(std::string_view s, T* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

std::vector<CpuStealReading> ParseCpuSteal(std::string_view proc_stat, int64_t ns_per_tick) {
  // cpuN user nice system idle iowait irq softirq steal guest guest_nice
  constexpr int kStealColumn = 8;
  std::vector<CpuStealReading> out;
  size_t pos = 0;
  while (pos < proc_stat.size()) {
    size_t eol = proc_stat.find('\n', pos);
    if (eol == std::string_view::npos) eol = proc_stat.size();
    const std::string_view line = proc_stat.substr(pos, eol - pos);
    pos = eol + 1;
    size_t at = 0;
    const std::string_view name = NextWord(line, &at);
    int32_t cpu = 0;
    if (!name.starts_with("cpu") || !ParseWhole(name.substr(3), &cpu)) continue;
    std::string_view word;
    for (int column = 1; column <= kStealColumn; ++column) word = NextWord(line, &at);
    uint64_t ticks = 0;
    if (!ParseWhole(word, &ticks)) continue;
    out.push_back({cpu, static_cast<int64_t>(ticks) * ns_per_tick});
  }
  return out;
}

int64_t StealTickNs() {
  const long hz = ::sysconf(_SC_CLK_TCK);
  return hz > 0 ? 1000000000 / hz : 10000000;
}

std::vector<CpuStealReading> ReadCpuSteal(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::stringstream text;
  text << in.rdbuf();
  return ParseCpuSteal(text.str(), StealTickNs());
}

std::vector<CpuSteal> PairSteal(const std::vector<CpuStealReading>& start,
                                const std::vector<CpuStealReading>& end) {
  std::vector<CpuSteal> out;
  for (const CpuStealReading& s : start)
    for (const CpuStealReading& e : end)
      if (e.cpu == s.cpu) out.push_back({s.cpu, s.steal_ns, e.steal_ns});
  return out;
}

}  // namespace cstool
