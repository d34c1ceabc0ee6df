// The blocking-site rule on call chains as the 6.18 test kernel records them (innermost
// first, starting in the tracing of sched_switch itself), and the pairing of each
// sleep's chain with its cause and blocked time.
#include "analysis/blocking_site.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/kernel_stacks.h"
#include "tests/support/sim.h"

namespace cstool::testing {
namespace {

const std::vector<std::string> kTracing = {"trace_event_raw_event_sched_switch+0x1a5/0x1f0",
                                           "__traceiter_sched_switch+0x36/0x50",
                                           "__schedule+0x3f1/0x1090", "schedule+0x27/0xd0"};

std::vector<std::string> Chain(std::vector<std::string> below) {
  std::vector<std::string> out = kTracing;
  out.insert(out.end(), below.begin(), below.end());
  return out;
}

TEST(BlockingSite, FunctionNameDropsOffsetAndCompilerSuffix) {
  EXPECT_EQ(FunctionName("anon_pipe_read+0x1f5/0x4a0"), "anon_pipe_read");
  EXPECT_EQ(FunctionName("poll_schedule_timeout.constprop.0+0x3a/0x80"), "poll_schedule_timeout");
  EXPECT_EQ(FunctionName("do_wait"), "do_wait");
}

TEST(BlockingSite, PipeReadIsTheSite) {
  EXPECT_EQ(BlockingSite(Chain({"anon_pipe_read+0x1f5", "vfs_read+0x2d6", "ksys_read+0x6a"})),
            "anon_pipe_read");
  EXPECT_EQ(BlockingSite(Chain({"pipe_read+0x2a", "vfs_read+0x2d6"})), "pipe_read");
}

TEST(BlockingSite, FutexWaitIsTheSite) {
  EXPECT_EQ(BlockingSite(Chain({"futex_do_wait+0x2f", "__futex_wait+0x8e", "futex_wait+0x6b"})),
            "futex_do_wait");
  EXPECT_EQ(BlockingSite(Chain({"futex_wait_queue+0x60", "__futex_wait+0x8e"})),
            "futex_wait_queue");
}

TEST(BlockingSite, TimeoutAndPollHelpersAreSkipped) {
  EXPECT_EQ(BlockingSite(Chain({"schedule_hrtimeout_range_clock+0xb5",
                                "poll_schedule_timeout.constprop.0+0x3a", "do_select+0x6d2",
                                "core_sys_select+0x1d1"})),
            "do_select");
  EXPECT_EQ(BlockingSite(Chain({"do_nanosleep+0x6b", "hrtimer_nanosleep+0xc1"})), "do_nanosleep");
  EXPECT_EQ(BlockingSite(Chain({"schedule_timeout+0x14f", "ep_poll+0x4d5", "do_epoll_wait+0xc1"})),
            "ep_poll");
  EXPECT_EQ(BlockingSite(Chain({"do_wait+0x5e", "kernel_wait4+0xab"})), "do_wait");
}

TEST(BlockingSite, GenericWaitsAreSkipped) {
  // A completion, a bit wait and the page-cache writeback wait of an fsync: the site is
  // the filesystem's function that waited.
  EXPECT_EQ(BlockingSite(Chain({"schedule_timeout+0x14f", "__wait_for_common+0x9d",
                                "wait_for_completion_io+0x1a", "submit_bio_wait+0x6a",
                                "blkdev_issue_flush+0x3c", "ext4_sync_file+0x1d2"})),
            "blkdev_issue_flush");
  EXPECT_EQ(BlockingSite(Chain({"io_schedule+0x46", "folio_wait_bit_common+0x133",
                                "folio_wait_writeback+0x2b", "__filemap_fdatawait_range+0x82",
                                "file_write_and_wait_range+0x8c", "ext4_sync_file+0x8f"})),
            "ext4_sync_file");
  EXPECT_EQ(BlockingSite(Chain({"jbd2_log_wait_commit+0xc9", "ext4_sync_file+0x1f5"})),
            "jbd2_log_wait_commit");
  // ext4 without a journal: the buffer-head sync helpers wait for it.
  EXPECT_EQ(
      BlockingSite(Chain({"io_schedule+0x46", "bit_wait_io+0x11", "__wait_on_bit+0x42",
                          "out_of_line_wait_on_bit+0x91", "__sync_dirty_buffer+0x11e",
                          "ext4_write_inode+0x15c", "ext4_fsync_nojournal.constprop.0+0x8d"})),
      "ext4_write_inode");
  EXPECT_EQ(BlockingSite(Chain(
                {"io_schedule+0x46", "folio_wait_bit+0x10", "folio_wait_writeback+0x2b",
                 "__filemap_fdatawait_range+0x82", "file_write_and_wait_range+0x8c",
                 "generic_buffers_fsync_noflush+0x7a", "ext4_fsync_nojournal.constprop.0+0x3c"})),
            "ext4_fsync_nojournal");
  EXPECT_EQ(BlockingSite(
                Chain({"rwsem_down_write_slowpath+0x2a0", "down_write+0x5b", "do_truncate+0x7a"})),
            "do_truncate");
  EXPECT_EQ(BlockingSite(Chain({"__mutex_lock.constprop.0+0x3d5", "__mutex_lock_slowpath+0x13",
                                "mutex_lock+0x35", "pipe_write+0x4c"})),
            "pipe_write");
}

TEST(BlockingSite, NoSiteWhenOnlyHelpersOrUnknownAddresses) {
  EXPECT_EQ(BlockingSite(kTracing), "?");
  EXPECT_EQ(BlockingSite(std::vector<std::string>{}), "?");
  EXPECT_EQ(BlockingSite(Chain({"0xffffffffc0123456", "vfs_read+0x2d6"})), "?");
}

// The chain follows its switch on the same CPU; the sleep lasts from the switch-out to
// the wakeup, and counts with the switch's cause.
TEST(KernelStacks, SleepGetsItsChainCauseAndBlockedTime) {
  Sim s;
  s.EnableStacks();
  const std::vector<uint64_t> pipe = {0xffffffff81001000, 0xffffffff81002000};
  const std::vector<uint64_t> futex = {0xffffffff81003000};
  s.Switch(0, 0, 0, kR, 100);
  s.SysEnter(10, 0, 100, kRead);
  s.Switch(20, 0, 100, kS, 0);
  s.Stack(24, 0, 100, pipe);
  s.WakeBoth(70, 1, 200, 100, 0);  // blocked 50 ns
  s.Switch(80, 0, 0, kR, 100);
  s.SysExit(85, 0, 100, kRead);
  s.SysEnter(90, 0, 100, kRead);
  s.Switch(100, 0, 100, kS, 0);
  // Woken from another CPU before its chain was recorded: still 100 -> 102.
  s.WakeBoth(102, 1, 200, 100, 0);
  s.Stack(104, 0, 100, pipe);
  s.Switch(110, 0, 0, kR, 100);
  s.SysExit(115, 0, 100, kRead);
  s.SysEnter(120, 0, 100, kFutex);
  s.Switch(130, 0, 100, kD, 0);
  s.Stack(131, 0, 100, futex);
  s.Finish(200);  // still asleep at the end: blocked 70 ns so far

  const ReportModel& m = s.model();
  ASSERT_EQ(m.stacks.size(), 2u);
  EXPECT_EQ(m.stacks[0].addrs, pipe);
  EXPECT_EQ(m.stacks[1].addrs, futex);
  const auto& rows = s.Report(100).blocked_stacks;
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(s.syscalls().CauseLabel(SwitchCause::Unpack(rows[0].cause)), "sleep:read");
  EXPECT_EQ(rows[0].stack, 0u);
  EXPECT_EQ(rows[0].count, 2u);
  EXPECT_EQ(rows[0].blocked_ns, 52);
  EXPECT_EQ(s.syscalls().CauseLabel(SwitchCause::Unpack(rows[1].cause)), "sleep:futex");
  EXPECT_EQ(rows[1].stack, 1u);
  EXPECT_EQ(rows[1].count, 1u);
  EXPECT_EQ(rows[1].blocked_ns, 70);
}

// A stack after a preemption, or of another task than the one switched out, is not a
// sleep's chain; nor is one that comes after other events on that CPU's switch.
TEST(KernelStacks, StacksThatDoNotFollowASleepAreIgnored) {
  Sim s;
  s.EnableStacks();
  s.Switch(0, 0, 0, kR, 100);
  s.Switch(10, 0, 100, kR, 101, /*preempt=*/true);
  s.Stack(11, 0, 100, {0xffffffff81001000});
  s.Switch(20, 0, 101, kS, 100);
  s.Stack(21, 0, 999, {0xffffffff81001000});
  s.Finish(50);
  EXPECT_TRUE(s.model().stacks.empty());
  EXPECT_TRUE(s.Report(100).blocked_stacks.empty());
  EXPECT_TRUE(s.Report(101).blocked_stacks.empty());
}

// A switch-out the trace did not record (inferred, sleep:untraced) has no chain, and the
// switch-in that would count it is as unrecorded: it is not kept waiting for them (a
// thread outside a pid-filtered recording can have one at every wakeup).
TEST(KernelStacks, AnInferredSleepIsNotKeptWaiting) {
  ReportModel model;
  KernelStackObserver stacks(model);
  Thread t;
  t.id = 0;
  t.tid = 10;
  SwitchEvent sw;
  sw.prev = &t;
  sw.voluntary = true;
  sw.cause.kind = CauseKind::kSleepUntraced;
  for (int64_t i = 1; i <= 1000; ++i) {
    sw.ts = i * 100;
    stacks.OnSwitch(sw);
  }
  EXPECT_EQ(stacks.open_sleeps(), 0u);
  sw.ts = 200'000;
  sw.cause.kind = CauseKind::kSleepSyscall;  // a recorded one waits for its chain
  stacks.OnSwitch(sw);
  EXPECT_EQ(stacks.open_sleeps(), 1u);
}

// The site table groups chains by cause and site, most blocked time first.
TEST(KernelStacks, SitesGroupChainsByCauseAndSite) {
  ReportModel m;
  m.stacks = {{{1}, {}, "anon_pipe_read"}, {{2}, {}, "anon_pipe_read"}, {{3}, {}, "do_select"}};
  SwitchCause read{CauseKind::kSleepSyscall, 0};
  ThreadReport r;
  r.blocked_stacks = {{read.Pack(), 0, 3, 30}, {read.Pack(), 1, 1, 50}, {read.Pack(), 2, 9, 10}};
  std::vector<BlockingSiteRow> rows = BlockingSites(m, r);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].site, "anon_pipe_read");
  EXPECT_EQ(rows[0].count, 4u);
  EXPECT_EQ(rows[0].blocked_ns, 80);
  ASSERT_EQ(rows[0].stacks.size(), 2u);
  EXPECT_EQ(rows[0].stacks[0]->stack, 1u);  // the chain with more blocked time first
  EXPECT_EQ(rows[1].site, "do_select");
  EXPECT_EQ(rows[1].count, 9u);
}

}  // namespace
}  // namespace cstool::testing
