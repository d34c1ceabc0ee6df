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
  // Calls `f` on each value held, oldest first (which may change it, on a LastN it may).
  template <typename F>
  void ForEach(F&& f) const {
    ForEachIn(*this, f);
  }
  template <typename F>
  void ForEach(F&& f) {
    ForEachIn(*this, f);
  }
  // Calls `f` on each value held, newest first, while it returns true.
  template <typename F>
  void ForEachNewestWhile(F&& f) {
    const uint64_t oldest = pushed_ - std::min<uint64_t>(pushed_, N);
    for (uint64_t i = pushed_; i > oldest; --i)
      if (!f(items_[(i - 1) % N])) return;
  }

 private:
  template <typename Self, typename F>
  static void ForEachIn(Self& self, F& f) {
    const uint64_t held = std::min<uint64_t>(self.pushed_, N);
    for (uint64_t i = self.pushed_ - held; i < self.pushed_; ++i) f(self.items_[i % N]);
  }

  std::array<T, N> items_{};
  uint64_t pushed_ = 0;
};

}  // namespace cstool
