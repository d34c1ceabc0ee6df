#include "interrupts/interrupt_injector.h"

#include <fmt/core.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <stop_token>
#include <thread>

#include "base/cpu_list.h"
#include "base/enum_names.h"
#include "base/errors.h"
#include "interrupts/perf_event.h"

namespace cstool {
namespace {

// The kernel's shortest perf software clock period (perf_swevent_init_hrtimer).
constexpr double kMaxTimerRateHz = 100000.0;
// ipi: the sender catches up on at most this much lateness; older periods are dropped.
constexpr double kMaxBacklogNs = 10e6;
constexpr int kSenderNice = -10;

std::string ErrnoText(int err) {
  const char* name = strerrorname_np(err);
  return fmt::format("{} ({})", name ? name : std::to_string(err), std::strerror(err));
}

std::string WorkingList(int cpu, InjectSource except) {
  std::string out;
  for (InjectSource s : WorkingSources(cpu))
    if (s != except) out += fmt::format("{}{}", out.empty() ? "" : ", ", InjectSourceName(s));
  return out.empty() ? "none" : out;
}

[[noreturn]] void FailOpen(InjectSource source, int cpu, int err, std::string_view what) {
  if (err == EACCES || err == EPERM)
    throw Error(fmt::format("--source {} needs root (or CAP_PERFMON): opening {} on CPU {} "
                            "failed with {}; kernel.perf_event_paranoid is {}",
                            InjectSourceName(source), what, cpu, ErrnoText(err),
                            ReadKernelSysctl("perf_event_paranoid", 2)),
                ExitCode::kUsage);
  throw Error(fmt::format("--source {}: opening {} on CPU {} failed with {}",
                          InjectSourceName(source), what, cpu, ErrnoText(err)));
}

perf_event_attr CpuClockAttr(uint64_t period_ns) {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = period_ns;  // 0: counting only, no timer
  attr.disabled = 1;
  return attr;
}

perf_event_attr CyclesAttr(double rate_hz) {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = PERF_COUNT_HW_CPU_CYCLES;
  attr.freq = 1;
  attr.sample_freq = static_cast<uint64_t>(std::llround(rate_hz));
  attr.disabled = 1;
  attr.pinned = 1;
  return attr;
}

// timer: the perf clock's hrtimer fires on the CPU every period.
class TimerInjector : public InterruptInjector {
 public:
  TimerInjector(int cpu, double rate_hz)
      : period_ns_(static_cast<uint64_t>(std::llround(1e9 / rate_hz))) {
    int err = 0;
    event_ = PerfEvent::OpenOnCpu(CpuClockAttr(period_ns_), cpu, &err);
    if (!event_.valid()) FailOpen(InjectSource::kTimer, cpu, err, "a perf cpu-clock event");
    cpu_ = cpu;
  }
  ~TimerInjector() override { Stop(); }
  void Start() override {
    if (int err = event_.Enable(); err != 0)
      throw Error(fmt::format("cannot enable the perf cpu-clock event: {}", ErrnoText(err)));
  }
  void Stop() override {
    if (event_.valid()) event_.Disable();
    event_ = PerfEvent();
  }
  std::string Describe() const override {
    return fmt::format("perf cpu-clock event on CPU {}, hrtimer period {} ns", cpu_, period_ns_);
  }

 private:
  uint64_t period_ns_;
  int cpu_ = 0;
  PerfEvent event_;
};

int64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// ipi: every read(2) of an event active on another CPU is one function-call IPI there.
class IpiInjector : public InterruptInjector {
 public:
  IpiInjector(int cpu, double rate_hz) : cpu_(cpu), rate_hz_(rate_hz) {
    for (int c : OnlineCpus())
      if (c != cpu) senders_.push_back(c);
    if (senders_.empty())
      throw Error(fmt::format("--source ipi needs another online CPU to send from (only CPU {} "
                              "is online)",
                              cpu),
                  ExitCode::kUsage);
    int err = 0;
    event_ = PerfEvent::OpenOnCpu(CpuClockAttr(0), cpu, &err);
    if (!event_.valid()) FailOpen(InjectSource::kIpi, cpu, err, "a perf cpu-clock event");
    if (int e = event_.Enable(); e != 0)
      throw Error(fmt::format("cannot enable the perf cpu-clock event: {}", ErrnoText(e)));
  }
  ~IpiInjector() override { Stop(); }
  void Start() override {
    thread_ = std::jthread([this](const std::stop_token& stop) { Run(stop); });
  }
  void Stop() override {
    if (thread_.joinable()) {
      thread_.request_stop();
      thread_.join();
    }
    event_ = PerfEvent();
  }
  std::string Describe() const override {
    return fmt::format("read(2) of a perf cpu-clock event active on CPU {}, from CPU {}", cpu_,
                       FormatCpuList(senders_));
  }

