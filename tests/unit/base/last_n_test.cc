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

// Newest first, while the callback says go on; the values it changes stay changed; across
// the ring's wrap and before it fills.
TEST(LastN, VisitsNewestFirstWhileAsked) {
  LastN<int, 3> last;
  std::vector<int> seen;
  last.ForEachNewestWhile([&](int& v) {
    seen.push_back(v);
    return true;
  });
  EXPECT_TRUE(seen.empty());
  for (int v : {1, 2}) last.Push(v);
  last.ForEachNewestWhile([&](int& v) {
    seen.push_back(v);
    return true;
  });
  EXPECT_EQ(seen, (std::vector<int>{2, 1}));
  for (int v : {3, 4, 5}) last.Push(v);  // holds 3 4 5, wrapped
  seen.clear();
  last.ForEachNewestWhile([&](int& v) {
    seen.push_back(v);
    v *= 10;
    return v != 40;  // stops after 4
  });
  EXPECT_EQ(seen, (std::vector<int>{5, 4}));
  EXPECT_EQ(Held(last), (std::vector<int>{3, 40, 50}));
}

}  // namespace
}  // namespace cstool
