// The critical path's table joins a thread's consecutive on-CPU segments into one row;
// the machine formats keep one row per segment.
#include "output/critical_path_output.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "sched/thread.h"

namespace cstool {
namespace {

constexpr int64_t kStart = 1'000'000'000;

class CriticalPathOutputTest : public ::testing::Test {
 protected:
  CriticalPathOutputTest() {
    a_.tid = a_.tgid = 10;
    a_.comm = "a";
    b_.tid = 11;
    b_.tgid = 10;
    b_.comm = "b";
    path_.target = &a_;
    path_.from = kStart;
    path_.to = kStart + 60'000;
  }
  void Add(const Thread& t, Microstate s, int64_t from_us, int64_t to_us,
           PathEnd ends = PathEnd::kNone, bool lost = false) {
    path_.segments.push_back(
        {&t, s, kStart + from_us * 1000, kStart + to_us * 1000, ends, {}, lost});
  }
  std::string Render(std::string_view format, size_t rows = kCriticalPathRows) {
    std::ostringstream os;
    RenderCriticalPath(path_, kStart, format, os, rows);
    return os.str();
  }

  Thread a_, b_;
  CriticalPath path_;
};

TEST_F(CriticalPathOutputTest, ATableRowJoinsAThreadsConsecutiveOnCpuSegments) {
  Add(a_, Microstate::kUser, 0, 10);
  Add(a_, Microstate::kSys, 10, 15);
  Add(a_, Microstate::kIrq, 15, 16);
  Add(a_, Microstate::kUser, 16, 20);
  Add(b_, Microstate::kWaitCpuWakeup, 20, 24);  // another thread: a row of its own
  Add(b_, Microstate::kSys, 24, 30);
  Add(b_, Microstate::kUser, 30, 31);
  Add(b_, Microstate::kSleep, 31, 40, PathEnd::kIdleWaker);
  Add(a_, Microstate::kSys, 40, 45);
  Add(a_, Microstate::kUser, 45, 50, PathEnd::kNone, /*lost=*/true);  // says so: alone
  Add(a_, Microstate::kUser, 50, 60);
  EXPECT_EQ(Render("table"),
            "CRITICAL PATH of 10 a (pid 10) from 0.000000 s to 0.000060 s: wall 0.060 ms in 11 "
            "segments (times from the trace start; a thread's consecutive on-CPU segments share "
            "a row)\n"
            "    START(s)    DUR(ms)      TID COMM             STATE                  NOTE\n"
            "    0.000000      0.020       10 a                user+sys+irq           \n"
            "    0.000020      0.004       11 b                wait_cpu_wakeup        \n"
            "    0.000024      0.007       11 b                user+sys               \n"
            "    0.000031      0.009       11 b                sleep                  " +
                std::string(PathEndLabel(PathEnd::kIdleWaker)) +
                "\n"
                "    0.000040      0.005       10 a                sys                    \n"
                "    0.000045      0.005       10 a                user                   lost "
                "events inside\n"
                "    0.000050      0.010       10 a                user                   \n"
                "\n"
                "ON THE PATH (the wall time each thread explains, by microstate)\n"
                "     TID     PID COMM               TIME(ms)      %  MICROSTATES (ms)\n"
                "      10      10 a                     0.040   66.7  user 0.029, sys 0.010, "
                "irq 0.001\n"
                "      11      10 b                     0.020   33.3  user 0.001, sys 0.006, "
                "wait_cpu_wakeup 0.004, sleep 0.009\n");
  // CSV keeps every segment.
  const std::string csv = Render("csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 12) << csv;
}

// Beyond the row limit the table keeps the longest rows (the earlier at a tie) in time
// order and folds each run of the others into a "..." line with their time and count, so
// the shown and folded durations still add up to the wall time.
TEST_F(CriticalPathOutputTest, BeyondTheLimitTheLongestRowsStayAndTheRestFold) {
  Add(a_, Microstate::kUser, 0, 10);               // 10 us
  Add(b_, Microstate::kWaitCpuWakeup, 10, 14);     // 4
  Add(b_, Microstate::kUser, 14, 17);              // 3
  Add(a_, Microstate::kSleep, 17, 40);             // 23: the longest
  Add(b_, Microstate::kUser, 40, 50);              // 10: ties with the first, later
  Add(a_, Microstate::kWaitCpuPreempted, 50, 60);  // 10
  const std::string header =
      "CRITICAL PATH of 10 a (pid 10) from 0.000000 s to 0.000060 s: wall 0.060 ms in 6 "
      "segments (times from the trace start; a thread's consecutive on-CPU segments share "
      "a row)\n";
  const std::string columns =
      "    START(s)    DUR(ms)      TID COMM             STATE                  NOTE\n";
  const std::string two = Render("table", 2);
  EXPECT_EQ(two.substr(0, two.find("\nON THE PATH")),
            header +
                "the 2 longest of 6 rows and every row that warns (lost events, an unknown "
                "waker or state), in time order; each \"...\" line holds the rows between "
                "(--limit 0: every row)\n" +
                columns +
                "    0.000000      0.010       10 a                user                   \n"
                "         ...      0.007          2 rows\n"
                "    0.000017      0.023       10 a                sleep                  \n"
                "         ...      0.020          2 rows\n");
  // One row folded alone says "row".
  const std::string five = Render("table", 5);
  EXPECT_NE(five.find("         ...      0.003          1 row\n"), std::string::npos) << five;
  // At the limit, or with no limit, every row and no fold.
  for (size_t rows : {size_t{6}, size_t{0}}) {
    const std::string all = Render("table", rows);
    EXPECT_EQ(all.find("..."), std::string::npos) << all;
    EXPECT_EQ(all.find("longest of"), std::string::npos) << all;
    EXPECT_NE(all.find("    0.000014      0.003       11 b                user"), std::string::npos)
        << all;
  }
  // The machine formats keep every segment whatever the limit.
  const std::string csv = Render("csv", 2);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 7) << csv;
}

// A row that warns (lost events inside, an unknown waker) is never folded away: the
// header's warning points at it. Where the chain ends at an interrupt or the idle task is
// no warning (a thread woken by its timer ends it at every wakeup): such a row is shown
// by its length like any other, so the table keeps to about --limit rows.
TEST_F(CriticalPathOutputTest, RowsThatWarnAreNeverFolded) {
  Add(a_, Microstate::kUser, 0, 20);
  Add(b_, Microstate::kSleep, 20, 21, PathEnd::kUnknownWaker);  // short, but uncertain
  Add(b_, Microstate::kWaitCpuWakeup, 21, 22);
  Add(a_, Microstate::kUser, 22, 23, PathEnd::kNone, /*lost=*/true);  // short, lost events
  Add(a_, Microstate::kSleep, 23, 59);
  Add(b_, Microstate::kSleep, 59, 60, PathEnd::kIrqWaker);  // short: the chain ends, folded
  const std::string one = Render("table", 1);
  EXPECT_NE(one.find("    0.000020      0.001       11 b                sleep                  " +
                     std::string(PathEndLabel(PathEnd::kUnknownWaker)) + "\n"),
            std::string::npos)
      << one;
  EXPECT_NE(one.find("lost events inside\n"), std::string::npos) << one;
  EXPECT_NE(one.find("    0.000023      0.036       10 a                sleep"), std::string::npos)
      << one;
  // The first user row (20 us), the wait (1 us) and the timer-woken sleep fold, each alone.
  EXPECT_NE(one.find("         ...      0.020          1 row\n"), std::string::npos) << one;
  EXPECT_NE(one.find("         ...      0.001          1 row\n"), std::string::npos) << one;
  EXPECT_EQ(one.find(std::string(PathEndLabel(PathEnd::kIrqWaker))), std::string::npos) << one;
  // With room for it, the longest rows include it like any other.
  const std::string all = Render("table", 0);
  EXPECT_NE(all.find(std::string(PathEndLabel(PathEnd::kIrqWaker))), std::string::npos) << all;
}

}  // namespace
}  // namespace cstool