 private:
  void Run(const std::stop_token& stop) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : senders_)
      if (c < CPU_SETSIZE) CPU_SET(c, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    ::prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    // Keep pace when the sending CPUs are busy (root may raise priority; ignored if not).
    ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kSenderNice);
    const double period_ns = 1e9 / rate_hz_;
    const auto max_backlog = static_cast<uint64_t>(std::max(1.0, kMaxBacklogNs / period_ns));
    int64_t start = NowNs();
    uint64_t sent = 0;
    uint64_t value = 0;
    while (!stop.stop_requested()) {
      int64_t now = NowNs();
      // Send for every period that has begun, then sleep until the next one. After a
      // long delay (the sender was not scheduled) the missed periods are dropped, not
      // sent in a burst: the achieved rate then shows the shortfall.
      auto due = static_cast<uint64_t>(static_cast<double>(now - start) / period_ns) + 1;
      if (due > sent + max_backlog) {
        start += static_cast<int64_t>(static_cast<double>(due - sent - max_backlog) * period_ns);
        due = sent + max_backlog;
      }
      while (sent < due && !stop.stop_requested()) {
        if (::read(event_.fd(), &value, sizeof(value)) != sizeof(value)) return;
        ++sent;
      }
      int64_t next = start + static_cast<int64_t>(static_cast<double>(sent) * period_ns);
      timespec ts{static_cast<time_t>(next / 1000000000), static_cast<long>(next % 1000000000)};
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
    }
  }

  int cpu_;
  double rate_hz_;
  std::vector<int> senders_;
  PerfEvent event_;
  std::jthread thread_;
};

// nmi: a hardware counter overflowing rate_hz times a second.
class NmiInjector : public InterruptInjector {
 public:
  NmiInjector(int cpu, double rate_hz) : cpu_(cpu), rate_hz_(rate_hz) {
    int err = 0;
    event_ = PerfEvent::OpenOnCpu(CyclesAttr(rate_hz), cpu, &err);
    if (event_.valid()) return;
    if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV)
      throw Error(fmt::format(
          "--source nmi needs a hardware performance counter (PMU) that can overflow into an "
          "NMI, and this machine has none: perf_event_open(PERF_TYPE_HARDWARE, cycles) on CPU {} "
          "failed with {} (typical of VMs without a virtual PMU, such as Firecracker). "
          "Sources that work here: {}",
          cpu, ErrnoText(err), WorkingList(cpu, InjectSource::kNmi)));
    if (err == EINVAL &&
        rate_hz > static_cast<double>(ReadKernelSysctl("perf_event_max_sample_rate", 100000)))
      throw Error(fmt::format("--source nmi: rate {} Hz is above kernel.perf_event_max_sample_rate "
                              "({})",
                              rate_hz, ReadKernelSysctl("perf_event_max_sample_rate", 0)),
                  ExitCode::kUsage);
    FailOpen(InjectSource::kNmi, cpu, err, "a hardware cycles counter");
  }
  ~NmiInjector() override { Stop(); }
  void Start() override {
    if (int err = event_.Enable(); err != 0)
      throw Error(fmt::format("cannot enable the cycles counter: {}", ErrnoText(err)));
  }
  void Stop() override {
    if (event_.valid()) event_.Disable();
    event_ = PerfEvent();
  }
  std::string Describe() const override {
    return fmt::format("hardware cycles counter on CPU {}, {} overflows/s (frequency mode)", cpu_,
                       rate_hz_);
  }

 private:
  int cpu_;
  double rate_hz_;
  PerfEvent event_;
};

}  // namespace

constexpr EnumNames<InjectSource, 3> kInjectSourceNames{{"timer", "ipi", "nmi"}};
static_assert(static_cast<size_t>(InjectSource::kNmi) + 1 == kInjectSourceNames.size());

InjectSource ParseInjectSource(std::string_view name) {
  if (auto source = kInjectSourceNames.Parse(name)) return *source;
  throw Error(fmt::format("unknown source '{}' (expected timer, ipi or nmi)", name),
              ExitCode::kUsage);
}

std::string_view InjectSourceName(InjectSource source) { return kInjectSourceNames(source); }

std::unique_ptr<InterruptInjector> MakeInjector(InjectSource source, int cpu, double rate_hz) {
  if (!(rate_hz > 0) || !std::isfinite(rate_hz))
    throw Error("rate must be a positive number of interrupts per second", ExitCode::kUsage);
  switch (source) {
    case InjectSource::kTimer:
      if (rate_hz > kMaxTimerRateHz)
        throw Error(fmt::format("--source timer: at most {:.0f} Hz (the kernel's shortest perf "
                                "clock period is 10 us)",
                                kMaxTimerRateHz),
                    ExitCode::kUsage);
      return std::make_unique<TimerInjector>(cpu, rate_hz);
    case InjectSource::kIpi:
      return std::make_unique<IpiInjector>(cpu, rate_hz);
    case InjectSource::kNmi:
      return std::make_unique<NmiInjector>(cpu, rate_hz);
  }
  throw Error("unknown source", ExitCode::kUsage);
}

std::vector<InjectSource> WorkingSources(int cpu) {
  std::vector<InjectSource> out;
  int err = 0;
  if (PerfEvent::OpenOnCpu(CpuClockAttr(1000000), cpu, &err).valid())
    out.push_back(InjectSource::kTimer);
  bool other_cpu = false;
  for (int c : OnlineCpus()) other_cpu |= c != cpu;
  if (other_cpu && PerfEvent::OpenOnCpu(CpuClockAttr(0), cpu, &err).valid())
    out.push_back(InjectSource::kIpi);
  if (PerfEvent::OpenOnCpu(CyclesAttr(1000), cpu, &err).valid()) out.push_back(InjectSource::kNmi);
  return out;
}

}  // namespace cstool
