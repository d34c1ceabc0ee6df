// Writing memory back out of every core's caches, for buffers that two threads pass back
// and forth (one fills, the other reads, then it is refilled). When the filling thread
// writes a line the reading core still holds, each store waits for that core to give the
// line up; evicting a buffer once it has been read, by either thread (the instruction
// reaches every cache), turns those stores into plain misses. Whether that pays depends
// on the host: on one Intel VM it turned a hand-over that cost more than the work it
// moved into a gain; on another (Emerald Rapids, one shared L3) the eviction took a sixth
// of the reading thread's time and the hand-over was faster without it; on an AMD EPYC
// VM the hand-over took twice as long without it. EvictionChoice times both and keeps
// the faster. (Where the filling thread writes every byte anew, stores that bypass the
// caches do better still: decode/event_batch.h.)
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace cstool {

// Evicts the cache lines of [p, p + bytes) from every cache, other cores' too (a no-op
// where the instruction is missing). The data stay as they are.
void EvictCacheLines(const void* p, size_t bytes);

// Decides, for the buffers one thread refills, whether to evict each before its refill,
// by timing the refills (the eviction included) with and without. Only the refills: the
// thread's waits for the other one (for room, for the next buffer) last as long as the
// other thread's work whichever way this one goes (with the waits in the rounds, the
// decoding thread's choice for its batches, before they were streamed past the caches
// instead, kept in about half the runs of a 4.3 M-event ping-pong, -j 2 on an AMD VM, at
// 285 ms against 165-180 ms evicting). The read-ahead worker asks about its page runs.
// After a warm-up, rounds of kRound buffers alternate (kept first), and once each way
// has had kRoundsEach rounds the one with the shorter median round holds for kHold
// buffers; then the rounds begin again (no warm-up), and so on to the end. A choice made
// once, after 16 buffers, kept in 2 of 8 runs of a v7+zstd ping-pong (-j 2, AMD VM), and
// in 5 of 8 that began beside 30 ms of another task on the worker's CPU: those ran at
// 270-290 ms where evicting took 190-210. Its keeping rounds had come before the reader
// read the buffers back, and so had cost nothing.
// Eviction moves no data, so the choice changes timing only, never a result. One thread's.
//
//   buffers:  | warm-up | keep | evict | ... | the faster, kHold | keep | evict | ... |
//   a buffer:   Evict() -> (evicted or not) -> refill -> Refilled() -> wait for the next
class EvictionChoice {
 public:
  // Past the buffers the reader has not read back yet: a CPU reads up to 64 runs ahead,
  // and keeping costs nothing until the reader holds what is refilled.
  static constexpr int kWarmup = 256;
  static constexpr int kRound = 16;
  static constexpr int kRoundsEach = 5;
  static constexpr int kHold = 1024;
  using Clock = std::function<int64_t()>;
  // `now`: nanoseconds of a monotonic clock (a test's own).
  explicit EvictionChoice(Clock now = {});

  // Called once per buffer, before its refill: whether to evict it. Starts its timing.
  bool Evict();
  // The refill of the buffer of the last Evict() is done: ends its timing.
  void Refilled();

  enum class Decision { kTrying, kKeep, kEvict };
  Decision decision() const { return decision_; }

 private:
  Clock now_;
  Decision decision_ = Decision::kTrying;
  int64_t calls_ = 0;          // buffers of this trial (a trial again starts past the warm-up)
  int64_t held_ = 0;           // buffers since the decision
  int64_t refill_began_ = -1;  // the timed buffer's Evict(), or -1
  // Round times (their buffers' refills), kept ones and evicted ones.
  std::array<std::array<int64_t, kRoundsEach>, 2> rounds_{};
};

}  // namespace cstool
