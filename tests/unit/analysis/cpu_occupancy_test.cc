// CPU occupancy follows the state machine's current task per CPU, so each thread's
// runs on the CPU tracks add up to exactly its on-CPU microstates, also where the
// trace lacks the switch-in (missing switch from idle, a pid filter hiding a switch
// between unfollowed tasks).
#include "analysis/cpu_occupancy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "tests/support/sim.h"

namespace cstool::testing {
namespace {

constexpr int64_t kClone = 56;

class Collector : public Observer {
 public:
  Collector() : occupancy_([this](const CpuRun& r) { runs.push_back(r); }) {}
  void OnCpuCurrent(const CpuCurrentEvent& e) override { occupancy_.OnCpuCurrent(e); }
  void OnSwitch(const SwitchEvent& e) override { occupancy_.OnSwitch(e); }
  void OnTraceEnd(int64_t ts) override { occupancy_.OnTraceEnd(ts); }

  std::vector<CpuRun> runs;

 private:
  CpuOccupancy occupancy_;
};

int64_t OnCpu(const Sim& s, int tid) {
  return s.Micro(tid, Microstate::kUser) + s.Micro(tid, Microstate::kSys) +
         s.Micro(tid, Microstate::kIrq) + s.Micro(tid, Microstate::kSoftirq) +
         s.Micro(tid, Microstate::kUnknown);
}

// How much more on-CPU time the kernel's switch instants give the thread than the
// traced switches the CPU runs follow.
int64_t Shift(const Sim& s, int tid) {
  const Thread::SwitchPlacement& p = s.Report(tid).placement;
  return p.in_early_ns - p.out_early_ns;
}

std::map<int, int64_t> RunTime(const std::vector<CpuRun>& runs) {
  std::map<int, int64_t> sum;
  for (const CpuRun& r : runs) sum[r.thread->tid] += r.end - r.start;
  return sum;
}

// No two runs overlap on one CPU.
bool Disjoint(std::vector<CpuRun> runs) {
  std::sort(runs.begin(), runs.end(), [](const CpuRun& a, const CpuRun& b) {
    return a.cpu != b.cpu ? a.cpu < b.cpu : a.start < b.start;
  });
  for (size_t i = 1; i < runs.size(); ++i)
    if (runs[i].cpu == runs[i - 1].cpu && runs[i].start < runs[i - 1].end) return false;
  return true;
}

const CpuRun* Find(const std::vector<CpuRun>& runs, int tid, int64_t start) {
  for (const CpuRun& r : runs)
    if (r.thread->tid == tid && r.start == start) return &r;
  return nullptr;
}

TEST(CpuOccupancy, IdleCpuPicksUpThreadWithoutRecordedSwitch) {
  Sim s;
  Collector c;
  s.AddObserver(&c);
  s.SysEnter(900, 0, 100, kClone);
  s.Switch(1000, 1, 102, kS, 0);  // CPU 1 is known to go idle
  s.Fork(1100, 0, 100, 101, true);
  s.Wake(1150, 0, 100, 101, 1, 0, WakeupKind::kWakeupNew);
  s.SysExit(1200, 0, 100, kClone);
  // No sched_switch idle -> 101 on CPU 1: its own events show it running.
  s.SysExit(1500, 1, 101, kClone);
  s.IrqEntry(1550, 1, 101);
  s.IrqExit(1570, 1, 101);
  s.SysEnter(1600, 1, 101, kRead);
  s.Switch(1700, 1, 101, kS, 0);
  s.SysEnter(1800, 0, 100, kRead);
  s.Switch(1900, 0, 100, kS, 0);
  s.Finish(2000);
  EXPECT_EQ(s.sm().anomalies().Get(Anomaly::kMissingSwitchFromIdle), 1u);

  // The CPU's run starts where the trace shows it (the thread's times start at the wakeup
  // that found CPU 1 idle, where the kernel's accounting puts the untraced switch).
  const CpuRun* r = Find(c.runs, 101, 1500);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->cpu, 1);
  EXPECT_EQ(r->end, 1700);
  EXPECT_TRUE(r->switched_out);
  EXPECT_TRUE(r->voluntary);
  EXPECT_EQ(s.syscalls().CauseLabel(r->cause), "sleep:read");
  auto sums = RunTime(c.runs);
  for (int tid : {100, 101}) EXPECT_EQ(sums[tid] + Shift(s, tid), OnCpu(s, tid)) << tid;
  EXPECT_EQ(sums[101], 200);
  EXPECT_EQ(Shift(s, 101), 1500 - 1150);
  EXPECT_EQ(sums[100], 1000);
  // 102's `unknown` is a sleep in a syscall never resolved, not time on a CPU; before
  // its first event CPU 1's task was unknown, so it has no run.
  EXPECT_EQ(sums[102], 0);
  EXPECT_TRUE(Disjoint(c.runs));
}

TEST(CpuOccupancy, PidFilterHidesSwitchBetweenUnfollowedTasks) {
  Sim s({}, Following({100}));
  Collector c;
  s.AddObserver(&c);
  s.SysEnter(1000, 0, 100, kClone);
  s.Fork(1100, 0, 100, 101, true);
  s.Wake(1150, 0, 100, 101, 0, 0, WakeupKind::kWakeupNew);
  s.SysExit(1180, 0, 100, kClone);
  s.Switch(1200, 0, 100, kR, 500, true);  // A -> X (unfollowed)
  // X -> B is not recorded (the pid filter drops switches out of X); B's own events
  // show it running.
  s.SysExit(1400, 0, 101, kClone);
  s.Soft(1450, 0, 101, true);
  s.Soft(1480, 0, 101, false);
  s.Switch(1600, 0, 101, kR, 100, true);  // B -> A
  s.SysEnter(1700, 0, 100, kRead);
  s.Switch(1800, 0, 100, kS, 0);
  s.Finish(2000);

  auto sums = RunTime(c.runs);
  EXPECT_EQ(sums[100], 200 + 200);
  EXPECT_EQ(sums[101], 200);
  EXPECT_EQ(sums[500], 200);  // drawn as the unfollowed task until B is seen
  for (int tid : {100, 101}) EXPECT_EQ(sums[tid] + Shift(s, tid), OnCpu(s, tid)) << tid;
  const CpuRun* b = Find(c.runs, 101, 1400);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->end, 1600);
  EXPECT_TRUE(b->switched_out);
  EXPECT_FALSE(b->voluntary);
  const CpuRun* x = Find(c.runs, 500, 1200);
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->end, 1400);
  EXPECT_FALSE(x->switched_out);
  EXPECT_TRUE(Disjoint(c.runs));
}

