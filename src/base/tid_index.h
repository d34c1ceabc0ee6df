// tid -> internal thread id + 1 (0: none). A table for the tids Linux can hand out
// (0 .. PID_MAX_LIMIT) whose pages are touched only where a tid was set, and a hash map
// for anything else (negative or huge values only a damaged file holds), so memory
// follows the number of threads, never a tid's value.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "base/zeroed_pages.h"

namespace cstool {

class TidIndex {
 public:
  TidIndex() = default;
  // Not movable: the table's size is a constant that Get relies on, which a moved-from
  // (empty) table would not have.
  TidIndex(TidIndex&&) = delete;
  TidIndex& operator=(TidIndex&&) = delete;

  uint32_t Get(int32_t tid) const {
    // One compare for the common case; a negative tid wraps to a huge index.
    if (static_cast<uint32_t>(tid) < kDenseLimit) [[likely]]
      return dense_[static_cast<uint32_t>(tid)];
    auto it = sparse_.find(tid);
    return it == sparse_.end() ? 0 : it->second;
  }
  void Set(int32_t tid, uint32_t value) {
    if (static_cast<uint32_t>(tid) < kDenseLimit)
      dense_[static_cast<uint32_t>(tid)] = value;
    else
      sparse_[tid] = value;
  }

 private:
  static constexpr uint32_t kDenseLimit = uint32_t{1} << 22;  // PID_MAX_LIMIT on 64-bit

  ZeroedArray<uint32_t> dense_{kDenseLimit};
  std::unordered_map<int32_t, uint32_t> sparse_;
};

}  // namespace cstool
