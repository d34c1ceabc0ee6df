// `cstool msa` rows, shares and renderers from synthetic interval numbers (no tracefs).
#include "analysis/msa_model.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/errors.h"
#include "kernel/proc_seed.h"
#include "kernel/proc_threads.h"
#include "output/msa_output.h"

namespace cstool {
namespace {

constexpr size_t Idx(Microstate m) { return static_cast<size_t>(m); }

Thread MakeThread(uint32_t id, int32_t tid, int32_t tgid, const char* comm, bool tracked = true) {
  Thread t;
  t.id = id;
  t.tid = tid;
  t.tgid = tgid;
  t.comm = comm;
  t.tracked = tracked;
  return t;
}

struct Fixture {
  SyscallTable syscalls;
  std::deque<Thread> threads;
  std::unordered_map<uint32_t, IntervalThreadStats> stats;

  Fixture() {
    threads.push_back(MakeThread(0, 100, 100, "server"));
    threads.push_back(MakeThread(1, 101, 100, "worker"));
    threads.push_back(MakeThread(2, 555, 555, "other", /*tracked=*/false));
    IntervalThreadStats& main = stats[0];
    main.microstates[Idx(Microstate::kUser)] = 250;
    main.microstates[Idx(Microstate::kSleep)] = 700;
    main.microstates[Idx(Microstate::kWaitCpuWakeup)] = 50;
    main.voluntary = 3;
    main.involuntary = 1;
    main.syscalls = 7;
    main.causes = {{SwitchCause{CauseKind::kSleepSyscall, 230}.Pack(), 3},  // clock_nanosleep
                   {SwitchCause{CauseKind::kPreemptTick, -1}.Pack(), 1}};
    IntervalThreadStats& worker = stats[1];
    worker.microstates[Idx(Microstate::kUser)] = 1000;
    worker.involuntary = 2;
    worker.causes = {{SwitchCause{CauseKind::kPreemptTick, -1}.Pack(), 2}};
    stats[2].microstates[Idx(Microstate::kUser)] = 1000;  // not the target's
  }
};

double Sum(const std::array<double, kMicrostateCount>& shares) {
  double s = 0;
  for (double v : shares) s += v;
  return s;
}

TEST(MsaModel, SharesAreOfTheAccountedTimeAndAddUpTo100) {
  MsaRow r;
  r.ns[Idx(Microstate::kUser)] = 1;
  r.ns[Idx(Microstate::kSys)] = 1;
  r.ns[Idx(Microstate::kSleepFutex)] = 1;
  ComputeShares(r);
  EXPECT_EQ(r.accounted_ns, 3);
  EXPECT_NEAR(r.shares[Idx(Microstate::kUser)], 100.0 / 3, 1e-9);
  EXPECT_NEAR(Sum(r.shares), 100.0, 1e-9);

  MsaRow empty;
  ComputeShares(empty);
  EXPECT_EQ(empty.accounted_ns, 0);
  EXPECT_EQ(Sum(empty.shares), 0.0);
}

TEST(MsaModel, ThreadRowsKeepTrackedThreadsInTidOrderWithCauseLabels) {
  Fixture f;
  std::vector<MsaRow> rows = BuildThreadRows(f.stats, f.threads, f.syscalls);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].tid, 100);
  EXPECT_EQ(rows[1].tid, 101);
  EXPECT_EQ(rows[0].pid, 100);
  EXPECT_EQ(rows[1].pid, 100);
  EXPECT_EQ(rows[0].accounted_ns, 1000);
  EXPECT_DOUBLE_EQ(rows[0].shares[Idx(Microstate::kSleep)], 70.0);
  EXPECT_DOUBLE_EQ(rows[0].shares[Idx(Microstate::kUser)], 25.0);
  EXPECT_DOUBLE_EQ(rows[0].shares[Idx(Microstate::kWaitCpuWakeup)], 5.0);
  EXPECT_EQ(rows[0].voluntary, 3u);
  EXPECT_EQ(rows[0].involuntary, 1u);
  EXPECT_EQ(rows[0].syscalls, 7u);
  EXPECT_EQ(rows[0].TopCause(), "sleep:" + f.syscalls.Name(230));
  EXPECT_EQ(rows[1].TopCause(), "preempt:tick");
  for (const MsaRow& r : rows) EXPECT_NEAR(Sum(r.shares), 100.0, 1e-9);
}

