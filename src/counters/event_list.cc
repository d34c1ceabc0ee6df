#include "counters/event_list.h"

#include <fmt/format.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "base/errors.h"
#include "base/split_list.h"

namespace cstool {
namespace {

struct NamedEvent {
  std::string_view name;
  uint32_t type;
  uint64_t config;
};

constexpr NamedEvent kNamedEvents[] = {
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
    {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    {"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
    {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN},
    {"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
};

std::string Joined(const std::vector<std::string>& names) {
  return fmt::format("{}", fmt::join(names, ", "));
}

[[noreturn]] void Unknown(std::string_view name) {
  throw Error(fmt::format("unknown counter event '{}' (hardware: {}; raw: rNNNN in hex; software: "
                          "{}; append :ebs=N to sample every N events)",
                          name, Joined(KnownHardwareEvents()), Joined(KnownSoftwareEvents())),
              ExitCode::kUsage);
}

uint64_t ParseNumber(std::string_view text, int base, std::string_view what) {
  std::string s(text);
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = s.empty() ? 0 : std::strtoull(s.c_str(), &end, base);
  if (s.empty() || errno != 0 || end == nullptr || *end != '\0' || s[0] == '-' || s[0] == '+')
    throw Error(fmt::format("invalid {} '{}'", what, text), ExitCode::kUsage);
  return v;
}

CounterEvent ParseOne(std::string_view item) {
  CounterEvent e;
  std::string_view name = item;
  if (size_t colon = item.find(':'); colon != std::string_view::npos) {
    name = item.substr(0, colon);
    std::string_view mod = item.substr(colon + 1);
    if (mod.rfind("ebs=", 0) != 0)
      throw Error(
          fmt::format("unknown modifier '{}' in counter event '{}' (expected :ebs=N)", mod, item),
          ExitCode::kUsage);
    e.ebs_period = ParseNumber(mod.substr(4), 10, "sampling period (:ebs=N)");
    if (e.ebs_period == 0)
      throw Error(fmt::format("sampling period of '{}' must be at least 1", item),
                  ExitCode::kUsage);
  }
  e.name = std::string(name);
  for (const NamedEvent& n : kNamedEvents)
    if (n.name == name) {
      e.type = n.type;
      e.config = n.config;
      return e;
    }
  if (name.size() > 1 && name[0] == 'r' &&
      name.find_first_not_of("0123456789abcdefABCDEF", 1) == std::string_view::npos) {
    e.type = PERF_TYPE_RAW;
    e.config = ParseNumber(name.substr(1), 16, "raw event code");
    return e;
  }
  Unknown(name);
}

long OpenOnSelf(const CounterEvent& e) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = e.type;
  attr.config = e.config;
  attr.disabled = 1;
  if (e.ebs_period != 0) {  // as counters/perf_group.cc opens it
    attr.sample_period = e.ebs_period;
    attr.use_clockid = 1;
    attr.clockid = CLOCK_MONOTONIC;
  }
  return ::syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

}  // namespace

bool CounterEvent::hardware() const { return type != PERF_TYPE_SOFTWARE; }

std::vector<std::string> KnownHardwareEvents() {
  std::vector<std::string> out;
  for (const NamedEvent& n : kNamedEvents)
    if (n.type == PERF_TYPE_HARDWARE) out.emplace_back(n.name);
  return out;
}

std::vector<std::string> KnownSoftwareEvents() {
  std::vector<std::string> out;
  for (const NamedEvent& n : kNamedEvents)
    if (n.type == PERF_TYPE_SOFTWARE) out.emplace_back(n.name);
  return out;
}

std::string KnownEventsText() {
  return fmt::format("hardware: {}, rNNNN; software: {}", Joined(KnownHardwareEvents()),
                     Joined(KnownSoftwareEvents()));
}

std::vector<CounterEvent> ParseEventList(std::string_view list) {
  std::vector<CounterEvent> out;
  std::set<std::string> seen;
  for (std::string_view item : SplitList(list)) {
    if (item.empty())
      throw Error(fmt::format("empty name in counter list '{}'", list), ExitCode::kUsage);
    CounterEvent e = ParseOne(item);
    if (!seen.insert(e.name).second)
      throw Error(fmt::format("counter event '{}' given twice", e.name), ExitCode::kUsage);
    out.push_back(std::move(e));
  }
  // A sample reads the group of the event that overflowed, so one sampling event leads
  // the group and the others ride along; two would need two groups per thread.
  std::vector<std::string> sampling;
  for (const CounterEvent& e : out)
    if (e.ebs_period != 0) sampling.push_back(fmt::format("{}:ebs={}", e.name, e.ebs_period));
  if (sampling.size() > 1)
    throw Error(fmt::format("only one event can be sampled (:ebs=N) per -c list, got {}; the "
                            "others are counted and every sample carries their values",
                            Joined(sampling)),
                ExitCode::kUsage);
  return out;
}

void ProbeEvents(const std::vector<CounterEvent>& events) {
  const std::string software = Joined(KnownSoftwareEvents());
  for (const CounterEvent& e : events) {
    const long fd = OpenOnSelf(e);
    const int err = errno;
    if (fd >= 0) {
      ::close(static_cast<int>(fd));
    } else if (err == EACCES || err == EPERM) {
      throw Error(fmt::format("cannot count '{}': {} (run as root, or lower "
                              "/proc/sys/kernel/perf_event_paranoid)",
                              e.name, std::strerror(err)),
                  ExitCode::kUsage);
    } else if (e.hardware()) {
      const bool pmu = std::filesystem::exists("/sys/bus/event_source/devices/cpu");
      throw Error(
          fmt::format("cannot count '{}'{}: {} ({}); software events work without a PMU: {}",
                      e.name, e.ebs_period ? " with event-based sampling" : "",
                      pmu ? "the PMU refused the event"
                          : "this machine has no hardware PMU "
                            "(/sys/bus/event_source/devices/cpu is absent)",
                      std::strerror(err), software),
          ExitCode::kUsage);
    } else {
      throw Error(fmt::format("cannot count '{}': {}", e.name, std::strerror(err)),
                  ExitCode::kUsage);
    }
  }
}

}  // namespace cstool
