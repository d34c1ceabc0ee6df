// MakeUninitializedArray hands out memory no constructor has written: a buffer sized for
// the worst case costs page faults only where it is used.
#include "base/uninitialized_array.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdint>
#include <memory>
#include <new>

namespace cstool {
namespace {

struct Record {
  int64_t ts = -1;  // default member values: value-initialising writes every element
  uint32_t size = 7;
};

struct alignas(64) Line {
  uint8_t bytes[64] = {};
};

int64_t MinorFaults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

TEST(UninitializedArray, HoldsWhatIsWritten) {
  auto a = MakeUninitializedArray<Record>(1000);
  for (int i = 0; i < 1000; ++i) a[i] = Record{i, static_cast<uint32_t>(2 * i)};
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(a[i].ts, i);
    EXPECT_EQ(a[i].size, static_cast<uint32_t>(2 * i));
  }
}

TEST(UninitializedArray, RefusesASizeThatOverflows) {
  EXPECT_THROW(MakeUninitializedArray<Record>(SIZE_MAX / sizeof(Record) + 1),
               std::bad_array_new_length);
}

TEST(UninitializedArray, KeepsTheTypesAlignment) {
  for (int n = 1; n < 5; ++n) {
    auto a = MakeUninitializedArray<Line>(n);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.get()) % 64, 0u);
  }
}

// The point of it: 64 MiB of unused elements fault in (next to) no pages, where
// value-initialising the same array faults in all of them (16 384 pages, or 32 huge pages
// where transparent huge pages are always on). Compared, not counted: the allocator's own
// pages and a sanitizer's shadow (an eighth of the array) come on top of either.
TEST(UninitializedArray, TouchesNoPageUntilWritten) {
  constexpr size_t kElements = (size_t{64} << 20) / sizeof(Record);
  MakeUninitializedArray<Record>(1);  // the first call's own costs (symbol binding) before
  int64_t before = MinorFaults();
  auto untouched = MakeUninitializedArray<Record>(kElements);
  const int64_t uninitialized_faults = MinorFaults() - before;
  untouched.reset();
  before = MinorFaults();
  auto written = std::make_unique<Record[]>(kElements);
  const int64_t value_initialized_faults = MinorFaults() - before;
  EXPECT_EQ(written[kElements - 1].size, 7u);
  EXPECT_GT(value_initialized_faults, 0);
  EXPECT_LT(uninitialized_faults * 4, value_initialized_faults);
}

}  // namespace
}  // namespace cstool
