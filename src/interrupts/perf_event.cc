#include "interrupts/perf_event.h"

#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

namespace cstool {

PerfEvent::~PerfEvent() {
  if (fd_ >= 0) ::close(fd_);
}

PerfEvent& PerfEvent::operator=(PerfEvent&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

PerfEvent PerfEvent::OpenOnCpu(perf_event_attr attr, int cpu, int* error) {
  attr.size = sizeof(attr);
  long fd =
      ::syscall(SYS_perf_event_open, &attr, /*pid=*/-1, cpu, /*group_fd=*/-1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) {
    if (error) *error = errno;
    return PerfEvent();
  }
  if (error) *error = 0;
  return PerfEvent(static_cast<int>(fd));
}

int PerfEvent::Enable() const { return ::ioctl(fd_, PERF_EVENT_IOC_ENABLE, 0) == 0 ? 0 : errno; }

int PerfEvent::Disable() const { return ::ioctl(fd_, PERF_EVENT_IOC_DISABLE, 0) == 0 ? 0 : errno; }

long ReadKernelSysctl(const std::string& name, long fallback) {
  std::ifstream in("/proc/sys/kernel/" + name);
  long v = 0;
  if (in >> v) return v;
  return fallback;
}

}  // namespace cstool