TEST(MsaModel, RowsWithoutAnythingAreLeftOut) {
  Fixture f;
  f.stats[1] = IntervalThreadStats{};
  std::vector<MsaRow> rows = BuildThreadRows(f.stats, f.threads, f.syscalls);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].tid, 100);
}

TEST(MsaModel, ProcessRowsSumThreads) {
  Fixture f;
  std::vector<MsaRow> rows = AggregateByProcess(BuildThreadRows(f.stats, f.threads, f.syscalls));
  ASSERT_EQ(rows.size(), 1u);
  const MsaRow& p = rows[0];
  EXPECT_EQ(p.pid, 100);
  EXPECT_EQ(p.tid, 0);
  EXPECT_EQ(p.threads, 2u);
  EXPECT_EQ(p.comm, "server");
  EXPECT_EQ(p.accounted_ns, 2000);
  EXPECT_DOUBLE_EQ(p.shares[Idx(Microstate::kUser)], 62.5);
  EXPECT_DOUBLE_EQ(p.shares[Idx(Microstate::kSleep)], 35.0);
  EXPECT_EQ(p.voluntary, 3u);
  EXPECT_EQ(p.involuntary, 3u);
  EXPECT_EQ(p.syscalls, 7u);
  EXPECT_EQ(p.TopCause(), "preempt:tick");  // 3 ticks beat 3 sleeps by label order
  EXPECT_NEAR(Sum(p.shares), 100.0, 1e-9);
}

TEST(MsaOutput, FormatShare) {
  EXPECT_EQ(FormatShare(0), "0.0");
  EXPECT_EQ(FormatShare(9.94), "9.9");
  EXPECT_EQ(FormatShare(9.96), "10");
  EXPECT_EQ(FormatShare(57.4), "57");
  EXPECT_EQ(FormatShare(99.96), "100");
  EXPECT_EQ(FormatShare(100), "100");
}

MsaFrame SampleFrame(const Fixture& f, bool per_process) {
  MsaFrame frame;
  frame.pid = 100;
  frame.comm = "server";
  frame.index = 1;
  frame.start_ns = 1000000000;
  frame.end_ns = 1500000000;
  frame.per_process = per_process;
  frame.rows = BuildThreadRows(f.stats, f.threads, f.syscalls);
  if (per_process) frame.rows = AggregateByProcess(frame.rows);
  KernelSwitchSnapshot k;
  k.ts = 1000000000;
  k.exact = true;
  k.threads = {{100, 10, 2}, {101, 0, 5}};
  frame.kernel_attach = k;
  return frame;
}

TEST(MsaOutput, JsonLineHasTheDesignNoteKeys) {
  Fixture f;
  std::ostringstream os;
  MakeMsaOutput("json", os, false)->Render(SampleFrame(f, false));
  std::string text = os.str();
  ASSERT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << "one object per line";
  nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["type"], "interval");
  EXPECT_EQ(j["interval"], 1);
  EXPECT_EQ(j["duration_ns"], 500000000);
  ASSERT_EQ(j["threads"].size(), 2u);
  const nlohmann::json& t = j["threads"][0];
  EXPECT_EQ(t["tid"], 100);
  EXPECT_EQ(t["microstates_ns"]["sleep"], 700);
  EXPECT_EQ(t["microstates_ns"].size(), kMicrostateCount);
  EXPECT_EQ(t["switches"]["voluntary"], 3);
  EXPECT_EQ(t["switches"]["involuntary"], 1);
  EXPECT_EQ(t["switches"]["causes"]["preempt:tick"], 1);
  EXPECT_EQ(t["syscalls"]["count"], 7);
  double sum = 0;
  for (auto& [k, v] : t["shares"].items()) sum += v.get<double>();
  EXPECT_NEAR(sum, 100.0, 0.5);
  EXPECT_EQ(j["kernel_attach"]["exact"], true);
  EXPECT_EQ(j["kernel_attach"]["threads"][1]["nivcsw"], 5);
  EXPECT_FALSE(j.contains("kernel_end"));
}

