// The report's order: every --sort key and the column titles that name them.
#include "analysis/report_view.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "base/errors.h"
#include "model/syscall_table.h"

namespace cstool {
namespace {

// Three workload threads whose wait before a migration and migration count disagree in
// order with their tids, so that each key's order is its own.
class SortByMigrations : public ::testing::Test {
 protected:
  SortByMigrations() {
    Add(20, 3, 0, 100);  // (not in tid order: the tid key has an order to make)
    Add(10, /*migrations=*/1, /*wakeup_ns=*/500, /*preempted_ns=*/0);
    Add(30, 2, 300, 400);
  }

  void Add(int32_t tid, uint64_t migrations, int64_t wakeup_ns, int64_t preempted_ns) {
    Thread& t = threads_.emplace_back();
    t.tid = tid;
    t.tgid = tid;
    t.tracked = true;
    t.id = static_cast<uint32_t>(threads_.size() - 1);
    ThreadReport& r = model_.For(t);
    r.migrations = migrations;
    r.wait_before_migration_wakeup_ns = wakeup_ns;
    r.wait_before_migration_preempted_ns = preempted_ns;
  }

  std::vector<int32_t> Order(const std::string& sort) {
    ViewOptions options;
    options.sort = sort;
    const ReportView view = BuildView(model_, syscalls_, options);
    std::vector<int32_t> tids;
    for (const ThreadReport* r : view.threads) tids.push_back(r->thread->tid);
    return tids;
  }

  std::deque<Thread> threads_;  // stable addresses: the reports point at them
  ReportModel model_;
  SyscallTable syscalls_;
};

TEST_F(SortByMigrations, TheWaitBeforeAMoveSortsByBothKindsOfWait) {
  EXPECT_EQ(Order("before_migration"), (std::vector<int32_t>{30, 10, 20}));  // 700, 500, 100
  EXPECT_EQ(Order("migrations"), (std::vector<int32_t>{20, 30, 10}));
  EXPECT_EQ(Order("tid"), (std::vector<int32_t>{10, 20, 30}));
}

TEST_F(SortByMigrations, WakersColumnTitlesNameTheirKeys) {
  EXPECT_EQ(Order("PREMIG"), Order("before_migration"));
  EXPECT_EQ(Order("premig(ms)"), Order("before_migration"));
  EXPECT_EQ(Order("MIGR"), Order("migrations"));
}

// perf sched latency's question, the worst single wait: MAXWAIT, not the total wait.
TEST_F(SortByMigrations, TheLongestWaitSortsByTheWorstSingleWait) {
  model_.threads[0].longest_wait_ns = 50;   // tid 20
  model_.threads[1].longest_wait_ns = 900;  // tid 10
  model_.threads[2].longest_wait_ns = 200;  // tid 30
  EXPECT_EQ(Order("longest_wait"), (std::vector<int32_t>{10, 30, 20}));
  EXPECT_EQ(Order("MAXWAIT"), Order("longest_wait"));
  EXPECT_EQ(Order("maxwait(ms)"), Order("longest_wait"));
}

TEST_F(SortByMigrations, AnUnknownKeyListsTheKeys) {
  try {
    Order("premigration");
    FAIL() << "an unknown key was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("before_migration"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cstool
