// RAII over a perf_event_open(2) file descriptor, for per-CPU events.
#pragma once

#include <linux/perf_event.h>

#include <string>

namespace cstool {

class PerfEvent {
 public:
  PerfEvent() = default;
  ~PerfEvent();
  PerfEvent(PerfEvent&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  PerfEvent& operator=(PerfEvent&& other) noexcept;
  PerfEvent(const PerfEvent&) = delete;
  PerfEvent& operator=(const PerfEvent&) = delete;

  // Opens `attr` for every task on `cpu` (pid -1). Returns an invalid PerfEvent and
  // sets `*error` to the errno on failure.
  static PerfEvent OpenOnCpu(perf_event_attr attr, int cpu, int* error);

  bool valid() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  // PERF_EVENT_IOC_ENABLE / DISABLE; return 0 or the errno.
  int Enable() const;
  int Disable() const;

 private:
  explicit PerfEvent(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// /proc/sys/kernel/<name> as an integer, or `fallback` when unreadable.
long ReadKernelSysctl(const std::string& name, long fallback);

}  // namespace cstool
