// The recording engine: a private tracefs session, one reader per CPU, the optional
// `-- CMD` child, the kernel's own counters, and the trace.dat file at the end. Used
// by `cstool record` and `cstool irq`; what either shows the user around it (the
// progress line, recording/progress_line.h; record's per-CPU table) is the command's.
//
// Record() walks the phases in order, one function each (recorder.cc): prepare
// (options, privileges, CPUs, output), open the session and the readers, start the
// targets (child, -p, -a) and the kernel capture, start tracing, the read loop, stop
// and drain, reap the child, collect the kernel counters, write the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/messages.h"
#include "model/recording_info.h"
#include "recording/live_trigger.h"
#include "recording/record_options.h"

namespace cstool {

// Totals over every CPU so far, while recording.
struct RecordCounts {
  uint64_t events = 0;
  uint64_t pages = 0;  // ring-buffer pages (sub-buffers) read
  uint64_t lost_events = 0;
};

// Follows the read loop (e.g. for a progress line).
class RecordListener {
 public:
  virtual ~RecordListener() = default;
  virtual void Reading(const RecordCounts& counts) = 0;  // every loop tick (10 ms)
  virtual void Stopped() = 0;                            // once, when the loop ends
};

// timeout(1)'s exit status when its time limit ended the command, whatever the command
// then exited with: the recording is whole, and the status says why the command ended.
inline constexpr int kCommandTimedOut = 124;

struct RecordResult {
  std::string path;    // the file written
  RecordingInfo info;  // as stored in the file: per-CPU counts, threads, child, ...
  double seconds = 0;  // tracing time
  uint64_t file_size = 0;
  // The process exit status: the child's for `-- CMD` (128 + signal if it outlived
  // the grace period; kCommandTimedOut when -N, --max-dumps or --max-size ended it); for
  // -p / -a, 0, or 1 when a --flight dump could not be written.
  int exit_status = 0;
  bool command_timed_out = false;
  // The `-- CMD` child's pid if it was still running at the end (0 otherwise).
  int still_running_pid = 0;
  // --flight: the dumps written, in order (no file at `path` then).
  std::vector<std::string> dumps;
  // --flight: the dumps asked for (a trigger, record --dump, --dump-at-end) that could
  // not be written (the disk full); each was a warning.
  int dumps_not_written = 0;
};

// Records until the child exits, the -p processes are gone, -N passed or SIGINT/SIGTERM
// (or, with --flight, --max-dumps dumps were written). `trigger` (--flight only) is fed
// the events live and asks for a dump when its condition holds. Warnings go to
// `messages`. Throws cstool::Error.
RecordResult Record(const RecordOptions& options, Messages& messages,
                    RecordListener* listener = nullptr, LiveTrigger* trigger = nullptr);

}  // namespace cstool
