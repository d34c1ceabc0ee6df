// An array whose elements start uninitialised, for buffers sized for the worst case and
// always written before they are read. Value-initialising them (an aggregate's default
// member values) would write every page up front, and on a VM a page's first touch costs
// microseconds: most of such a buffer is never used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>

namespace cstool {

template <typename T>
struct UninitializedArrayDeleter {
  void operator()(T* p) const { ::operator delete (p, std::align_val_t{alignof(T)}); }
};

template <typename T>
using UninitializedArray = std::unique_ptr<T[], UninitializedArrayDeleter<T>>;

// `n` elements of T. Only for trivially copyable aggregates: operator new creates their
// objects implicitly, so no constructor has to run before the first write.
template <typename T>
UninitializedArray<T> MakeUninitializedArray(size_t n) {
  static_assert(std::is_aggregate_v<T> && std::is_trivially_copyable_v<T> &&
                std::is_trivially_destructible_v<T>);
  if (n > SIZE_MAX / sizeof(T)) throw std::bad_array_new_length();
  return UninitializedArray<T>(
      static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{alignof(T)})));
}

}  // namespace cstool
