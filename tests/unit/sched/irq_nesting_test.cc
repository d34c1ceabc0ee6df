#include "sched/irq_nesting.h"

#include <gtest/gtest.h>

namespace cstool {
namespace {

TEST(IrqNesting, ClosesInnermostFirstAndTellsHardFromSoft) {
  IrqNames names;
  IrqNesting n;
  EXPECT_FALSE(n.InAny());
  n.Push(IrqKind::kSoftirq, names.Softirq(1, "TIMER"), 10);
  EXPECT_TRUE(n.InAny());
  EXPECT_FALSE(n.InHardirq());
  n.Push(IrqKind::kHardirq, names.Irq(24, "virtio0"), 20);
  EXPECT_TRUE(n.InHardirq());
  auto hard = n.Pop(IrqKind::kHardirq, 30);
  ASSERT_TRUE(hard);
  EXPECT_FALSE(hard->mismatch);
  EXPECT_EQ(*hard->frame.name, "irq:24 virtio0");
  EXPECT_EQ(hard->frame.start, 20);
  EXPECT_FALSE(n.InHardirq());
  auto soft = n.Pop(IrqKind::kSoftirq, 40);
  ASSERT_TRUE(soft);
  EXPECT_EQ(*soft->frame.name, "softirq:TIMER");
  EXPECT_EQ(soft->frame.start, 10);
  EXPECT_FALSE(n.Pop(IrqKind::kSoftirq, 50)) << "an exit with no entry open";
}

TEST(IrqNesting, AnExitOfAnotherKindIsAMismatch) {
  IrqNames names;
  IrqNesting n;
  n.Push(IrqKind::kVector, names.Vector("local_timer"), 5);
  auto closed = n.Pop(IrqKind::kHardirq, 6);
  ASSERT_TRUE(closed);
  EXPECT_TRUE(closed->mismatch);
  EXPECT_EQ(closed->frame.kind, IrqKind::kVector);
  EXPECT_FALSE(n.InHardirq());
}

TEST(IrqNesting, DeeperThanTheStackKeepsCountingWithoutNames) {
  IrqNesting n;
  for (int i = 0; i < 20; ++i) n.Push(IrqKind::kHardirq, nullptr, i);
  for (int i = 19; i >= 0; --i) {
    auto closed = n.Pop(IrqKind::kHardirq, 100);
    ASSERT_TRUE(closed);
    if (i >= 16)
      EXPECT_EQ(closed->frame.start, 100) << "beyond the stack: no start kept";
    else
      EXPECT_EQ(closed->frame.start, i);
  }
  EXPECT_FALSE(n.InAny());
  n.Push(IrqKind::kHardirq, nullptr, 1);
  n.Clear();
  EXPECT_FALSE(n.InAny());
  EXPECT_FALSE(n.InHardirq());
}

TEST(IrqNames, OneNamePerInterruptWithAStableAddress) {
  IrqNames names;
  const std::string* a = names.Irq(1, "i8042");
  EXPECT_EQ(names.Irq(1, "ignored later"), a);
  EXPECT_EQ(*a, "irq:1 i8042");
  EXPECT_EQ(*names.Softirq(3, ""), "softirq:3");
  EXPECT_EQ(*names.Vector("reschedule"), "vector:reschedule");
  EXPECT_EQ(names.Nmi(), "nmi");
}

}  // namespace
}  // namespace cstool
