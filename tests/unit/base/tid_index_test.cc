// TidIndex: tids from a damaged file (negative, or beyond any pid Linux hands out) must
// neither index out of bounds nor size the dense table (fuzzer finding: a 2^29 tid
// made StateMachine allocate 2 GB; tests/fuzz/regressions/oom-huge-tid-in-sched-event).
#include "base/tid_index.h"

#include <gtest/gtest.h>

namespace cstool {
namespace {

TEST(TidIndex, RealAndDamagedTids) {
  TidIndex index;
  EXPECT_EQ(index.Get(42), 0u);
  index.Set(42, 7);
  EXPECT_EQ(index.Get(42), 7u);
  for (int32_t tid : {-1, -2147483647 - 1, 540000000, 2147483647}) {
    EXPECT_EQ(index.Get(tid), 0u) << tid;
    index.Set(tid, 9);
    EXPECT_EQ(index.Get(tid), 9u) << tid;
    index.Set(tid, 0);
    EXPECT_EQ(index.Get(tid), 0u) << tid;
  }
  index.Set((1 << 22) - 1, 3);  // the largest pid Linux can use
  EXPECT_EQ(index.Get((1 << 22) - 1), 3u);
  EXPECT_EQ(index.Get(42), 7u);
}

}  // namespace
}  // namespace cstool
