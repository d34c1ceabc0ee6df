// Runs a program and captures its exit status, stdout and stderr (for tests that
// drive the real cstool binary).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace cstool::testing {

struct CommandResult {
  int status = -1;  // exit status, or 128 + signal
  std::string out;
  std::string err;
};

// The last line of a program's stderr that is its own: sanitizer builds may print notes
// ("==PID==WARNING: ...") after it, which are not the program's message.
inline std::string LastOwnLine(const std::string& err) {
  size_t end = err.size();
  while (end > 0) {
    if (err[end - 1] == '\n') {
      --end;
      continue;
    }
    const size_t nl = err.rfind('\n', end - 1);
    const size_t start = nl == std::string::npos ? 0 : nl + 1;
    std::string line = err.substr(start, end - start);
    if (!line.starts_with("==")) return line;
    end = start;
  }
  return {};
}

inline CommandResult RunCommand(const std::vector<std::string>& argv) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) std::abort();
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  CommandResult r;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, n);
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

// Why tracefs tests cannot run here, or empty when they can.
inline std::string TracefsUnavailableReason() {
  if (geteuid() != 0) return "not root: recording needs root (tracefs)";
  struct stat st;
  if (stat("/sys/kernel/tracing", &st) != 0 && stat("/sys/kernel/debug/tracing", &st) != 0)
    return "no tracefs mount point on this machine";
  return {};
}

// Starts argv (a path, not searched in PATH) with stdout and stderr written to the files
// `out` and `err`, without waiting; returns its pid. Exit status 126 if exec failed.
inline pid_t Spawn(const std::vector<std::string>& argv, const std::string& out,
                   const std::string& err) {
  pid_t pid = fork();
  if (pid == 0) {
    int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(o, 1);
    dup2(e, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(126);
  }
  return pid;
}

}  // namespace cstool::testing
