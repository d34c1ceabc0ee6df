// What a recording is asked to do (`cstool record`'s options; `cstool irq` fills them
// in for its own recording).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tracefs/tracefs_session.h"

namespace cstool {

// Per-CPU ring buffer size. A two-thread pipe ping-pong at full speed (cstool_workload
// pingpong, both threads on one CPU) produces ~1.8-2.5 M events/s, ~85-120 MB/s, on
// that CPU of the 2-CPU test VM. Readers poll every 10 ms, so 4 MiB (~35 ms of that
// stream) leaves room for reader threads delayed by other load; measured: 0 lost
// events over repeated 200000-round-trip runs while compilers kept both CPUs busy,
// where 4 KiB loses most events.
inline constexpr size_t kDefaultBufferKb = 4096;

struct RecordOptions {
  std::string output = "cstool.dat";
  size_t buffer_kb = kDefaultBufferKb;
  bool system_wide = false;          // -a
  bool children = false;             // --children: -p processes' existing descendants too
  std::vector<int> cpus;             // -C; empty = all online CPUs
  std::vector<int> pids;             // -p
  double duration_s = 0;             // -N; 0 = until the command exits or a signal
  std::vector<std::string> events;   // -e SYSTEM:EVENT
  bool no_defaults = false;          // --no-defaults: only the -e events
  std::vector<std::string> command;  // after --
  EventSet event_set = EventSet::kFull;
  // -a: keep cstool's own threads' events out (like trace-cmd). `cstool irq` keeps
  // them, so that every interrupt on a traced CPU is counted.
  bool exclude_self = true;
  // --compress: "zstd" or "zlib" writes v7 with chunks compressed while recording;
  // "none" writes v6 with the raw pages. zstd is the default: it costs the workload
  // nothing measurable (bench/record_bench) and makes files about 15 times smaller.
  std::string compression = "zstd";
  // --flight SECS: keep the last SECS seconds (in the kernel) and write them only on a
  // trigger (SIGUSR1, `record --dump`, --trigger) as "<output>.<N>"; 0 = a normal recording.
  double flight_s = 0;
  int max_dumps = 0;  // --max-dumps: end the recording after that many dumps; 0 = no limit
  // --dump-at-end: one more dump when the recording ends (the command's end, -N, Ctrl-C),
  // as perf's --overwrite writes its buffer at exit.
  bool dump_at_end = false;
  std::string trigger;  // --trigger COND (parsed by the command; its text goes into the dumps)
  // The most kernel memory a CPU's flight window buffer may grow to.
  size_t flight_cap_bytes = size_t{512} << 20;
  // --max-size: stop cleanly once the file would grow past this many bytes; 0 = no limit.
  uint64_t max_size = 0;
  // --stacks: the kernel call chain of every sleep (S or D switch-out), and kallsyms to
  // name it. Opt-in: it costs the traced program time at every sleep (bench/record_bench).
  bool kernel_stacks = false;
  // -c / -V: per-thread counters sampled at the start, every counter_interval_s (-T)
  // and at each thread's exit (counters/counter_samples.h); empty = none.
  std::string counters;
  std::string virtual_counters;
  double counter_interval_s = 0;  // -T; 0 = start and exit/end samples only
  // The compression the file is written with: "" for none (TraceFileContents).
  std::string FileCompression() const { return compression == "none" ? "" : compression; }
};

// "500M", "2G", "64K", "1048576": bytes (powers of 1024). Throws cstool::Error (exit 2)
// naming `option` when the text is not a positive size.
uint64_t ParseByteSize(const std::string& text, const char* option);

// Validates the options (cstool::Error, exit 2, for usage mistakes).
void ValidateRecordOptions(const RecordOptions& options);

}  // namespace cstool
