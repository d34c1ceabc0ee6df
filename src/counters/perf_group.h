// One perf_event_open(2) counting group on one thread: the first event leads, the
// others follow it, so the kernel schedules them together and one read(2) of the leader
// returns them all with the group's enabled and running times. When more hardware
// events are asked than the PMU has counters, the kernel multiplexes groups and
// running < enabled: values are then scaled by enabled / running and marked scaled.
//
// A per-thread counter stays readable after its thread exits: its final values.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "counters/event_list.h"

namespace cstool {

// An owned perf_event file descriptor.
class EventFd {
 public:
  EventFd() = default;
  explicit EventFd(int fd) : fd_(fd) {}
  ~EventFd();
  EventFd(EventFd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  EventFd& operator=(EventFd&& other) noexcept;
  EventFd(const EventFd&) = delete;
  EventFd& operator=(const EventFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_ = -1;
};

struct GroupReading {
  std::vector<uint64_t> values;  // per event, scaled when `scaled`
  uint64_t enabled_ns = 0;       // time the group was enabled (while the thread ran)
  uint64_t running_ns = 0;       // ... and actually on a PMU
  bool scaled = false;           // running < enabled: the values are estimates
};

class PerfGroup {
 public:
  // Opens the group on `tid`, counting from now. nullopt with `*error` = errno when
  // the thread is gone (ESRCH) or the kernel refused.
  static std::optional<PerfGroup> Open(pid_t tid, const std::vector<CounterEvent>& events,
                                       int* error);

  // The values now (the final ones once the thread exited); nullopt if read(2) failed.
  std::optional<GroupReading> Read() const;

 private:
  PerfGroup() = default;
  std::vector<EventFd> fds_;  // leader first
};

}  // namespace cstool
