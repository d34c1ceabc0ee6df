// One perf_event_open(2) counting group on one thread: the first event leads, the
// others follow it, so the kernel schedules them together and one read(2) of the leader
// returns them all with the group's enabled and running times. When more hardware
// events are asked than the PMU has counters, the kernel multiplexes groups and
// running < enabled: values are then scaled by enabled / running and marked scaled.
//
// A per-thread counter stays readable after its thread exits: its final values.
//
// Event-based sampling (`EVENT:ebs=N`): the sampling event leads the group whatever its
// place in -c, with sample_period N and a ring buffer (counters/sample_ring.h); each
// overflow writes a sample carrying every member's value at that moment. Values and
// samples are given back in -c order.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "counters/event_list.h"
#include "counters/sample_ring.h"

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

// One overflow of the sampling event.
struct GroupSample {
  int32_t tid = 0;
  int64_t ts = 0;  // CLOCK_MONOTONIC, the trace clock "mono"
  uint32_t cpu = 0;
  uint64_t ip = 0;
  std::vector<uint64_t> values;  // per event in -c order, at the overflow
  bool scaled = false;
};

// Data pages of a sampling event's ring (a power of two): 128 KiB hold about 1,800
// samples of a lone sampled event (72 bytes each, 8 more per counted event); the
// drivers drain it every 10 (record) to 50 (msa) ms.
inline constexpr size_t kSampleRingPages = 32;

class PerfGroup {
 public:
  // Opens the group on `tid`, counting from now (and sampling, when an event has
  // ebs_period; at most one may). nullopt with `*error` = errno when the thread is gone
  // (ESRCH), the kernel refused, or the ring could not be mapped.
  static std::optional<PerfGroup> Open(pid_t tid, const std::vector<CounterEvent>& events,
                                       int* error);

  // The values now (the final ones once the thread exited); nullopt if read(2) failed.
  std::optional<GroupReading> Read() const;

  bool sampling() const { return ring_.has_value(); }
  // Appends the samples written since the last call (none without sampling).
  void DrainSamples(std::vector<GroupSample>* out);
  // Lost samples, throttling: what the ring has reported so far.
  RingStats sampling_stats() const { return ring_ ? ring_->stats() : RingStats{}; }
  // Stops the whole group: the values and the samples stay as they are from now on.
  void Disable() const;

 private:
  PerfGroup() = default;
  // Values in opening order (leader first) to -c order, scaled by enabled / running.
  std::vector<uint64_t> InEventOrder(const uint64_t* values, uint64_t enabled, uint64_t running,
                                     bool* scaled) const;

  std::vector<EventFd> fds_;   // leader first
  std::vector<size_t> order_;  // order_[k]: the -c index of fds_[k]
  std::optional<MappedRing> ring_;
  std::vector<RingSample> raw_;  // reused between drains
};

}  // namespace cstool
