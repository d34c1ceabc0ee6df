#include "kernel/cpu_steal.h"

#include <sched.h>
#include <unistd.h>

#include "base/read_file.h"
#include "base/split_list.h"
#include "base/text_fields.h"
#include "kernel/kernel_config.h"

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

std::vector<CpuStealReading> ParseRqClockSteal(std::string_view sched_debug) {
  // cpu#0, 2596.142 MHz
  //   .clock                         : 60089451.901930     (ms.ns of the clock)
  //   .clock_task                    : 59810820.664777
  std::vector<CpuStealReading> out;
  int32_t cpu = -1;
  int64_t clock = -1;
  int64_t clock_task = -1;
  auto value_ns = [](std::string_view rest) -> int64_t {
    const size_t colon = rest.find(':');
    if (colon == std::string_view::npos) return -1;
    const std::string_view v = Trim(rest.substr(colon + 1));
    const size_t dot = v.find('.');
    int64_t ms = 0;
    int64_t ns = 0;
    if (dot == std::string_view::npos || v.size() - dot - 1 != 6 ||
        !ParseNumber(v.substr(0, dot), &ms) || !ParseNumber(v.substr(dot + 1), &ns) || ms < 0 ||
        ns < 0 || ms > INT64_MAX / 1000000 - 1)
      return -1;
    return ms * 1000000 + ns;
  };
  auto finish = [&] {
    if (cpu >= 0 && clock >= 0 && clock_task >= 0 && clock >= clock_task)
      out.push_back({cpu, clock - clock_task});
    cpu = -1;
    clock = clock_task = -1;
  };
  for (std::string_view line : SplitList(sched_debug, '\n')) {
    if (line.starts_with("cpu#")) {
      finish();
      std::string_view n = line.substr(4);
      n = n.substr(0, n.find(','));
      if (!ParseNumber(n, &cpu)) cpu = -1;
      continue;
    }
    if (cpu < 0) continue;
    std::string_view rest = line;
    const std::string_view name = NextToken(rest);
    if (name == ".clock" && clock < 0) clock = value_ns(rest);
    if (name == ".clock_task" && clock_task < 0) clock_task = value_ns(rest);
  }
  finish();
  return out;
}

namespace {

constexpr const char* kSchedDebug = "/sys/kernel/debug/sched/debug";

// The calling thread's CPU affinity, put back when the scope ends.
class AffinityScope {
 public:
  AffinityScope() {
    CPU_ZERO(&saved_);
    saved_ok_ = ::sched_getaffinity(0, sizeof saved_, &saved_) == 0;
  }
  ~AffinityScope() {
    if (saved_ok_) (void)::sched_setaffinity(0, sizeof saved_, &saved_);
  }
  AffinityScope(const AffinityScope&) = delete;
  AffinityScope& operator=(const AffinityScope&) = delete;
  bool saved() const { return saved_ok_; }

 private:
  cpu_set_t saved_;
  bool saved_ok_ = false;
};

// The file shows each runqueue's clocks as its last update left them: the calling thread
// visits every CPU first, which makes each update them (the move, the switch there), so
// a reading misses only the steal of the moment since. (The caller's own thread, not a
// new one: a system-wide trace knows the recorder's threads and leaves them out.)
std::vector<CpuStealReading> ReadRqClockSteal() {
  {
    const AffinityScope restore;
    const long cpus = ::sysconf(_SC_NPROCESSORS_CONF);
    for (long c = 0; restore.saved() && c < cpus && c < CPU_SETSIZE; ++c) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(static_cast<int>(c), &one);
      (void)::sched_setaffinity(0, sizeof one, &one);  // (one it may not use: not visited)
    }
  }
  const std::optional<std::string> text = ReadWholeFile(kSchedDebug);
  return text ? ParseRqClockSteal(*text) : std::vector<CpuStealReading>{};
}

}  // namespace

StealSource StealSource::Choose() {
  const std::optional<std::string> config = ReadRunningKernelConfig();
  if (!config || KernelConfigValue(*config, "CONFIG_PARAVIRT_TIME_ACCOUNTING") != "y" ||
      KernelConfigValue(*config, "CONFIG_IRQ_TIME_ACCOUNTING").value_or("n") != "n")
    return ProcStat();
  const StealSource rq(true, 1);
  return rq.Read().empty() ? ProcStat() : rq;
}

std::vector<CpuStealReading> StealSource::Read() const {
  return rq_clocks_ ? ReadRqClockSteal() : ReadCpuSteal();
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
