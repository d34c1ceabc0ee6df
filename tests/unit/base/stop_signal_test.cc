// StopSignalScope: while it exists, a write to a reader that went away fails with EPIPE
// instead of killing the process (a recording holds tracefs instances), and a command
// started meanwhile still has SIGPIPE's default; afterwards the old disposition is back.
#include "base/stop_signal.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace cstool {
namespace {

// A pipe whose reading end is closed: a write to it raises SIGPIPE.
struct BrokenPipe {
  int fds[2] = {-1, -1};
  BrokenPipe() {
    EXPECT_EQ(::pipe(fds), 0);
    ::close(fds[0]);
  }
  ~BrokenPipe() { ::close(fds[1]); }
};

TEST(StopSignalScope, AWriteToAGoneReaderFailsInsteadOfKilling) {
  StopSignalScope scope;
  BrokenPipe pipe;
  errno = 0;
  EXPECT_EQ(::write(pipe.fds[1], "x", 1), -1);
  EXPECT_EQ(errno, EPIPE);
  EXPECT_EQ(StopSignalScope::Received(), 0);  // not a stop request
}

// An exec'd command inherits an ignored signal but not a handler: a command recorded
// while the scope exists dies of SIGPIPE as it would anywhere.
TEST(StopSignalScope, ACommandStartedMeanwhileKeepsSigpipesDefault) {
  StopSignalScope scope;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int fds[2];
    if (::pipe(fds) != 0) ::_exit(3);
    ::close(fds[0]);
    // The shell's own write to the closed pipe: killed by SIGPIPE if its default holds.
    const int out = fds[1];
    if (::dup2(out, STDOUT_FILENO) < 0) ::_exit(3);
    ::execl("/bin/sh", "sh", "-c", "echo x", static_cast<char*>(nullptr));
    ::_exit(4);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGPIPE);
}

TEST(StopSignalScope, TheOldDispositionIsBackAfterwards) {
  struct sigaction before {};
  ASSERT_EQ(::sigaction(SIGPIPE, nullptr, &before), 0);
  { StopSignalScope scope; }
  struct sigaction after {};
  ASSERT_EQ(::sigaction(SIGPIPE, nullptr, &after), 0);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
}

}  // namespace
}  // namespace cstool
