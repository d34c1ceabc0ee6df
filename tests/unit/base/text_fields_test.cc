#include "base/text_fields.h"

#include <gtest/gtest.h>

#include <string>

namespace cstool {
namespace {

TEST(TextFields, EventNamesAreLettersDigitsAndUnderscores) {
  EXPECT_TRUE(IsEventName("sched_switch"));
  EXPECT_TRUE(IsEventName("irq_vectors"));
  EXPECT_TRUE(IsEventName("9p"));
  EXPECT_FALSE(IsEventName(""));
  EXPECT_FALSE(IsEventName(".."));
  EXPECT_FALSE(IsEventName("sched/sched_switch"));
  EXPECT_FALSE(IsEventName("a b"));
  EXPECT_FALSE(IsEventName(std::string("a\0b", 3)));
}

// A name from a damaged file reaches a terminal without its control bytes.
TEST(TextFields, VisibleTextWritesControlBytesInHex) {
  EXPECT_EQ(VisibleText("cstool-fixture"), "cstool-fixture");
  EXPECT_EQ(VisibleText("cstool-fixture\x19"), "cstool-fixture\\x19");
  EXPECT_EQ(VisibleText(std::string("a\0b\x7f\n", 5)), "a\\x00b\\x7f\\x0a");
  EXPECT_EQ(VisibleText("caf\xc3\xa9"), "caf\xc3\xa9");  // UTF-8 stays
  EXPECT_EQ(VisibleText(""), "");
}

}  // namespace
}  // namespace cstool
