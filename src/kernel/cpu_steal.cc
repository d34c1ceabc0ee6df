#include "kernel/cpu_steal.h"

#include <unistd.h>

#include "base/read_file.h"
#include "base/split_list.h"
#include "base/text_fields.h"

namespace cstool {

std::vector<CpuStealReading> ParseCpuSteal(std::string_view proc_stat, int64_t ns_per_tick) {
  // cpuN user nice system idle iowait irq softirq steal guest guest_nice
  constexpr int kStealColumn = 8;
  std::vector<CpuStealReading> out;
  for (std::string_view line : SplitList(proc_stat, '\n')) {
    const std::string_view name = NextToken(line);
    int32_t cpu = 0;
    if (!name.starts_with("cpu") || !ParseNumber(name.substr(3), &cpu)) continue;
    std::string_view word;
    for (int column = 1; column <= kStealColumn; ++column) word = NextToken(line);
    uint64_t ticks = 0;
    if (!ParseNumber(word, &ticks)) continue;
    out.push_back({cpu, static_cast<int64_t>(ticks) * ns_per_tick});
  }
  return out;
}

int64_t StealTickNs() {
  const long hz = ::sysconf(_SC_CLK_TCK);
  return hz > 0 ? 1000000000 / hz : 10000000;
}

std::vector<CpuStealReading> ReadCpuSteal(const std::string& path) {
  const std::optional<std::string> text = ReadWholeFile(path);
  return text ? ParseCpuSteal(*text, StealTickNs()) : std::vector<CpuStealReading>{};
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
