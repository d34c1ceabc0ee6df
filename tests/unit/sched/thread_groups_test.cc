// Which process each thread belongs to, from what a trace shows (sched/thread_groups.h):
// one synthetic event sequence per rule, and what stays unknown.
#include "sched/thread_groups.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/support/sim.h"

namespace cstool::testing {
namespace {

// The tgids of every thread that had tid `tid`, in the order they were created (a
// non-leader's exec leaves two: the old leader and the thread that took its tid).
std::vector<int32_t> Tgids(const Sim& s, int tid) {
  std::vector<int32_t> out;
  for (const Thread& t : s.sm().threads())
    if (t.tid == tid) out.push_back(t.tgid);
  return out;
}
int32_t Tgid(const Sim& s, int tid) {
  auto all = Tgids(s, tid);
  EXPECT_EQ(all.size(), 1u) << "tid " << tid;
  return all.empty() ? -1 : all.back();
}

TEST(ThreadGroups, RecordersThreadListNamesThreadsFromBeforeTheTrace) {
  TrackingPolicy policy;
  policy.known_tgids = {{100, 100}, {101, 100}};
  Sim s({}, policy);
  s.Switch(0, 0, 0, kR, 101);
  s.Switch(10, 0, 101, kS, 100);
  s.Finish(100);
  EXPECT_EQ(Tgid(s, 101), 100);
  EXPECT_EQ(Tgid(s, 100), 100);
}

TEST(ThreadGroups, CloneFlagsTellThreadFromProcess) {
  TrackingPolicy policy;
  policy.known_tgids = {{100, 100}};
  Sim s({}, policy);
  s.Switch(0, 0, 0, kR, 100);
  s.Fork(10, 0, 100, 101, /*thread=*/true);
  s.Fork(20, 0, 100, 102, /*thread=*/false);
  s.Finish(100);
  EXPECT_EQ(Tgid(s, 101), 100);  // CLONE_THREAD: its creator's process
  EXPECT_EQ(Tgid(s, 102), 102);  // anything else: a process of its own
}

// A trace-cmd file without task_newtask: a fork alone does not tell a thread from a
// process, and nothing tells the process of a thread from before the trace.
TEST(ThreadGroups, ForkWithoutFlagsLeavesTheProcessUnknown) {
  Sim s;
  s.Switch(0, 0, 0, kR, 100);
  s.ForkWithoutFlags(10, 0, 100, 101);
  s.Switch(20, 0, 100, kS, 101);
  s.Finish(100);
  EXPECT_EQ(Tgid(s, 100), 0);
  EXPECT_EQ(Tgid(s, 101), 0);
}

// Fork, then exec keeping its tid: the child leads its own process (a non-leader's exec
// would have come out with another tid). Its creator's process stays unknown.
TEST(ThreadGroups, ForkedChildThatExecsLeadsItsOwnProcess) {
  Sim s;
  s.Switch(0, 0, 0, kR, 100);
  s.ForkWithoutFlags(10, 0, 100, 101);
  s.Switch(20, 0, 100, kS, 101);
  s.Exec(30, 0, 101, 101);
  EXPECT_EQ(Tgid(s, 101), 101);  // known at once
  s.Finish(100);
  EXPECT_EQ(Tgid(s, 101), 101);
  EXPECT_EQ(Tgid(s, 100), 0);
}

// 100 leads a process the file does not name; its thread 105 (also from before the
// trace) starts 106 without clone flags in the file. 106 execs and comes out as 100: it
// was a non-leader, so CLONE_THREAD made it, and 100, 105 and 106 are all process 100.
TEST(ThreadGroups, NonLeaderExecTellsTheLeaderAndTheCreator) {
  Sim s;
  s.Switch(0, 0, 0, kR, 100);
  s.Switch(5, 1, 0, kR, 105);
  s.ForkWithoutFlags(10, 1, 105, 106);
  s.Switch(20, 1, 105, kS, 106);
  s.Exec(30, 1, 106, 100);
  EXPECT_EQ(Tgids(s, 100), (std::vector<int32_t>{100, 100}));  // the leader, 106 as 100
  EXPECT_EQ(Tgid(s, 105), 0);  // tied to 106 only; settled at the end
  s.Finish(100);
  EXPECT_EQ(Tgid(s, 105), 100);
  EXPECT_EQ(Tgids(s, 106), std::vector<int32_t>{});  // its tid is 100 now
}

// Threads a CLONE_THREAD fork tied to a process nobody named yet learn it when one of
// them does, even a thread that exited before.
TEST(ThreadGroups, CloneThreadOfAnUnknownProcessLearnsItLater) {
  Sim s;
  s.Switch(0, 0, 0, kR, 100);
  s.Fork(10, 0, 100, 101, /*thread=*/true);
  s.Fork(20, 0, 100, 102, /*thread=*/true);
  EXPECT_EQ(Tgid(s, 101), 0);
  EXPECT_EQ(Tgid(s, 102), 0);
  s.Switch(30, 1, 0, kR, 101);
  s.Exec(40, 1, 101, 100);
  s.Finish(100);
  EXPECT_EQ(Tgids(s, 100), (std::vector<int32_t>{100, 100}));
  EXPECT_EQ(Tgid(s, 102), 100);
}

// Two execs that put one group of tied threads into two processes: the file contradicts
// itself, so the threads only tied to them stay unknown rather than pick one.
TEST(ThreadGroups, TiedThreadsThatDisagreeStayUnknown) {
  Sim s;
  s.Switch(0, 0, 0, kR, 10);
  s.Fork(1, 0, 10, 11, /*thread=*/true);
  s.ForkWithoutFlags(2, 0, 11, 12);
  s.ForkWithoutFlags(3, 0, 11, 13);
  s.Exec(4, 1, 12, 200);
  s.Exec(5, 1, 13, 300);
  s.Finish(100);
  EXPECT_EQ(Tgid(s, 10), 0);
  EXPECT_EQ(Tgid(s, 11), 0);
  EXPECT_EQ(Tgid(s, 200), 200);
  EXPECT_EQ(Tgid(s, 300), 300);
}

}  // namespace
}  // namespace cstool::testing
