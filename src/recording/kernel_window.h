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
// a resize takes at most kMaxResizeSteps writes (larger steps for larger grows), one per
// loop tick, the growing CPUs in turn: the tick also reads the trigger's buffers.
constexpr size_t kResizeStepKb = 4096;
constexpr size_t kMaxResizeSteps = 32;

// The sizes, in KiB, to write one after the other to take a buffer from `from_kb` to
// `to_kb`: as few equal steps up as keep each within `step_kb` (but at most `max_steps`,
// then larger), the last one no larger and ending at `to_kb`; a shrink is one write, no
// change none.
std::vector<size_t> ResizeSteps(size_t from_kb, size_t to_kb, size_t step_kb = kResizeStepKb,
                                size_t max_steps = kMaxResizeSteps);

// One CPU's buffer on its way to a target size, a step at a time: the steps are fixed
// when the target is set (ResizeSteps), so a grow takes at most kMaxResizeSteps writes.
class BufferGrowth {
 public:
  explicit BufferGrowth(size_t kb = 0) : kb_(kb), target_kb_(kb) {}
  size_t kb() const { return kb_; }
  size_t target_kb() const { return target_kb_; }
  bool growing() const { return kb_ < target_kb_; }
  // Grows toward `want_kb` from here; false (nothing changes) while a grow is under way,
  // whose measurement came from a buffer still too small to hold a window, or when
  // `want_kb` is not worth a resize (within an eighth of the target).
  bool Raise(size_t want_kb);
  // The size the next write sets (only while growing()); Took() once it is written.
  size_t NextKb() const { return std::min(target_kb_, kb_ + step_kb_); }
  void Took(size_t kb) { kb_ = kb; }
  // A new buffer of `kb`, to grow back to the target it had.
  void Restart(size_t kb);
  void GiveUp() { target_kb_ = kb_; }  // a write failed: stays as it is

 private:
  size_t kb_;
  size_t target_kb_;
  size_t step_kb_ = kResizeStepKb;
};

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
  // Every loop tick: one resize step, for the next CPU (in turn) whose buffer is below its
  // target, so that a tick waits for one write at most. Every 250 ms the targets are
  // measured: a CPU whose buffer would not hold SECS seconds at the rate it was written
  // since the instance began, or that is overwriting and holds less than SECS, is to
  // grow to 1.5 times what SECS needs. Returns a line saying which grow, or "".
  std::string Grow(int64_t now);
  // A dump asked for at `asked_at`: the next instance takes over, the current one is
  // stopped and read whole, and kept from the window before `asked_at` on (a dump the
  // machine's load delayed still holds what asked for it); `*end` is the time it
  // stopped. The next instance grows back to the current sizes with `grow_back` (not
  // for the last dump). Throws cstool::Error.
  FlightWindow Take(int64_t asked_at, int64_t* end, bool grow_back = true);

  const std::vector<int>& cpus() const { return cpus_; }

 private:
  std::unique_ptr<TracefsSession> NewInstance();
  // One step of CPU `i`'s buffer (cpus() index) toward its target; a failed write is
  // warned about and ends that CPU's grow.
  void Step(size_t i);

  SessionConfig config_;
  std::vector<int> cpus_;
  int64_t window_ns_;
  size_t cap_kb_;
  Messages& messages_;
  std::unique_ptr<TracefsSession> session_;
  std::vector<BufferGrowth> growth_;  // the live instance's buffers, per CPU
  size_t next_to_step_ = 0;           // where the turns of Grow go on
  std::vector<uint64_t> overrun_;     // per CPU, at the last check
  int64_t started_ = 0;
  int64_t last_grow_check_ = 0;
  int generation_ = 1;
};

}  // namespace cstool
