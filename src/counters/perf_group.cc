#include "counters/perf_group.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
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
  for (const CounterEvent& e : events) {
    perf_event_attr attr{};
    attr.size = sizeof(attr);
    attr.type = e.type;
    attr.config = e.config;
    attr.read_format =
        PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    const int group_fd = g.fds_.empty() ? -1 : g.fds_.front().get();
    const long fd = ::syscall(SYS_perf_event_open, &attr, tid, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
      if (error) *error = errno;
      return std::nullopt;
    }
    g.fds_.emplace_back(static_cast<int>(fd));
  }
  if (error) *error = 0;
  return g;
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
  r.scaled = r.running_ns < r.enabled_ns;
  for (size_t i = 0; i < fds_.size(); ++i) {
    uint64_t v = buf[3 + i];
    if (r.scaled)
      v = r.running_ns == 0
              ? 0
              : static_cast<uint64_t>(static_cast<long double>(v) * r.enabled_ns / r.running_ns);
    r.values.push_back(v);
  }
  return r;
}

}  // namespace cstool
