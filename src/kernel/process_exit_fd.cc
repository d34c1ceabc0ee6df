#include "kernel/process_exit_fd.h"

#include <sys/syscall.h>
#include <unistd.h>

namespace cstool {

ProcessExitFd::ProcessExitFd(pid_t pid) {
#ifdef SYS_pidfd_open
  fd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd_ < 0) fd_ = -1;
#else
  (void)pid;
#endif
}

ProcessExitFd::~ProcessExitFd() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace cstool
