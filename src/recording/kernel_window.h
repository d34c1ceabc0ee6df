// The flight recorder's window, kept by the kernel: a tracefs instance in overwrite
// mode holds the newest events of every CPU, and nothing reads it until a dump. Each
// CPU's buffer starts at -b and grows (growing keeps what it holds) until SECS seconds
// at the rate that CPU measured fit, up to the memory cap. A dump hands tracing to a
// fresh instance with the same events and tasks before the old one stops (grown to the
// same sizes right after), then reads the old one whole and removes it:
//
//   time ──────────────────────────────────────────────────────────────────►
//   instance N    ████████████████████████████████│ stopped, read, removed
//   instance N+1                              │██████████████████████ ...
//                                             ▲ N+1 on       ▲
//                                                  N off = the dump's end
//
// so no event falls between the two, and between dumps cstool holds no window.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/messages.h"
#include "recording/flight_window.h"
#include "tracefs/tracefs_session.h"

namespace cstool {

// The kernel allocates a buffer's new pages in the writing task without yielding the CPU
// (PREEMPT_NONE), so a task queued on that CPU waits out the whole allocation: 13 ms for
// a 30 MiB grow on a loaded VM, 220 ms seen once. Grown in steps of kResizeStepKb, the
// recorder returns to user mode, where a woken task preempts it, after each step (about
// 1 ms of allocation). Each write also sleeps some 8 ms in the kernel (off the CPU), so
// a resize takes at most kMaxResizeSteps writes: larger steps for larger grows.
constexpr size_t kResizeStepKb = 4096;
constexpr size_t kMaxResizeSteps = 32;

// The sizes, in KiB, to write one after the other to take a buffer from `from_kb` to
// `to_kb`: as few equal steps up as keep each within `step_kb` (but at most `max_steps`,
// then larger), the last one no larger and ending at `to_kb`; a shrink is one write, no
// change none.
std::vector<size_t> ResizeSteps(size_t from_kb, size_t to_kb, size_t step_kb = kResizeStepKb,
                                size_t max_steps = kMaxResizeSteps);

class KernelWindow {
 public:
  // The first instance, "cstool-<pid>", tracing off. `cap_bytes` bounds each CPU's
  // buffer. Throws cstool::Error.
  KernelWindow(SessionConfig config, std::vector<int> cpus, int64_t window_ns, size_t cap_bytes,
               Messages& messages);

  TracefsSession& session() { return *session_; }
  const TracefsSession& session() const { return *session_; }
  // Tracing on (trace clock `now`).
  void Start(int64_t now);
  // Every loop tick (measured every 250 ms): grows the CPUs whose buffer would not hold
  // SECS seconds at the rate they were written since the instance began, or that are
  // overwriting and hold less than SECS, to 1.5 times what SECS needs. Returns a line
  // saying what grew, or "".
  std::string Grow(int64_t now);
  // A dump: the next instance takes over, the current one is stopped and read whole;
  // `*end` is the time it stopped. Throws cstool::Error.
  FlightWindow Take(int64_t* end);
  // The current buffer size of each CPU, in KiB (cpus() order).
  const std::vector<size_t>& buffer_kb() const { return kb_; }
  const std::vector<int>& cpus() const { return cpus_; }

 private:
  std::unique_ptr<TracefsSession> NewInstance();
  // Resizes CPU `i` (cpus() index) of `session` from `from_kb` to `to_kb`, in ResizeSteps.
  void Resize(TracefsSession& session, size_t i, size_t from_kb, size_t to_kb);

  SessionConfig config_;
  std::vector<int> cpus_;
  int64_t window_ns_;
  size_t cap_kb_;
  Messages& messages_;
  std::unique_ptr<TracefsSession> session_;
  std::vector<size_t> kb_;
  std::vector<uint64_t> overrun_;  // per CPU, at the last check
  int64_t started_ = 0;
  int64_t last_grow_check_ = 0;
  int generation_ = 1;
};

}  // namespace cstool
