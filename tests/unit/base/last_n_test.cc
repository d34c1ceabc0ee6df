// LastN keeps the values pushed last, oldest first, whatever came before.
#include "base/last_n.h"

#include <gtest/gtest.h>

#include <vector>

namespace cstool {
namespace {

std::vector<int> Held(const LastN<int, 3>& last) {
  std::vector<int> out;
  last.ForEach([&](int v) { out.push_back(v); });
  return out;
}

TEST(LastN, HoldsTheLastNOldestFirst) {
  LastN<int, 3> last;
  EXPECT_TRUE(Held(last).empty());
  EXPECT_TRUE(last.empty());
  last.Push(1);
  last.Push(2);
  EXPECT_EQ(Held(last), (std::vector<int>{1, 2}));
  EXPECT_EQ(last.newest(), 2);
  last.Push(3);
  last.Push(4);
  last.Push(5);
  EXPECT_EQ(Held(last), (std::vector<int>{3, 4, 5}));
  EXPECT_FALSE(last.empty());
  EXPECT_EQ(last.newest(), 5);
}

}  // namespace
}  // namespace cstool
