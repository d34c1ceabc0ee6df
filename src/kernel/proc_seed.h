// What /proc says about a live process's threads at one moment, for `cstool msa`:
// the state letter and CPU (task/TID/stat), the syscall a blocked thread sits in
// (task/TID/syscall) and the kernel's switch counters (task/TID/status). The reads of
// all threads are bracketed by CLOCK_MONOTONIC times so the snapshot can be placed
// exactly on the (mono-clocked) trace timeline.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/recording_info.h"

namespace cstool {

struct ThreadSeed {
  int32_t tid = 0;
  int32_t tgid = 0;
  std::string comm;
  char state = '?';  // R S D T t Z X I ...
  int32_t cpu = -1;  // last CPU it ran on
  // The syscall it is blocked in, kNotInSyscall (-1) when blocked outside one, or
  // kSyscallUnknown when /proc says "running" (or cannot tell).
  int64_t syscall = -2;
  uint64_t nvcsw = 0;
  uint64_t nivcsw = 0;
  // kthreadd or its child: /proc/TID/syscall reads "0 ..." (read) for it, which it is not in.
  bool kernel_thread = false;

  // As a recording keeps it (RecordingInfo::attach_seeds), for the report to start in.
  AttachSeed ToAttachSeed() const {
    return {tid, tgid, comm, std::string(1, state), syscall, cpu, kernel_thread};
  }
};

struct ProcSeed {
  int64_t read_start_ns = 0;  // CLOCK_MONOTONIC before the first file was opened
  int64_t read_end_ns = 0;    // ... and after the last one was read
  std::vector<ThreadSeed> threads;
};

// Pure parser (exposed for tests).
// "/proc/TID/syscall": "running" -> kSyscallUnknown, "-1 ..." -> -1, "NR ..." -> NR.
int64_t ParseProcSyscall(std::string_view text);

// Reads every thread of `pid`. Threads that vanish while being read are skipped; an
// empty list means the process is gone.
ProcSeed ReadProcSeed(int32_t pid);
// The same for the threads of several processes, read within one bracket.
ProcSeed ReadProcSeed(const std::vector<int32_t>& pids);

// True when `pid` no longer has a thread that can run: no /proc entry, or only
// zombie/dead threads left (a process whose parent has not reaped it yet).
bool ProcessGone(int32_t pid);

}  // namespace cstool
