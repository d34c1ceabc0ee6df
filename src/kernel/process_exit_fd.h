// A pidfd (pidfd_open(2)) of a process: poll(2) reports it readable once the whole
// process has exited (a zombie waiting for its parent counts as exited). RAII: the fd
// is closed with the object.
#pragma once

#include <sys/types.h>

namespace cstool {

class ProcessExitFd {
 public:
  // fd() is -1 when the kernel has no pidfd_open or the process is gone.
  explicit ProcessExitFd(pid_t pid);
  ~ProcessExitFd();
  ProcessExitFd(const ProcessExitFd&) = delete;
  ProcessExitFd& operator=(const ProcessExitFd&) = delete;

  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

}  // namespace cstool
