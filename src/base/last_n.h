// The last N values pushed, in a fixed ring that overwrites the oldest: recent history
// kept per CPU at the cost of an array, whatever the length of the trace.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

namespace cstool {

template <typename T, size_t N>
class LastN {
 public:
  void Push(const T& value) { items_[pushed_++ % N] = value; }
  bool empty() const { return pushed_ == 0; }
  const T& newest() const { return items_[(pushed_ - 1) % N]; }  // (not when empty())
  // Calls `f` on each value held, oldest first.
  template <typename F>
  void ForEach(F&& f) const {
    const uint64_t held = std::min<uint64_t>(pushed_, N);
    for (uint64_t i = pushed_ - held; i < pushed_; ++i) f(items_[i % N]);
  }
  // Calls `f` on each value held, newest first, while it returns true.
  template <typename F>
  void ForEachNewestWhile(F&& f) {
    const uint64_t oldest = pushed_ - std::min<uint64_t>(pushed_, N);
    for (uint64_t i = pushed_; i > oldest; --i)
      if (!f(items_[(i - 1) % N])) return;
  }

 private:
  std::array<T, N> items_{};
  uint64_t pushed_ = 0;
};

}  // namespace cstool