TEST(MsaOutput, JsonProcessRows) {
  Fixture f;
  nlohmann::json j = MsaFrameToJson(SampleFrame(f, true));
  ASSERT_EQ(j["processes"].size(), 1u);
  EXPECT_EQ(j["processes"][0]["threads"], 2);
  EXPECT_FALSE(j["processes"][0].contains("tid"));
}

TEST(MsaOutput, PipedTableAppendsFramesWithAHeader) {
  Fixture f;
  std::ostringstream os;
  auto out = MakeMsaOutput("table", os, /*in_place=*/false);
  out->Render(SampleFrame(f, false));
  out->Render(SampleFrame(f, false));
  std::string text = os.str();
  EXPECT_EQ(text.find("\033["), std::string::npos) << "no terminal escapes when piped";
  EXPECT_NE(text.find("interval 1 (0.500 s) pid 100 (server)"), std::string::npos) << text;
  size_t header = text.find("USR  SYS  IRQ SIRQ LATW LATP  SLP  LCK POLL   IO  PAG  STP  ZMB  UNK");
  ASSERT_NE(header, std::string::npos) << text;
  EXPECT_NE(text.find("USR", header + 1), std::string::npos) << "second frame";
  // The main thread's row: 25% user, 5% LATW, 70% sleep.
  EXPECT_NE(text.find("    100     100 server            25  0.0  0.0  0.0  5.0  0.0   70"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("sleep:" + f.syscalls.Name(230)), std::string::npos);
}

TEST(MsaOutput, TerminalTableRedrawsInPlace) {
  Fixture f;
  std::ostringstream os;
  MakeMsaOutput("table", os, /*in_place=*/true)->Render(SampleFrame(f, true));
  std::string text = os.str();
  EXPECT_EQ(text.rfind("\033[H\033[2J", 0), 0u) << "starts by clearing the screen";
  EXPECT_NE(text.find("NLWP"), std::string::npos);
}

// -c EVENT:ebs=N: one PMCTrack-like row per overflow below the table, exact values,
// and the same samples as objects in the JSON line.
TEST(MsaOutput, SampleRowsBelowTheTableAndInJson) {
  Fixture f;
  MsaFrame frame = SampleFrame(f, false);
  frame.counter_names = {"page-faults", "task-clock", "write-bytes"};
  frame.ebs_event = "page-faults";
  frame.ebs_period = 100;
  frame.samples = {{1, 100, 101, 1000250000, 1, 0x401a2b, {100, 12345678}, false},
                   {2, 100, 100, 1250000000, 0, 0xffffffff81000000, {200, 98765432}, false}};
  frame.ebs_samples = 2;
  frame.ebs_lost = 3;
  frame.ebs_throttles = 1;
  std::ostringstream os;
  MakeMsaOutput("table", os, /*in_place=*/false)->Render(frame);
  const std::string text = os.str();
  EXPECT_NE(text.find("  samples of page-faults every 100 events: 2 in this interval, 3 lost "
                      "(ring buffer full), 1 throttle(s) (perf_event_max_sample_rate)\n"
                      "  NSAMPLE     PID     TID EVENT               AT(ms) CPU                 IP "
                      "page-faults task-clock(ms)\n"
                      "        1     100     101 page-faults          0.250   1           0x401a2b "
                      "        100          12.35\n"
                      "        2     100     100 page-faults        250.000   0 0xffffffff81000000 "
                      "        200          98.77\n"),
            std::string::npos)
      << text;

  const nlohmann::json j = MsaFrameToJson(frame);
  EXPECT_EQ(j["ebs"], nlohmann::json({{"event", "page-faults"},
                                      {"period", 100},
                                      {"samples", 2},
                                      {"lost", 3},
                                      {"throttles", 1}}));
  ASSERT_EQ(j["samples"].size(), 2u);
  EXPECT_EQ(j["samples"][0],
            nlohmann::json({{"nsample", 1},
                            {"pid", 100},
                            {"tid", 101},
                            {"event", "page-faults"},
                            {"ts_ns", 1000250000},
                            {"cpu", 1},
                            {"ip", "0x401a2b"},
                            {"values", {{"page-faults", 100}, {"task-clock", 12345678}}},
                            {"scaled", false}}));
  // Without sampling, neither appears.
  EXPECT_FALSE(MsaFrameToJson(SampleFrame(f, false)).contains("samples"));
}

TEST(MsaOutput, UnknownFormatIsAUsageError) {
  std::ostringstream os;
  EXPECT_THROW(MakeMsaOutput("csv", os, false), Error);
}

TEST(ProcSeed, ParsesStatStateAndCpu) {
  auto f = ParseProcStat(
      "1234 (a (weird) name) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 2 0 100 "
      "1000000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->state, 'S');
  EXPECT_EQ(f->ppid, 1);
  EXPECT_EQ(f->flags, 4194560u);
  EXPECT_FALSE(f->kernel_thread());
  EXPECT_EQ(f->cpu, 1);
  EXPECT_FALSE(ParseProcStat("garbage"));
  // rcu_preempt: PF_KTHREAD (0x00200000) among its flags.
  auto k = ParseProcStat(
      "15 (rcu_preempt) I 2 0 0 0 -1 2129984 0 0 0 0 0 2417 0 0 20 0 1 0 11 0 0 "
      "18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 0 0 0 0 0 0");
  ASSERT_TRUE(k);
  EXPECT_TRUE(k->kernel_thread());
  EXPECT_EQ(k->ppid, 2);
  EXPECT_EQ(k->cpu, 0);
}

TEST(ProcSeed, ParsesSyscall) {
  EXPECT_EQ(ParseProcSyscall("running\n"), kSyscallUnknown);
  EXPECT_EQ(ParseProcSyscall("-1 0x7ffc 0x4011\n"), kNotInSyscall);
  EXPECT_EQ(ParseProcSyscall("230 0x1 0x0 0x7ffd 0x0 0x0 0x0 0x7ffc 0x7f12\n"), 230);
  EXPECT_EQ(ParseProcSyscall(""), kSyscallUnknown);
}

// /proc/TID/syscall reads "0 0x0 ..." for a kernel thread, which is not in read(2): the
// seed of kthreadd (pid 2) and of its children is of a kernel thread, in no syscall.
TEST(ProcSeed, KernelThreadsAreInNoSyscall) {
  const ProcSeed kthreadd = ReadProcSeed(kKthreaddTid);
  if (kthreadd.threads.empty() || kthreadd.threads[0].comm != "kthreadd")
    GTEST_SKIP() << "pid 2 is not kthreadd here (a pid namespace)";
  EXPECT_TRUE(kthreadd.threads[0].kernel_thread);
  EXPECT_EQ(kthreadd.threads[0].syscall, kNotInSyscall);
  EXPECT_TRUE(kthreadd.threads[0].ToAttachSeed().kernel_thread);
  // One of its children (a kernel thread by PF_KTHREAD, not by its parent).
  std::ifstream children("/proc/2/task/2/children");
  int32_t child = 0;
  if (children >> child) {
    const ProcSeed kthread = ReadProcSeed(child);
    ASSERT_FALSE(kthread.threads.empty());
    EXPECT_TRUE(kthread.threads[0].kernel_thread) << kthread.threads[0].comm;
    EXPECT_EQ(kthread.threads[0].syscall, kNotInSyscall);
    EXPECT_TRUE(ListThreads(child).at(0).kernel_thread);
  }
  const ProcSeed self = ReadProcSeed(::getpid());
  ASSERT_FALSE(self.threads.empty());
  EXPECT_FALSE(self.threads[0].kernel_thread);
  EXPECT_FALSE(ListThreads(::getpid()).at(0).kernel_thread);
}

}  // namespace
}  // namespace cstool
