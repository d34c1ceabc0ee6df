// SIGINT/SIGTERM/SIGHUP handling for long-running commands: while a StopSignalScope
// exists, the three signals only set a flag (the one piece of global state, async-signal-safe)
// that the main loop polls, and SIGPIPE is caught and does nothing (a write to a reader
// that went away fails instead); the previous handlers are restored afterwards.
#pragma once

#include <signal.h>

namespace cstool {

class StopSignalScope {
 public:
  StopSignalScope();
  ~StopSignalScope();
  StopSignalScope(const StopSignalScope&) = delete;
  StopSignalScope& operator=(const StopSignalScope&) = delete;

  // The signal received (SIGINT, SIGTERM or SIGHUP: a closed terminal or a dropped ssh
  // session ends a recording as Ctrl-C does), or 0.
  static int Received();
  // True if it came from the kernel (e.g. Ctrl-C on the terminal, which also reached
  // the rest of the foreground process group) rather than from kill(2).
  static bool FromKernel();

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
  struct sigaction old_hup_ {};
  struct sigaction old_pipe_ {};
};

}  // namespace cstool
