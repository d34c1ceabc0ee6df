// Thread::SegmentList: the held segments' storage (appends inline, grows out of line).
#include <gtest/gtest.h>

#include <utility>

#include "sched/thread.h"

namespace cstool {
namespace {

using Segment = Thread::Segment;
using SegmentList = Thread::SegmentList;

Segment Seg(int64_t start) {
  return {Microstate::kUser, AbstractState::kNone, 0, start, start + 1};
}

std::vector<int64_t> Starts(const SegmentList& l) {
  std::vector<int64_t> out;
  for (const Segment& s : l) out.push_back(s.start);
  return out;
}

TEST(SegmentList, KeepsEveryAppendAcrossGrowth) {
  SegmentList l;
  EXPECT_TRUE(l.empty());
  std::vector<int64_t> want;
  for (int64_t i = 0; i < 100; ++i) {
    l.push_back(Seg(i));
    want.push_back(i);
  }
  EXPECT_EQ(l.size(), 100u);
  EXPECT_EQ(Starts(l), want);
  l[3].start = 42;
  EXPECT_EQ(l[3].start, 42);
}

TEST(SegmentList, TruncateAndClearKeepTheStorageForReuse) {
  SegmentList l;
  for (int64_t i = 0; i < 10; ++i) l.push_back(Seg(i));
  l.truncate(4);
  EXPECT_EQ(Starts(l), (std::vector<int64_t>{0, 1, 2, 3}));
  l.truncate(40);  // never grows
  EXPECT_EQ(l.size(), 4u);
  l.clear();
  EXPECT_TRUE(l.empty());
  l.push_back(Seg(7));
  EXPECT_EQ(Starts(l), (std::vector<int64_t>{7}));
}

TEST(SegmentList, SwapAndMoveCarryTheSegments) {
  SegmentList a, b;
  for (int64_t i = 0; i < 3; ++i) a.push_back(Seg(i));
  b.push_back(Seg(9));
  a.swap(b);
  EXPECT_EQ(Starts(a), (std::vector<int64_t>{9}));
  EXPECT_EQ(Starts(b), (std::vector<int64_t>{0, 1, 2}));
  SegmentList c(std::move(b));
  EXPECT_EQ(Starts(c), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_TRUE(b.empty());  // NOLINT(bugprone-use-after-move): a moved-from list is empty
  a = std::move(c);
  EXPECT_EQ(Starts(a), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_TRUE(c.empty());  // NOLINT(bugprone-use-after-move)
}

}  // namespace
}  // namespace cstool
