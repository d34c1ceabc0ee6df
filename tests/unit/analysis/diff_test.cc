// cstool diff on synthetic recordings: the matching rule (processes by name, threads by
// role and comm, namesakes by creation order), the statistics (mean, min..max spread, the
// significance flag) and the order of the rows.
#include "analysis/diff.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "analysis/diff_matching.h"
#include "analysis/diff_stats.h"

namespace cstool {
namespace {

constexpr int64_t kMs = 1000000;

DiffThread Thread(int32_t tid, int32_t pid, std::string comm, bool created = false,
                  int64_t first_ts = 0) {
  DiffThread t;
  t.tid = tid;
  t.pid = pid;
  t.comm = std::move(comm);
  t.created_in_trace = created;
  t.first_ts = first_ts;
  t.lifetime_ns = 100 * kMs;
  t.microstates[static_cast<size_t>(Microstate::kUser)] = 100 * kMs;
  return t;
}

void Set(DiffThread& t, Microstate m, int64_t ns) {
  t.microstates[static_cast<size_t>(m)] = ns;
  t.lifetime_ns = 0;
  for (int64_t v : t.microstates) t.lifetime_ns += v;
}

std::vector<std::string> Texts(const DiffRecording& r) {
  const KeyedRecording k = KeyRecording(r);
  std::vector<std::string> out;
  for (const SubjectKey& key : k.thread_keys) out.push_back(key.Text());
  return out;
}

const DiffSubject* Find(const DiffResult& r, const std::string& text) {
  for (const DiffSubject& s : r.subjects)
    if (s.text == text) return &s;
  return nullptr;
}

// --- matching ------------------------------------------------------------------------

TEST(DiffMatching, SameNamedThreadsByCreationOrder) {
  // Threads alive before the trace rank by tid; those it saw created follow, by time.
  DiffRecording r{"a.dat",
                  {Thread(100, 100, "srv"), Thread(105, 100, "worker", true, 50),
                   Thread(103, 100, "worker", true, 20), Thread(101, 100, "worker"),
                   Thread(102, 100, "logger")}};
  EXPECT_EQ(Texts(r), (std::vector<std::string>{"srv (main)", "srv/worker#3", "srv/worker#2",
                                                "srv/worker", "srv/logger"}));
}

TEST(DiffMatching, ProcessesByNameAndCreationOrder) {
  DiffRecording r{
      "a.dat",
      {Thread(300, 300, "sh", true, 90), Thread(200, 200, "sh", true, 10), Thread(50, 50, "sh"),
       Thread(7, 0, "kworker"), Thread(9, 0, "kworker"), Thread(60, 60, "make")}};
  const KeyedRecording k = KeyRecording(r);
  std::vector<std::string> processes;
  for (const KeyedProcess& p : k.processes)
    processes.push_back(p.key.Text() + "=" + std::to_string(p.pid));
  EXPECT_EQ(processes, (std::vector<std::string>{"sh=50", "make=60", "sh#2=200", "sh#3=300"}));
  EXPECT_EQ(Texts(r), (std::vector<std::string>{"sh#3 (main)", "sh#2 (main)", "sh (main)",
                                                "-/kworker", "-/kworker#2", "make (main)"}));
}

TEST(DiffMatching, ProcessNameIsTheMainThreads) {
  // The main thread renamed itself; the worker kept the old name.
  DiffRecording r{"a.dat", {Thread(11, 10, "old"), Thread(10, 10, "new")}};
  EXPECT_EQ(Texts(r), (std::vector<std::string>{"new/old", "new (main)"}));
}

TEST(DiffMatching, MatchesAcrossRecordingsWhateverTheIds) {
  DiffRecording base{
      "b.dat", {Thread(100, 100, "srv"), Thread(101, 100, "worker"), Thread(102, 100, "worker")}};
  DiffRecording after{"n.dat",
                      {Thread(900, 900, "srv"), Thread(950, 900, "worker", true, 5),
                       Thread(940, 900, "worker", true, 1)}};
  const DiffResult r = DiffRecordings({base}, {after});
  const DiffSubject* main = Find(r, "srv (main)");
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(main->base_ids, std::vector<int32_t>{100});
  EXPECT_EQ(main->after_ids, std::vector<int32_t>{900});
  const DiffSubject* w1 = Find(r, "srv/worker");
  ASSERT_NE(w1, nullptr);
  EXPECT_EQ(w1->base_ids, std::vector<int32_t>{101});
  EXPECT_EQ(w1->after_ids, std::vector<int32_t>{940});  // created first
  const DiffSubject* w2 = Find(r, "srv/worker#2");
  ASSERT_NE(w2, nullptr);
  EXPECT_EQ(w2->after_ids, std::vector<int32_t>{950});
  const DiffSubject* proc = Find(r, "srv");
  ASSERT_NE(proc, nullptr);
  EXPECT_FALSE(proc->key.is_thread);
  EXPECT_EQ(proc->after_ids, std::vector<int32_t>{900});
  for (const DiffSubject& s : r.subjects) EXPECT_TRUE(s.matched()) << s.text;
}

TEST(DiffMatching, OneSidedThreadsAndProcessesAreListed) {
  DiffRecording base{"b.dat", {Thread(100, 100, "srv"), Thread(101, 100, "worker")}};
  DiffRecording after{"n.dat",
                      {Thread(200, 200, "srv"), Thread(201, 200, "worker"),
                       Thread(202, 200, "worker"), Thread(300, 300, "helper")}};
  const DiffResult r = DiffRecordings({base}, {after});
  std::vector<std::string> new_only, base_only;
  for (const DiffSubject& s : r.subjects) {
    if (!s.in_base()) new_only.push_back(s.text);
    if (!s.in_after()) base_only.push_back(s.text);
  }
  EXPECT_EQ(new_only, (std::vector<std::string>{"helper (main)", "srv/worker#2", "helper"}));
  EXPECT_TRUE(base_only.empty());
  // No rows for what is on one side only.
  for (const DiffRow& row : r.rows) EXPECT_TRUE(r.subjects[row.subject].matched());
}

// --- statistics ----------------------------------------------------------------------

TEST(DiffStats, MeanAndMinMaxSpread) {
  const SideStats s = Summarize({6, 1, 2});
  EXPECT_EQ(s.runs(), 3u);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 6);
  EXPECT_EQ(s.spread(), 5);
}

TEST(DiffStats, SignificantWhenTheChangeExceedsBothSpreads) {
  Comparison c = Compare({10, 11, 12}, {20, 20.5, 21});  // change 9.5; spreads 2 and 1
  EXPECT_DOUBLE_EQ(c.change, 9.5);
  EXPECT_EQ(c.significant, true);
  c = Compare({10, 15, 20}, {21, 21.5, 22});  // change 6.5 < base spread 10
  EXPECT_EQ(c.significant, false);
  c = Compare({10, 10.5, 11}, {12, 17, 22});  // change 6.5 < new spread 10
  EXPECT_EQ(c.significant, false);
  c = Compare({10, 11, 12}, {8, 8, 8});  // a decrease: -3, |3| > 2 and > 0
  EXPECT_DOUBLE_EQ(c.change, -3);
  EXPECT_EQ(c.significant, true);
  c = Compare({10, 11, 12}, {12, 13, 14});  // change 2 equals the spreads: not beyond them
  EXPECT_EQ(c.significant, false);
  c = Compare({5, 5, 5}, {5, 5, 5});
  EXPECT_EQ(c.change, 0);
  EXPECT_EQ(c.significant, false);
}

// Identical runs on each side have no spread: a change below what the tables show (0.3 us
// of a syscall's time, displayed as 0.000 ms) is no finding.
TEST(DiffStats, AChangeBelowTheResolutionIsNotSignificant) {
  const double us = DiffResolution(DiffUnit::kNs);
  EXPECT_EQ(us, 1000);
  const std::vector<double> base(3, 2000);
  EXPECT_EQ(Compare(base, {2300, 2300, 2300}, us).significant, false);  // "0.000"
  EXPECT_EQ(Compare(base, {2600, 2600, 2600}, us).significant, true);   // "+0.001"
  EXPECT_EQ(Compare(base, {2300, 2300, 2300}).significant, true);       // no resolution given
  const double count = DiffResolution(DiffUnit::kCount);
  EXPECT_EQ(Compare({3, 3, 3}, {3.04, 3.04, 3.04}, count).significant, false);
  EXPECT_EQ(Compare({0.2, 0.2, 0.2}, {0.3, 0.3, 0.3}, count).significant, true);
}

// Two runs a side have a narrow spread by chance too often: identical runs would have a
// row in five flagged. Three are the least that tell a finding.
TEST(DiffStats, FewerThanThreeRunsOnASideLeaveSignificanceUnknown) {
  EXPECT_EQ(Compare({10}, {20, 21, 22}).significant, std::nullopt);
  EXPECT_EQ(Compare({10, 11, 12}, {20}).significant, std::nullopt);
  EXPECT_EQ(Compare({10, 11}, {20, 21}).significant, std::nullopt);
  EXPECT_EQ(Compare({10, 11, 12}, {20, 21}).significant, std::nullopt);
  EXPECT_EQ(Compare({10, 11, 12}, {20, 21, 22}).significant, true);
  EXPECT_DOUBLE_EQ(Compare({10}, {20}).change, 10);
}

// What kMinRunsForSignificance's comment says of the rule: identical runs (seeded normal
// noise) have a row flagged about one time in five with two runs a side, and about one
// in twenty with three (Compare applies it from three runs a side only).
TEST(DiffStats, TheRuleFlagsNoiseOftenWithTwoRunsASide) {
  std::mt19937_64 rng(20261204);
  std::normal_distribution<double> noise(100, 5);
  auto flagged_share = [&](size_t runs) {
    constexpr int kTrials = 20000;
    int flagged = 0;
    for (int i = 0; i < kTrials; ++i) {
      std::vector<double> a(runs), b(runs);
      for (double& v : a) v = noise(rng);
      for (double& v : b) v = noise(rng);
      if (BeyondBothSpreads(Summarize(a), Summarize(b), 0)) ++flagged;
    }
    return static_cast<double>(flagged) / kTrials;
  };
  const double two = flagged_share(2), three = flagged_share(3), five = flagged_share(5);
  EXPECT_GT(two, 0.19);  // (0.2175 in 200 000 trials)
  EXPECT_LT(two, 0.245);
  EXPECT_GT(three, 0.04);  // (0.0490)
  EXPECT_LT(three, 0.06);
  EXPECT_LT(five, 0.005);  // (0.0021)
}

// --- rows and their order --------------------------------------------------------------

TEST(DiffRows, RecordingAgainstItselfShowsNoChange) {
  DiffThread t = Thread(100, 100, "srv");
  Set(t, Microstate::kSleep, 40 * kMs);
  t.causes["sleep:read"] = 7;
  t.syscalls["read"] = {.calls = 9, .blocked = 7, .time_ns = 41 * kMs};
  t.irqs["vector:local_timer"] = {.count = 3, .time_ns = 12000};
  DiffRecording r{"a.dat", {t, Thread(101, 100, "worker")}};
  const DiffResult d = DiffRecordings({r, r, r}, {r, r, r});
  ASSERT_FALSE(d.rows.empty());
  for (const DiffRow& row : d.rows)
    for (const DiffMeasure& m : row.measures) {
      EXPECT_EQ(m.comparison.change, 0) << row.name << " " << m.field;
      EXPECT_EQ(m.comparison.significant, false) << row.name << " " << m.field;
    }
  for (const DiffSubject& s : d.subjects) EXPECT_TRUE(s.matched()) << s.text;
}

TEST(DiffRows, EveryKindHasItsMeasures) {
  DiffThread b = Thread(100, 100, "srv");
  b.causes["sleep:read"] = 7;
  b.syscalls["read"] = {.calls = 9, .blocked = 7, .time_ns = 41 * kMs};
  b.irqs["vector:local_timer"] = {.count = 3, .time_ns = 12000};
  DiffThread n = b;
  n.tid = n.pid = 200;
  Set(n, Microstate::kSleep, 100 * kMs);  // half its lifetime now
  n.causes["sleep:read"] = 10;
  n.syscalls["read"].blocked = 10;
  n.irqs.clear();
  const DiffResult d = DiffRecordings({{"b", {b}}}, {{"n", {n}}});
  auto row = [&](DiffKind kind, const std::string& name) -> const DiffRow* {
    for (const DiffRow& r : d.rows)
      if (d.subjects[r.subject].key.is_thread && r.kind == kind && r.name == name) return &r;
    return nullptr;
  };
  const DiffRow* sleep = row(DiffKind::kMicrostate, "sleep");
  ASSERT_NE(sleep, nullptr);
  ASSERT_EQ(sleep->measures.size(), 2u);
  EXPECT_EQ(sleep->measures[0].field, "time_ns");
  EXPECT_DOUBLE_EQ(sleep->measures[0].comparison.change, 100.0 * kMs);
  EXPECT_EQ(sleep->measures[1].field, "share_percent");
  EXPECT_DOUBLE_EQ(sleep->measures[1].comparison.change, 50.0);        // 0% -> 50%
  EXPECT_EQ(sleep->measures[0].comparison.significant, std::nullopt);  // one run a side
  const DiffRow* read = row(DiffKind::kSyscall, "read");
  ASSERT_NE(read, nullptr);
  ASSERT_EQ(read->measures.size(), 3u);
  EXPECT_EQ(read->measures[1].field, "blocked");
  EXPECT_DOUBLE_EQ(read->measures[1].comparison.change, 3);
  EXPECT_DOUBLE_EQ(read->measures[2].comparison.change, 0);
  const DiffRow* cause = row(DiffKind::kSwitchCause, "sleep:read");
  ASSERT_NE(cause, nullptr);
  EXPECT_DOUBLE_EQ(cause->primary().comparison.change, 3);
  const DiffRow* irq = row(DiffKind::kIrq, "vector:local_timer");
  ASSERT_NE(irq, nullptr);
  EXPECT_DOUBLE_EQ(irq->primary().comparison.change, -12000);
  // Microstates zero on both sides get no row.
  EXPECT_EQ(row(DiffKind::kMicrostate, "zombie"), nullptr);
}

TEST(DiffRows, SignificantFirstThenLargestChangeThreadsBeforeProcesses) {
  // Three runs a side. main: sleep +50 ms with little noise (significant), user +80 ms
  // within its noise, sys -90 ms within its noise; worker: user -5 ms, significant.
  auto run = [](int64_t sleep, int64_t user, int64_t sys, int64_t worker_user) {
    DiffThread main = Thread(100, 100, "app");
    Set(main, Microstate::kUser, user);
    Set(main, Microstate::kSys, sys);
    Set(main, Microstate::kSleep, sleep);
    DiffThread worker = Thread(101, 100, "worker");
    Set(worker, Microstate::kUser, worker_user);
    return DiffRecording{"r", {main, worker}};
  };
  const DiffResult d = DiffRecordings(
      {run(50 * kMs, 100 * kMs, 200 * kMs, 20 * kMs), run(51 * kMs, 300 * kMs, 400 * kMs, 20 * kMs),
       run(50 * kMs + kMs / 2, 200 * kMs, 300 * kMs, 20 * kMs)},
      {run(100 * kMs, 180 * kMs, 110 * kMs, 15 * kMs),
       run(101 * kMs, 380 * kMs, 310 * kMs, 15 * kMs),
       run(100 * kMs + kMs / 2, 280 * kMs, 210 * kMs, 15 * kMs)});
  ASSERT_TRUE(d.significance_known());
  std::vector<std::string> order;
  for (const DiffRow& row : d.rows)
    if (row.kind == DiffKind::kMicrostate)
      order.push_back(d.subjects[row.subject].text + " " + row.name);
  EXPECT_EQ(order, (std::vector<std::string>{
                       // Threads, significant changes first, the larger first.
                       "app (main) sleep", "app/worker user",
                       // Then the rest (within the noise), by the size of the change.
                       "app (main) sys", "app (main) user",
                       // Then processes: sums over their threads (user +75 ms, not beyond
                       // its spread of 200 ms).
                       "app sleep", "app sys", "app user"}));
  const DiffRow& top = d.rows.front();
  EXPECT_DOUBLE_EQ(top.primary().comparison.change, 50.0 * kMs);
  EXPECT_EQ(top.primary().comparison.base.min, 50.0 * kMs);
  EXPECT_EQ(top.primary().comparison.base.max, 51.0 * kMs);
  EXPECT_EQ(top.primary().comparison.significant, true);
}

}  // namespace
}  // namespace cstool
