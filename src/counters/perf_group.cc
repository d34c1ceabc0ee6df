#include "counters/perf_group.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

namespace cstool {

EventFd::~EventFd() {
  if (fd_ >= 0) ::close(fd_);
}

EventFd& EventFd::operator=(EventFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

std::optional<PerfGroup> PerfGroup::Open(pid_t tid, const std::vector<CounterEvent>& events,
                                         int* error) {
  PerfGroup g;
  // The sampling event (if any) leads: a sample reads the group of its leader.
  for (size_t i = 0; i < events.size(); ++i)
    if (events[i].ebs_period != 0) g.order_.push_back(i);
  for (size_t i = 0; i < events.size(); ++i)
    if (events[i].ebs_period == 0) g.order_.push_back(i);
  for (size_t k = 0; k < g.order_.size(); ++k) {
    const CounterEvent& e = events[g.order_[k]];
    perf_event_attr attr{};
    attr.size = sizeof(attr);
    attr.type = e.type;
    attr.config = e.config;
    attr.read_format = kGroupReadFormat;
    if (events[g.order_[0]].ebs_period != 0) {
      // Sample times on the trace clock "mono" (ftrace's and perf's CLOCK_MONOTONIC are
      // both ktime_get_mono_fast_ns()); the kernel wants every member on the leader's clock.
      attr.use_clockid = 1;
      attr.clockid = CLOCK_MONOTONIC;
    }
    if (k == 0 && e.ebs_period != 0) {
      attr.sample_period = e.ebs_period;
      attr.sample_type = kSampleType;
    }
    // The leader waits until the whole group is open, then the group starts as one: a
    // member added to the running group of a running task counted from that task's next
    // switch-in only (task-clock 0-325 ms of a busy thread's 500 in `msa -c
    // page-faults:ebs=250,task-clock`, which attaches to running threads).
    if (k == 0) attr.disabled = 1;
    const int group_fd = g.fds_.empty() ? -1 : g.fds_.front().get();
    const long fd = ::syscall(SYS_perf_event_open, &attr, tid, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
      if (error) *error = errno;
      return std::nullopt;
    }
    g.fds_.emplace_back(static_cast<int>(fd));
    if (k == 0 && e.ebs_period != 0) {
      g.ring_ = MappedRing::Map(g.fds_.front().get(), kSampleRingPages, error);
      if (!g.ring_) return std::nullopt;
    }
  }
  if (::ioctl(g.fds_.front().get(), PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) != 0) {
    if (error) *error = errno;
    return std::nullopt;
  }
  if (error) *error = 0;
  return g;
}

std::vector<uint64_t> PerfGroup::InEventOrder(const uint64_t* values, uint64_t enabled,
                                              uint64_t running, bool* scaled) const {
  *scaled = running < enabled;
  std::vector<uint64_t> out(fds_.size());
  for (size_t k = 0; k < fds_.size(); ++k) {
    uint64_t v = values[k];
    if (*scaled)
      v = running == 0 ? 0 : static_cast<uint64_t>(static_cast<long double>(v) * enabled / running);
    out[order_[k]] = v;
  }
  return out;
}

std::optional<GroupReading> PerfGroup::Read() const {
  if (fds_.empty()) return std::nullopt;
  // {nr, time_enabled, time_running, value[nr]}
  std::vector<uint64_t> buf(3 + fds_.size());
  const ssize_t want = static_cast<ssize_t>(buf.size() * sizeof(uint64_t));
  if (::read(fds_.front().get(), buf.data(), static_cast<size_t>(want)) != want ||
      buf[0] != fds_.size())
    return std::nullopt;
  GroupReading r;
  r.enabled_ns = buf[1];
  r.running_ns = buf[2];
  r.values = InEventOrder(&buf[3], r.enabled_ns, r.running_ns, &r.scaled);
  return r;
}

void PerfGroup::DrainSamples(std::vector<GroupSample>* out) {
  if (!ring_) return;
  raw_.clear();
  ring_->Drain(&raw_);
  for (const RingSample& s : raw_) {
    if (s.values.size() != fds_.size()) continue;  // not this group's layout
    GroupSample g;
    g.tid = s.tid;
    g.ts = static_cast<int64_t>(s.time);
    g.cpu = s.cpu;
    g.ip = s.ip;
    g.values = InEventOrder(s.values.data(), s.enabled_ns, s.running_ns, &g.scaled);
    out->push_back(std::move(g));
  }
}

void PerfGroup::Disable() const {
  if (!fds_.empty()) ::ioctl(fds_.front().get(), PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
}

}  // namespace cstool
