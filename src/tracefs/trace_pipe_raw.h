// One CPU's per_cpu/cpuN/trace_pipe_raw, opened close-on-exec. tracefs_cpu_open() does
// not ensure that: a command forked while it is open would inherit the descriptor, and
// an instance with an open file cannot be removed while that command lives on (after
// the recorder was killed, "Device or resource busy").
#pragma once

#include <cstddef>

#include "base/unique_fd.h"
#include "tracefs/tracefs_api.h"

namespace cstool {

class TracePipeRaw {
 public:
  // Throws cstool::Error when the file cannot be opened.
  TracePipeRaw(tracefs_instance* instance, int cpu);
  ~TracePipeRaw();
  TracePipeRaw(const TracePipeRaw&) = delete;
  TracePipeRaw& operator=(const TracePipeRaw&) = delete;

  tracefs_cpu* get() const { return tcpu_; }
  int fd() const { return fd_.get(); }  // for poll(2)
  size_t subbuf_size() const { return subbuf_size_; }

 private:
  UniqueFd fd_;  // owned here; the handle only reads through it
  size_t subbuf_size_ = 0;
  tracefs_cpu* tcpu_ = nullptr;
};

}  // namespace cstool
