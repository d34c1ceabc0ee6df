// Finding the running flight recorders (`record --dump`): every recording owns the
// tracefs instance "cstool-<pid>"; a flight recorder is one whose command line (before
// any `--`) has --flight. Asking one for a dump is SIGUSR1 to that pid.
#pragma once

#include <string>
#include <vector>

namespace cstool {

struct FlightRecorderProcess {
  int pid = 0;
  std::string command_line;  // argv joined by spaces
};

std::vector<FlightRecorderProcess> RunningFlightRecorders();

}  // namespace cstool
