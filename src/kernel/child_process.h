// The `-- CMD` child: forked early, held on a pipe until tracing is live, then
// released to exec the command. Owning the child is RAII: a child that was never
// reaped is killed and reaped when the object goes away (error paths).
#pragma once

#include <sys/resource.h>

#include <optional>
#include <string>
#include <vector>

namespace cstool {

// Exit status a shell uses for a command that cannot be found.
inline constexpr int kCommandNotFoundExit = 127;
inline constexpr int kCannotExecuteExit = 126;  // found, but exec failed (EACCES, ENOEXEC)

// Resolves argv[0] the way execvp() does (PATH search unless it has a '/'); throws
// cstool::Error with exit 127 ("command not found") if there is nothing to run.
std::string ResolveCommand(const std::string& name);

class ChildProcess {
 public:
  // Forks; the child waits. Throws cstool::Error (127/126) when argv[0] resolves to
  // nothing to run.
  explicit ChildProcess(std::vector<std::string> argv);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  int pid() const { return pid_; }
  // Waits until the child sleeps in its release read, so /proc counters are stable.
  void WaitUntilBlocked();
  // Lets the child exec; throws cstool::Error (127/126) if exec failed.
  void Release();
  // Non-blocking reap; true once the child has exited (status/rusage then valid).
  bool TryReap();
  // Whether the child has exited, without reaping it: its zombie's /proc entry still
  // holds its final counts.
  bool Exited() const;
  // Blocking reap with a timeout in seconds; true if reaped.
  bool ReapWithin(double seconds);
  void Signal(int sig);

  bool reaped() const { return reaped_; }
  int wait_status() const { return status_; }
  const rusage& usage() const { return usage_; }
  // Shell-style exit code: the exit status, or 128 + signal.
  int ExitCode() const;

 private:
  std::vector<std::string> argv_;
  int pid_ = -1;
  int release_fd_ = -1;
  int error_fd_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  rusage usage_{};
};

}  // namespace cstool
