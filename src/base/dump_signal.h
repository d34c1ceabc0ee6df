// SIGUSR1 for the flight recorder (`record --flight`): while a DumpSignalScope exists,
// the signal only counts a request (the one piece of global state, async-signal-safe)
// that the read loop takes; the previous handler is restored afterwards.
#pragma once

#include <signal.h>

namespace cstool {

class DumpSignalScope {
 public:
  DumpSignalScope();
  ~DumpSignalScope();
  DumpSignalScope(const DumpSignalScope&) = delete;
  DumpSignalScope& operator=(const DumpSignalScope&) = delete;

  // Whether SIGUSR1 arrived since the last call (several signals in between are one).
  static bool Take();

 private:
  struct sigaction old_usr1_ {};
};

}  // namespace cstool
