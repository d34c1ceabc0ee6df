#include "base/isolated_call.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/errors.h"

namespace cstool {

std::optional<std::string> CrashOfIsolatedCall(const std::function<void()>& fn) {
  const pid_t pid = ::fork();
  if (pid < 0) throw Error(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) ::dup2(null, STDERR_FILENO);
    try {
      fn();
    } catch (...) {
      // An exception is an orderly failure; the caller will meet it again.
    }
    ::_exit(0);  // no destructors, atexit handlers or stdio flushes of the parent's state
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw Error(fmt::format("waitpid: {}", std::strerror(errno)));
  }
  if (WIFSIGNALED(status))
    return fmt::format("killed by signal {} ({})", WTERMSIG(status), ::strsignal(WTERMSIG(status)));
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
    return fmt::format("exited with status {}", WEXITSTATUS(status));
  return std::nullopt;
}

}  // namespace cstool
