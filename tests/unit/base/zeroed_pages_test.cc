// ZeroedArray: all zeros, and only the pages written become resident, so a table sized
// for every possible tid costs what the tids seen touch.
#include "base/zeroed_pages.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace cstool {
namespace {

size_t ResidentPages(const void* data, size_t bytes) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident((bytes + page - 1) / page);
  EXPECT_EQ(::mincore(const_cast<void*>(data), bytes, resident.data()), 0);
  size_t n = 0;
  for (unsigned char r : resident) n += r & 1;
  return n;
}

TEST(ZeroedArray, ZerosThatCostOnlyThePagesWritten) {
  constexpr size_t kElements = size_t{1} << 22;
  ZeroedArray<uint32_t> table(kElements);
  ASSERT_EQ(table.size(), kElements);
  const void* data = &table[0];
  const size_t bytes = kElements * sizeof(uint32_t);
  EXPECT_EQ(ResidentPages(data, bytes), 0u);
  table[7] = 1;
  table[kElements - 1] = 2;
  EXPECT_EQ(ResidentPages(data, bytes), 2u);
  EXPECT_EQ(table[7], 1u);
  EXPECT_EQ(table[kElements - 1], 2u);
  EXPECT_EQ(table[kElements / 2], 0u);  // a read of an untouched page: zero

  ZeroedArray<uint32_t> moved = std::move(table);
  EXPECT_EQ(moved[7], 1u);
  EXPECT_EQ(moved.size(), kElements);
}

TEST(ZeroedPages, EmptyAndMoved) {
  ZeroedPages none(0);
  EXPECT_EQ(none.data(), nullptr);
  ZeroedPages some(4096);
  void* const at = some.data();
  ASSERT_NE(at, nullptr);
  none = std::move(some);
  EXPECT_EQ(none.data(), at);
  // A moved-from mapping is empty (and its destructor unmaps nothing).
  EXPECT_EQ(some.data(), nullptr);  // NOLINT(bugprone-use-after-move,clang-analyzer-cplusplus.Move)
  EXPECT_EQ(none.bytes(), 4096u);
}

}  // namespace
}  // namespace cstool
