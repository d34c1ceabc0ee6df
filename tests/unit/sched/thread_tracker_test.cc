#include "sched/thread_tracker.h"

#include <gtest/gtest.h>

namespace cstool {
namespace {

TEST(ThreadTracker, FindsWhatATidNamesUntilForgotten) {
  ThreadTracker threads({});
  EXPECT_EQ(threads.Find(10), nullptr);
  Thread& t = threads.Add(10, "a", 100, true);
  EXPECT_EQ(threads.Find(10), &t);
  EXPECT_TRUE(threads.Names(t));
  EXPECT_EQ(t.first_ts, 100);
  EXPECT_TRUE(t.created_in_trace);
  threads.Forget(10);
  EXPECT_EQ(threads.Find(10), nullptr);
  EXPECT_FALSE(threads.Names(t));
  // A reused tid is a new thread; the old one keeps its address.
  Thread& again = threads.Add(10, "b", 200, true);
  EXPECT_NE(&again, &t);
  EXPECT_EQ(threads.Find(10), &again);
  EXPECT_EQ(threads.threads().size(), 2u);
  EXPECT_EQ(t.comm, "a");
}

TEST(ThreadTracker, FollowsRootsTheirThreadsAndHintedTgids) {
  ThreadTracker threads({.all = false, .root_pids = {50}, .known_tgids = {{51, 50}}});
  EXPECT_FALSE(threads.follows_all());
  EXPECT_TRUE(threads.Add(50, "root", 0, false).tracked);
  Thread& hinted = threads.Add(51, "worker", 0, false);
  EXPECT_EQ(hinted.tgid, 50);
  EXPECT_TRUE(hinted.tracked);
  EXPECT_FALSE(threads.Add(60, "other", 0, false).tracked);
}

TEST(ThreadTracker, FollowingAllLeavesOutTheUntracedThreads) {
  ThreadTracker threads({.all = true, .known_tgids = {{6, 5}}, .recorder_tids = {5, 6}});
  EXPECT_FALSE(threads.Add(5, "cstool", 0, false).tracked);
  EXPECT_FALSE(threads.Add(6, "cstool", 0, false).tracked);
  EXPECT_TRUE(threads.Add(7, "other", 0, false).tracked);
}

TEST(ThreadTracker, ChildTgidFromTheCloneFlagsOfTaskNewtask) {
  ThreadTracker threads({});
  Thread& parent = threads.Add(100, "p", 0, false);
  parent.tgid = 100;
  ThreadGroups::Clone kind;
  EXPECT_EQ(threads.ChildTgid(parent, 101, &kind), 0);  // no task_newtask seen
  EXPECT_EQ(kind, ThreadGroups::Clone::kUnknown);
  threads.NoteCloneFlags(102, 0x00010000);  // CLONE_THREAD
  EXPECT_EQ(threads.ChildTgid(parent, 102, &kind), 100);
  EXPECT_EQ(kind, ThreadGroups::Clone::kThread);
  EXPECT_EQ(threads.Add(102, "t", 1, true).tgid, 100);  // the hint is kept for Add
  threads.NoteCloneFlags(103, 0x11);                    // a process (SIGCHLD)
  EXPECT_EQ(threads.ChildTgid(parent, 103, &kind), 103);
  EXPECT_EQ(kind, ThreadGroups::Clone::kProcess);
  EXPECT_EQ(threads.ChildTgid(parent, 103, &kind), 0) << "the flags are used once";
}

TEST(ThreadTracker, ANonLeaderThatExecsExchangesTidsWithItsLeader) {
  ThreadTracker threads({});
  Thread& leader = threads.Add(200, "leader", 0, false);
  Thread& worker = threads.Add(201, "worker", 0, false);
  threads.ExchangeTids(worker, 200, &leader, 3);
  EXPECT_EQ(threads.Find(200), &worker);
  EXPECT_EQ(worker.tid, 200);
  EXPECT_EQ(worker.tid_since, 3);
  EXPECT_EQ(threads.Find(201), &leader) << "the leader's last events carry the old tid";
  EXPECT_EQ(leader.tid, 200) << "the report names it as it was";
  EXPECT_EQ(leader.tid_since, 0);
  Thread& other = threads.Add(301, "other", 0, false);
  threads.ExchangeTids(other, 300, nullptr, 4);  // a leader the trace never showed
  EXPECT_EQ(threads.Find(300), &other);
  EXPECT_EQ(threads.Find(301), nullptr);
}

}  // namespace
}  // namespace cstool
