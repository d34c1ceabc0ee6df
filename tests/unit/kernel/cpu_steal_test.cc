// /proc/stat's steal column per CPU, and pairing the start and end readings.
#include "kernel/cpu_steal.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace cstool {
namespace {

TEST(CpuSteal, ReadsTheEighthColumnOfEachCpuLine) {
  const char* text =
      "cpu  1397980 1154 301633 1072376 7932 0 1469 1163 0 0\n"
      "cpu0 657413 611 136707 591691 2354 0 141 610 0 0\n"
      "cpu1 740566 543 164926 480684 5578 0 1328 553 0 0\n"
      "intr 123 4 5\n"
      "ctxt 99\n"
      "cpu12 1 2 3 4 5 6 7 8\n";
  const std::vector<CpuStealReading> r = ParseCpuSteal(text, 10000000);
  ASSERT_EQ(r.size(), 3u);  // the all-CPU line is not a CPU
  EXPECT_EQ(r[0].cpu, 0);
  EXPECT_EQ(r[0].steal_ns, 6100000000);
  EXPECT_EQ(r[1].cpu, 1);
  EXPECT_EQ(r[1].steal_ns, 5530000000);
  EXPECT_EQ(r[2].cpu, 12);
  EXPECT_EQ(r[2].steal_ns, 80000000);
}

TEST(CpuSteal, LinesWithoutAStealColumnOrNumberAreSkipped) {
  // Kernels before 2.6.11 had seven columns; a damaged line has a word where a number is.
  const char* text =
      "cpu0 1 2 3 4 5 6 7\n"
      "cpu1 1 2 3 4 5 6 7 x 9\n"
      "cpux 1 2 3 4 5 6 7 8\n"
      "cpu2 1 2 3 4 5 6 7 9";  // no final newline
  const std::vector<CpuStealReading> r = ParseCpuSteal(text, 1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].cpu, 2);
  EXPECT_EQ(r[0].steal_ns, 9);
  EXPECT_TRUE(ParseCpuSteal("", 1).empty());
}

TEST(CpuSteal, PairsTheSameCpusOnly) {
  const std::vector<CpuSteal> p =
      PairSteal({{0, 100}, {1, 200}, {3, 5}}, {{1, 260}, {0, 100}, {2, 7}});
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].cpu, 0);
  EXPECT_EQ(p[0].Stolen(), 0);
  EXPECT_EQ(p[1].cpu, 1);
  EXPECT_EQ(p[1].Stolen(), 60);
}

TEST(CpuSteal, TheLiveReadingHasCpus) {
  const std::vector<CpuStealReading> r = ReadCpuSteal();
  if (r.empty()) GTEST_SKIP() << "/proc/stat is not readable here";
  EXPECT_GE(r.size(), 1u);
  for (const CpuStealReading& c : r) {
    EXPECT_GE(c.cpu, 0);
    EXPECT_GE(c.steal_ns, 0);
  }
}

}  // namespace
}  // namespace cstool
