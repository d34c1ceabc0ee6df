// Steal time per CPU: /proc/stat's steal column, the runqueue clocks' difference, and
// pairing the start and end readings.
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

// Abridged from a 6.18 kernel's /sys/kernel/debug/sched/debug: the clocks are ms.ns.
constexpr const char* kSchedDebug =
    "Sched Debug Version: v0.11, 6.18.44 #1\n"
    "ktime                                   : 60089478.313364\n"
    "sched_clk                               : 60089451.950019\n"
    "cpu#0, 2596.142 MHz\n"
    "  .nr_running                    : 0\n"
    "  .clock                         : 60089451.901930\n"
    "  .clock_task                    : 59810820.664777\n"
    "  .avg_idle                      : 870315\n"
    "cfs_rq[0]:/autogroup-79\n"
    "  .exec_clock                    : 0.000000\n"
    "cpu#1\n"
    "  .clock_task                    : 1000.000001\n"
    "  .clock                         : 1000.000500\n"
    "  .clock                         : 9999.000000\n";

TEST(CpuSteal, TheRunqueueClocksDifferenceIsEachCpusSteal) {
  const std::vector<CpuStealReading> r = ParseRqClockSteal(kSchedDebug);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].cpu, 0);
  EXPECT_EQ(r[0].steal_ns, 60089451901930 - 59810820664777);
  EXPECT_EQ(r[1].cpu, 1);  // (no "MHz" on some architectures; its first .clock only)
  EXPECT_EQ(r[1].steal_ns, 499);
}

TEST(CpuSteal, ACpuWithoutBothClocksOrWithAMalformedOneIsLeftOut) {
  const char* text =
      "cpu#0, 1.0 MHz\n"
      "  .clock                         : 5.000000\n"
      "cpu#1, 1.0 MHz\n"
      "  .clock                         : 5.00000\n"  // five decimals: not the kernel's
      "  .clock_task                    : 4.000000\n"
      "cpu#2, 1.0 MHz\n"
      "  .clock                         : 4.000000\n"  // behind its run-time clock
      "  .clock_task                    : 5.000000\n"
      "cpu#x, 1.0 MHz\n"
      "  .clock                         : 5.000000\n"
      "  .clock_task                    : 4.000000\n"
      "cpu#3, 1.0 MHz\n"
      "  .clock                         : 5.000007\n"
      "  .clock_task                    : 5.000000";  // no final newline
  const std::vector<CpuStealReading> r = ParseRqClockSteal(text);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].cpu, 3);
  EXPECT_EQ(r[0].steal_ns, 7);
  EXPECT_TRUE(ParseRqClockSteal("").empty());
}

// Where the runqueue clocks are the source, two readings a moment apart differ by what
// the host stole meanwhile: never backwards.
TEST(CpuSteal, TheChosenSourceReadsEveryCpuAndNeverGoesBack) {
  const StealSource source = StealSource::Choose();
  const std::vector<CpuStealReading> a = source.Read();
  if (a.empty()) GTEST_SKIP() << "no steal reading here (/proc/stat unreadable)";
  const std::vector<CpuStealReading> b = source.Read();
  EXPECT_EQ(a.size(), static_cast<size_t>(::sysconf(_SC_NPROCESSORS_ONLN)));
  const std::vector<CpuSteal> p = PairSteal(a, b);
  ASSERT_EQ(p.size(), a.size());
  for (const CpuSteal& c : p) EXPECT_GE(c.end_ns, c.start_ns) << c.cpu;
  if (source.step_ns() == 1) {
    EXPECT_STREQ(source.name(), StealSource::kRqClocks);
  }
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
