// `cstool nmi-inject`: generate interrupts on one CPU at a set rate
// (interrupts/interrupt_injector) and measure the rate really achieved from trace events on that
// CPU (a private tracefs instance restricted to it, tracefs/cpu_event_counter).
#pragma once

#include <ostream>
#include <string>

#include "base/messages.h"

namespace cstool {

struct NmiInjectOptions {
  int cpu = -1;  // --cpu (required)
  std::string source = "timer";
  double rate_hz = 1000;   // --rate
  double duration_s = 10;  // --duration; 0 = until Ctrl-C
  // --noise: also trace every interrupt and task switch on the CPU and print the osnoise
  // view of the injection window (analysis/irq_noise.h) after the result.
  bool noise = false;
};

// Returns the exit status; warnings go to `messages`. Throws cstool::Error.
int RunNmiInject(const NmiInjectOptions& options, std::ostream& out, Messages& messages);

}  // namespace cstool
