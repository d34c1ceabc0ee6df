// tid -> internal thread id + 1 (0: none). A dense table for the tids Linux can hand
// out (0 .. PID_MAX_LIMIT), a hash map for anything else (negative or huge values only
// a damaged file holds), so memory follows the number of threads, never a tid's value.
#pragma once

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace cstool {

class TidIndex {
 public:
  uint32_t Get(int32_t tid) const {
    // One compare for the common case: the dense table never grows past kDenseLimit,
    // and a negative tid wraps to a huge index.
    if (static_cast<uint32_t>(tid) < dense_.size()) [[likely]]
      return dense_[static_cast<uint32_t>(tid)];
    if (Dense(tid)) return 0;
    auto it = sparse_.find(tid);
    return it == sparse_.end() ? 0 : it->second;
  }
  void Set(int32_t tid, uint32_t value) {
    if (!Dense(tid)) {
      sparse_[tid] = value;
      return;
    }
    if (static_cast<size_t>(tid) >= dense_.size())
      dense_.resize(std::min<size_t>(static_cast<size_t>(tid) + 1024, kDenseLimit), 0);
    dense_[tid] = value;
  }

 private:
  static constexpr size_t kDenseLimit = size_t{1} << 22;  // PID_MAX_LIMIT on 64-bit
  static bool Dense(int32_t tid) { return tid >= 0 && static_cast<size_t>(tid) < kDenseLimit; }

  std::vector<uint32_t> dense_;
  std::unordered_map<int32_t, uint32_t> sparse_;
};

}  // namespace cstool