// A sleep whose syscall is not known yet gets its cause once the syscall is.
TEST(CpuOccupancy, PendingCauseArrivesWithResolution) {
  Sim s;
  Collector c;
  s.AddObserver(&c);
  s.Tick(1000, 0, 300, 0);        // running since before the trace, syscall unknown
  s.Switch(1100, 0, 300, kS, 0);  // cause waits for the syscall
  s.Wake(1200, 1, 0, 300, 0, kFlagHardirq);
  s.Switch(1300, 0, 0, kR, 300);
  s.SysExit(1350, 0, 300, kRead);  // it slept in read
  s.Switch(1400, 0, 300, kR, 0, true);
  s.Finish(1500);

  const CpuRun* first = Find(c.runs, 300, 1000);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->end, 1100);
  EXPECT_TRUE(first->switched_out);
  EXPECT_EQ(s.syscalls().CauseLabel(first->cause), "sleep:read");
  EXPECT_EQ(RunTime(c.runs)[300], OnCpu(s, 300));
  EXPECT_EQ(RunTime(c.runs)[300], 200);
}

// Lost events leave the CPU's task unknown until its next event.
TEST(CpuOccupancy, LostEventsEndTheRun) {
  Sim s;
  Collector c;
  s.AddObserver(&c);
  s.SysEnter(1000, 0, 100, kRead);
  s.SysExit(1100, 0, 100, kRead);
  s.Lost(1200, 0, 3);
  s.SysEnter(1500, 0, 100, kRead);
  s.Switch(1600, 0, 100, kS, 0);
  s.Finish(1700);
  ASSERT_EQ(c.runs.size(), 2u);
  EXPECT_EQ(Find(c.runs, 100, 1000)->end, 1200);
  EXPECT_EQ(Find(c.runs, 100, 1500)->end, 1600);
}

}  // namespace
}  // namespace cstool::testing
