// `cstool record`: orchestrates a tracefs session, per-CPU readers, the optional
// `-- CMD` child and the trace.dat writer.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace cstool {

// Per-CPU ring buffer size. A two-thread pipe ping-pong at full speed on this class
// of machine produces ~1.5 M events/s (~60 MB/s) on one CPU; 4 MiB absorbs the
// reader's 10 ms polling interval and scheduling hiccups of the reader threads
// many times over, so such a recording loses nothing.
inline constexpr size_t kDefaultBufferKb = 4096;

struct RecordOptions {
  std::string output = "cstool.dat";
  size_t buffer_kb = kDefaultBufferKb;
  bool system_wide = false;          // -a
  std::vector<int> cpus;             // -C; empty = all online CPUs
  std::vector<int> pids;             // -p
  double duration_s = 0;             // -N; 0 = until the command exits or a signal
  std::vector<std::string> events;   // -e SYSTEM:EVENT
  std::vector<std::string> command;  // after --
};

// Validates the options (cstool::Error, exit 2, for usage mistakes).
void ValidateRecordOptions(const RecordOptions& options);

// Records; returns the process exit status (the child's for `-- CMD`).
int RunRecord(const RecordOptions& options);

}  // namespace cstool
