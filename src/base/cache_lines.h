// Writing memory back out of every core's caches, for buffers that two threads pass back
// and forth (one fills, the other reads, then it is refilled). When the filling thread
// writes a line the reading core still holds, each store waits for that core to give the
// line up; evicting a buffer once it has been read, by either thread (the instruction
// reaches every cache), turns those stores into plain misses. Whether that pays depends
// on the host: on one Intel VM it turned a hand-over that cost more than the work it
// moved into a gain; on another (Emerald Rapids, one shared L3) the eviction took a sixth
// of the reading thread's time and the hand-over was faster without it; on an AMD EPYC
// VM the hand-over took twice as long without it. EvictionChoice times both and keeps
// the faster.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace cstool {

// Evicts the cache lines of [p, p + bytes) from every cache, other cores' too (a no-op
// where the instruction is missing). The data stay as they are.
void EvictCacheLines(const void* p, size_t bytes);

// Decides, for the buffers one thread hands back or gets back, whether to evict them, by
// timing that thread's cycle (work plus waiting for the next buffer or for room) with and without:
// after a warm-up, rounds of kRound buffers alternate (kept first), and once each way has had
// kRoundsEach rounds the one with the shorter median round keeps the rest. Eviction
// moves no data, so the choice changes timing only, never a result. One thread's.
//
//   buffers:  | warm-up | keep | evict | keep | evict | ... | the faster, to the end |
class EvictionChoice {
 public:
  static constexpr int kWarmup = 16;
  static constexpr int kRound = 16;
  static constexpr int kRoundsEach = 5;
  using Clock = std::function<int64_t()>;
  // `now`: nanoseconds of a monotonic clock (a test's own).
  explicit EvictionChoice(Clock now = {});

  // Called once per buffer, as it goes back or comes back: whether to evict it.
  bool Evict();

  enum class Decision { kTrying, kKeep, kEvict };
  Decision decision() const { return decision_; }

 private:
  Clock now_;
  Decision decision_ = Decision::kTrying;
  int64_t calls_ = 0;
  int64_t round_began_ = 0;
  // Round times, kept ones and evicted ones.
  std::array<std::array<int64_t, kRoundsEach>, 2> rounds_{};
};

}  // namespace cstool
