// `cstool irq`: record every interrupt on the chosen CPUs and summarise it, or show
// and change IRQ affinities (--affinity).
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "base/messages.h"
#include "recording/record_options.h"

namespace cstool {

struct IrqOptions {
  double duration_s = 0;  // -N; 0 = until SIGINT/SIGTERM
  std::vector<int> cpus;  // -C; empty = all online CPUs
  std::string format = "table";
  std::string output;  // -o: keep the raw trace; empty = temporary file
  size_t buffer_kb = kDefaultBufferKb;
  bool noise = false;                    // --noise: the osnoise view instead of the summary
  double period_s = 1;                   // --period: osnoise's period for Max Noise
  bool affinity = false;                 // --affinity
  std::vector<std::string> assignments;  // IRQ=CPUS / all=CPUS after --affinity
};

// Returns the exit status; warnings go to `messages`. Throws cstool::Error.
int RunIrq(const IrqOptions& options, std::ostream& out, Messages& messages);

}  // namespace cstool
