#include "kernel/child_process.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "base/errors.h"
#include "kernel/proc_threads.h"

namespace cstool {
namespace {

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

std::string ResolveCommand(const std::string& name) {
  if (name.empty())
    throw Error("empty command", static_cast<cstool::ExitCode>(kCommandNotFoundExit));
  if (name.find('/') != std::string::npos) {
    if (IsExecutableFile(name)) return name;
    // Like a shell: 126 for a file that cannot be executed, 127 for a missing one.
    const bool exists = ::access(name.c_str(), F_OK) == 0;
    throw Error(fmt::format("{}: {}", name, std::strerror(exists ? EACCES : ENOENT)),
                static_cast<cstool::ExitCode>(exists ? kCannotExecuteExit : kCommandNotFoundExit));
  }
  const char* env = std::getenv("PATH");
  std::string path = env ? env : "/usr/local/bin:/usr/bin:/bin";
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t end = path.find(':', pos);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(pos, end - pos);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (IsExecutableFile(candidate)) return candidate;
    pos = end + 1;
  }
  throw Error(fmt::format("{}: command not found", name),
              static_cast<cstool::ExitCode>(kCommandNotFoundExit));
}

ChildProcess::ChildProcess(std::vector<std::string> argv) : argv_(std::move(argv)) {
  // The PATH search is done here, before the fork: execvp() in the child would try each
  // directory before the one that has the command, every failed execve() in the trace,
  // charged to the workload's syscalls (`record -- sleep 1` showed execve 10 for one
  // program run). (First: it may throw, and the pipes are not open yet.)
  std::string program = ResolveCommand(argv_.at(0));
  int release[2], error[2];
  if (::pipe2(release, O_CLOEXEC) != 0) throw Error(fmt::format("pipe: {}", std::strerror(errno)));
  if (::pipe2(error, O_CLOEXEC) != 0) {
    ::close(release[0]);
    ::close(release[1]);
    throw Error(fmt::format("pipe: {}", std::strerror(errno)));
  }
  // Build argv before fork: the child may only call async-signal-safe functions.
  std::vector<char*> cargv;
  for (auto& a : argv_) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  // A file the kernel cannot execute itself (no #! line) is a shell script to execvp().
  std::string shell = "/bin/sh";
  std::vector<char*> script_argv = {shell.data(), program.data()};
  script_argv.insert(script_argv.end(), cargv.begin() + 1, cargv.end());

  pid_ = ::fork();
  if (pid_ < 0) {
    int e = errno;
    for (int fd : {release[0], release[1], error[0], error[1]}) ::close(fd);
    throw Error(fmt::format("fork: {}", std::strerror(e)));
  }
  if (pid_ == 0) {
    ::close(release[1]);
    ::close(error[0]);
    char c;
    ssize_t n;
    do n = ::read(release[0], &c, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1) ::_exit(kCommandNotFoundExit);  // the recorder gave up before release
    ::execv(program.c_str(), cargv.data());
    int e = errno;
    if (e == ENOEXEC) {
      ::execv(script_argv[0], script_argv.data());
      e = errno;
    }
    ssize_t w = ::write(error[1], &e, sizeof e);
    (void)w;
    ::_exit(e == ENOENT ? kCommandNotFoundExit : kCannotExecuteExit);
  }
  ::close(release[0]);
  ::close(error[1]);
  release_fd_ = release[1];
  error_fd_ = error[0];
}

ChildProcess::~ChildProcess() {
  CloseFd(release_fd_);
  CloseFd(error_fd_);
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    int status;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

void ChildProcess::WaitUntilBlocked() {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    auto state = ProcessState(pid_);
    if (!state) return;
    if (*state == 'S') {
      // "S" shows as soon as the task sets its state, a moment before schedule()
      // counts its switch; still S a millisecond later means it really switched out.
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      state = ProcessState(pid_);
      if (!state || *state == 'S') return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void ChildProcess::Release() {
  char c = 'g';
  ssize_t n;
  do n = ::write(release_fd_, &c, 1);
  while (n < 0 && errno == EINTR);
  CloseFd(release_fd_);
  int err = 0;
  ssize_t got;
  do got = ::read(error_fd_, &err, sizeof err);
  while (got < 0 && errno == EINTR);
  CloseFd(error_fd_);
  if (got == static_cast<ssize_t>(sizeof err)) {
    ReapWithin(5);
    if (err == ENOENT)
      throw Error(fmt::format("{}: command not found", argv_[0]),
                  static_cast<cstool::ExitCode>(kCommandNotFoundExit));
    throw Error(fmt::format("{}: {}", argv_[0], std::strerror(err)),
                static_cast<cstool::ExitCode>(kCannotExecuteExit));
  }
}

bool ChildProcess::TryReap() {
  if (reaped_) return true;
  int status = 0;
  pid_t r = ::wait4(pid_, &status, WNOHANG, &usage_);
  if (r == pid_) {
    reaped_ = true;
    status_ = status;
  }
  return reaped_;
}

bool ChildProcess::Exited() const {
  if (reaped_) return true;
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid_;
}

bool ChildProcess::ReapWithin(double seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!TryReap()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

void ChildProcess::Signal(int sig) {
  if (pid_ > 0 && !reaped_) ::kill(pid_, sig);
}

int ChildProcess::ExitCode() const {
  if (WIFEXITED(status_)) return WEXITSTATUS(status_);
  if (WIFSIGNALED(status_)) return 128 + WTERMSIG(status_);
  return static_cast<int>(cstool::ExitCode::kFailure);
}

}  // namespace cstool
