// A large array of zeros that costs only the pages written: an anonymous mapping, whose
// pages the kernel hands out zeroed at their first touch. For tables indexed by a sparse
// key (a tid up to 4 M): a vector's zero fill would touch every page up to the largest
// key, and on a VM each first touch costs microseconds. (calloc maps fresh pages too, but
// only while its mmap threshold, which a freed large block raises, lets it: then it clears
// the whole block from the heap.)
#pragma once

#include <cstddef>
#include <type_traits>

namespace cstool {

class ZeroedPages {
 public:
  // `bytes` of zeros; throws std::bad_alloc when the address space is not there.
  explicit ZeroedPages(size_t bytes);
  ~ZeroedPages();
  ZeroedPages(ZeroedPages&& o) noexcept : data_(o.data_), bytes_(o.bytes_) {
    o.data_ = nullptr;
    o.bytes_ = 0;
  }
  ZeroedPages& operator=(ZeroedPages&& o) noexcept;
  ZeroedPages(const ZeroedPages&) = delete;
  ZeroedPages& operator=(const ZeroedPages&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// `n` elements of T, all zero bits (T: an integer, or an aggregate whose zero is its
// zero bits).
template <typename T>
class ZeroedArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  explicit ZeroedArray(size_t n) : pages_(n * sizeof(T)) {}
  T& operator[](size_t i) { return static_cast<T*>(pages_.data())[i]; }
  const T& operator[](size_t i) const { return static_cast<const T*>(pages_.data())[i]; }
  size_t size() const { return pages_.bytes() / sizeof(T); }

 private:
  ZeroedPages pages_;
};

}  // namespace cstool
