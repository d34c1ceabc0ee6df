// Per-thread kernel counters of live processes, read from /proc:
//   /proc/<pid>/task/<tid>/status    Tgid, PPid, voluntary_ctxt_switches,
//                                    nonvoluntary_ctxt_switches
//   /proc/<pid>/task/<tid>/schedstat "<exec_runtime_ns> <run_delay_ns> <timeslices>"
//   /proc/<pid>/task/<tid>/comm      the thread's name (status "Name:" is escaped)
// Threads come and go while we read: a thread that vanishes between listing and
// reading is counted in `vanished_threads`, never an error.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernel/kernel_counters.h"

namespace cstool {

// The fields cstool needs from a /proc/.../status text.
struct ProcStatusFields {
  std::string name;  // "Name:" as printed (escaped by the kernel)
  int32_t tgid = 0;
  int32_t pid = 0;  // the thread id
  int32_t ppid = 0;
  uint64_t nvcsw = 0;
  uint64_t nivcsw = 0;
};

// Pure parser. nullopt (with *error set when given) if Tgid, Pid or either
// *_ctxt_switches line is missing or not a number. Unknown lines are ignored.
std::optional<ProcStatusFields> ParseProcStatus(std::string_view text,
                                                std::string* error = nullptr);

struct ProcSchedstat {
  int64_t exec_runtime_ns = 0;
  int64_t run_delay_ns = 0;
  uint64_t timeslices = 0;
};

// Pure parser of "<u64> <u64> <u64>\n". nullopt (with *error) when malformed.
std::optional<ProcSchedstat> ParseProcSchedstat(std::string_view text,
                                                std::string* error = nullptr);

struct ProcSnapshot {
  std::vector<KernelTaskCounters> tasks;  // source kProcSnapshot
  uint64_t vanished_threads = 0;          // listed in task/ but gone before all files were read
  uint64_t missing_processes = 0;         // requested pid had no /proc entry (already exited)
  std::vector<std::string> errors;        // unexpected problems (malformed files, EACCES, ...)
};

// Reads one thread. nullopt when it no longer exists (ENOENT/ESRCH); throws nothing.
// On other failures returns nullopt and sets *error.
std::optional<KernelTaskCounters> ReadProcTask(int32_t pid, int32_t tid,
                                               std::string* error = nullptr,
                                               const std::string& proc_root = "/proc");

// All threads of each process in `pids` (tgids; a tid of a non-leader thread also works
// and gives its whole process). Duplicate processes are read once.
ProcSnapshot SnapshotProcTasks(std::span<const int32_t> pids,
                               const std::string& proc_root = "/proc");

// Every thread on the system (for system-wide recording).
ProcSnapshot SnapshotAllProcTasks(const std::string& proc_root = "/proc");

}  // namespace cstool
