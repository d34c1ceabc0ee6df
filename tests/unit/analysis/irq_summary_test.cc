#include "analysis/irq_summary.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <vector>

#include "output/irq_output.h"
#include "tracefs/cpu_event_counter.h"

namespace cstool {
namespace {

Thread MakeThread(uint32_t id, int32_t tid, int32_t tgid, const char* comm) {
  Thread t;
  t.id = id;
  t.tid = tid;
  t.tgid = tgid;
  t.comm = comm;
  t.tracked = true;  // the recording's
  return t;
}

class IrqSummaryTest : public ::testing::Test {
 protected:
  void Irq(IrqKind kind, std::string_view name, int32_t cpu, int64_t start, int64_t end,
           const Thread* t) {
    observer_.OnIrq({kind, name, cpu, start, end, t});
  }
  // The trace shows `t` running on `cpu` from `ts` (a switch, or its first event there).
  void Current(int64_t ts, int32_t cpu, const Thread* t) {
    observer_.OnCpuCurrent({.ts = ts, .cpu = cpu, .current = t, .known = true});
  }
  IrqSummaryObserver observer_{{0, 1}};
  Thread job_ = MakeThread(0, 100, 100, "job");
  Thread other_ = MakeThread(1, 200, 150, "other");
};

TEST_F(IrqSummaryTest, SourcesHaveCountTotalMeanMaxAndPerCpuSplit) {
  Irq(IrqKind::kVector, "vector:local_timer", 0, 1000, 1400, &job_);
  Irq(IrqKind::kVector, "vector:local_timer", 1, 2000, 2200, nullptr);
  Irq(IrqKind::kVector, "vector:local_timer", 1, 3000, 3300, &other_);
  Irq(IrqKind::kHardirq, "irq:36 virtio1-req.0", 1, 5000, 7000, &other_);
  Irq(IrqKind::kSoftirq, "softirq:TIMER", 0, 1400, 1500, &job_);
  Irq(IrqKind::kNmi, "nmi", 0, 9000, 9010, &job_);
  IrqReport r;
  observer_.Fill(r);
  ASSERT_EQ(r.sources.size(), 4u);
  // Most total time first.
  EXPECT_EQ(r.sources[0].name, "irq:36 virtio1-req.0");
  EXPECT_EQ(r.sources[0].per_cpu.at(0).count, 0u);  // traced CPUs listed even with 0
  const IrqSourceSummary& lt = r.sources[1];
  EXPECT_EQ(lt.name, "vector:local_timer");
  EXPECT_EQ(lt.kind, IrqKind::kVector);
  EXPECT_EQ(lt.count, 3u);
  EXPECT_EQ(lt.time_ns, 900);
  EXPECT_EQ(lt.MeanNs(), 300);
  EXPECT_EQ(lt.max_ns, 400);
  EXPECT_EQ(lt.per_cpu.at(0).count, 1u);
  EXPECT_EQ(lt.per_cpu.at(0).time_ns, 400);
  EXPECT_EQ(lt.per_cpu.at(1).count, 2u);
  EXPECT_EQ(lt.per_cpu.at(1).time_ns, 500);
  EXPECT_EQ(r.idle.count, 1u);
  EXPECT_EQ(r.idle.time_ns, 200);
}

// The per-CPU counts are kept by index below IrqSummaryObserver::kDenseCpus and in the
// map itself from there (a damaged file's CPU numbers): both count alike, and a CPU
// listed up front (0, 1) is the same entry the interrupts then count in.
TEST_F(IrqSummaryTest, PerCpuCountsAreTheSameOnEveryCpuNumber) {
  const int32_t high = IrqSummaryObserver::kDenseCpus + 5;
  for (int32_t cpu : {1, 7, high, -1, 1, high})
    Irq(IrqKind::kVector, "vector:x", cpu, 0, 10, &job_);
  IrqReport r;
  observer_.Fill(r);
  ASSERT_EQ(r.sources.size(), 1u);
  const std::map<int32_t, IrqCount>& per_cpu = r.sources[0].per_cpu;
  ASSERT_EQ(per_cpu.size(), 5u);  // 0 (listed), 1, 7, high, -1
  EXPECT_EQ(per_cpu.at(0).count, 0u);
  EXPECT_EQ(per_cpu.at(1).count, 2u);
  EXPECT_EQ(per_cpu.at(1).time_ns, 20);
  EXPECT_EQ(per_cpu.at(7).count, 1u);
  EXPECT_EQ(per_cpu.at(high).count, 2u);
  EXPECT_EQ(per_cpu.at(-1).count, 1u);
  EXPECT_EQ(r.sources[0].count, 6u);
}

TEST_F(IrqSummaryTest, TasksRankByLostTimeFromTheirMicrostates) {
  Irq(IrqKind::kVector, "vector:local_timer", 0, 1000, 1400, &job_);
  Irq(IrqKind::kVector, "vector:local_timer", 0, 1500, 1600, &job_);
  Irq(IrqKind::kHardirq, "irq:36 virtio1-req.0", 1, 5000, 7000, &other_);
  // A hardirq nested in a softirq: the sources each count it, the microstates once.
  Irq(IrqKind::kHardirq, "irq:36 virtio1-req.0", 1, 8100, 8200, &other_);
  Irq(IrqKind::kSoftirq, "softirq:NET_RX", 1, 8000, 8500, &other_);
  observer_.OnInterruptSegment(job_, Microstate::kIrq, 0, 1000, 1400);
  observer_.OnInterruptSegment(job_, Microstate::kIrq, 0, 1500, 1600);
  observer_.OnInterruptSegment(other_, Microstate::kIrq, 1, 5000, 7000);
  observer_.OnInterruptSegment(other_, Microstate::kSoftirq, 1, 8000, 8100);
  observer_.OnInterruptSegment(other_, Microstate::kIrq, 1, 8100, 8200);
  observer_.OnInterruptSegment(other_, Microstate::kSoftirq, 1, 8200, 8500);
  IrqReport r;
  observer_.Fill(r);
  ASSERT_EQ(r.tasks.size(), 2u);
  const IrqTaskSummary& first = r.tasks[0];
  EXPECT_EQ(first.tid, 200);
  EXPECT_EQ(first.pid, 150);
  EXPECT_EQ(first.comm, "other");
  EXPECT_EQ(first.irq_ns, 2100);
  EXPECT_EQ(first.softirq_ns, 400);
  EXPECT_EQ(first.LostNs(), 2500);
  EXPECT_EQ(first.count, 3u);
  EXPECT_EQ(first.sources.at("irq:36 virtio1-req.0").count, 2u);
  EXPECT_EQ(first.sources.at("irq:36 virtio1-req.0").time_ns, 2100);
  EXPECT_EQ(first.sources.at("softirq:NET_RX").time_ns, 500);
  EXPECT_EQ(r.tasks[1].tid, 100);
  EXPECT_EQ(r.tasks[1].LostNs(), 500);
  EXPECT_EQ(r.tasks[1].sources.at("vector:local_timer").count, 2u);
}

// An idle CPU's softirqs are its softirq time, apart from its interrupts, as a task's
// SOFTIRQ_US is from its IRQ_US: each kind's sources add up to the tasks' time of it and the
// idle CPUs' (the idle line once counted the softirqs with the hardirqs, and the hardirqs'
// sum did not add up). The rest of a softirq a task woken in it ran leaves the softirq side.
TEST_F(IrqSummaryTest, AnIdleCpusSoftirqsAreApartFromItsInterrupts) {
  Irq(IrqKind::kVector, "vector:local_timer", 1, 1000, 1400, nullptr);
  Irq(IrqKind::kSoftirq, "softirq:TIMER", 1, 1400, 1700, nullptr);
  Current(1750, 1, &job_);
  observer_.OnInterruptSegment(job_, Microstate::kSoftirq, 1, 1600, 1700);  // its rest
  Irq(IrqKind::kHardirq, "irq:36 virtio1-req.0", 0, 2000, 2500, &other_);
  observer_.OnInterruptSegment(other_, Microstate::kIrq, 0, 2000, 2500);
  Irq(IrqKind::kSoftirq, "softirq:NET_RX", 0, 2500, 2600, &other_);
  observer_.OnInterruptSegment(other_, Microstate::kSoftirq, 0, 2500, 2600);
  IrqReport r;
  observer_.Fill(r);
  EXPECT_EQ(r.idle.count, 1u);
  EXPECT_EQ(r.idle.time_ns, 400);
  EXPECT_EQ(r.idle_softirq.count, 1u);
  EXPECT_EQ(r.idle_softirq.time_ns, 200);
  int64_t irq_sources = 0, softirq_sources = 0, irq_tasks = 0, softirq_tasks = 0;
  for (const IrqSourceSummary& src : r.sources)
    (src.kind == IrqKind::kSoftirq ? softirq_sources : irq_sources) += src.time_ns;
  for (const IrqTaskSummary& t : r.tasks) {
    irq_tasks += t.irq_ns;
    softirq_tasks += t.softirq_ns;
  }
  EXPECT_EQ(irq_sources, 900);
  EXPECT_EQ(irq_tasks + r.idle.time_ns, irq_sources);
  EXPECT_EQ(softirq_sources, 400);
  EXPECT_EQ(softirq_tasks + r.idle_softirq.time_ns, softirq_sources);
  std::ostringstream table;
  MakeIrqOutput("table", table)->RenderSummary(r);
  EXPECT_NE(table.str().find("idle CPUs were hit 1 times (0.4 us) and ran 1 softirqs (0.2 us)\n"),
            std::string::npos)
      << table.str();
}

// The task the kernel switched in inside an interrupt that hit an idle CPU ran the rest of
// it: that rest is its irq time and no idle time, and the interrupt is among its sources
// (a task woken from idle by the tick showed LOST time with COUNT 0 and no source).
TEST_F(IrqSummaryTest, TheRestOfAnIdleCpusInterruptIsTheNextTasksWithItsSource) {
  Irq(IrqKind::kVector, "vector:local_timer", 1, 1000, 1400, nullptr);
  Current(1450, 1, &job_);
  observer_.OnInterruptSegment(job_, Microstate::kIrq, 1, 1300, 1350);  // its rest, in two pieces
  observer_.OnInterruptSegment(job_, Microstate::kIrq, 1, 1350, 1400);
  Irq(IrqKind::kVector, "vector:local_timer", 1, 2000, 2100, &job_);
  observer_.OnInterruptSegment(job_, Microstate::kIrq, 1, 2000, 2100);
  IrqReport r;
  observer_.Fill(r);
  EXPECT_EQ(r.idle.count, 1u);
  EXPECT_EQ(r.idle.time_ns, 300);
  ASSERT_EQ(r.tasks.size(), 1u);
  EXPECT_EQ(r.tasks[0].LostNs(), 200);
  EXPECT_EQ(r.tasks[0].count, 2u);
  EXPECT_EQ(r.tasks[0].sources.at("vector:local_timer").count, 2u);
  EXPECT_EQ(r.tasks[0].sources.at("vector:local_timer").time_ns, 200);
}

// The same inside a tick that hit a running task, whose wakeup preempted it: the rest
// after the switch's instant is the next task's, in its sources and no longer in the
// preempted task's, so each one's sources add up to its LOST.
TEST_F(IrqSummaryTest, TheRestOfAnInterruptAfterASwitchIsTheNextTasks) {
  Irq(IrqKind::kVector, "vector:local_timer", 1, 1000, 1400, &job_);
  Current(1450, 1, &other_);
  observer_.OnInterruptSegment(job_, Microstate::kIrq, 1, 1000, 1300);
  observer_.OnInterruptSegment(other_, Microstate::kIrq, 1, 1300, 1400);
  IrqReport r;
  observer_.Fill(r);
  ASSERT_EQ(r.tasks.size(), 2u);
  for (const IrqTaskSummary& t : r.tasks) {
    SCOPED_TRACE(t.tid);
    EXPECT_EQ(t.count, 1u);
    EXPECT_EQ(t.sources.at("vector:local_timer").count, 1u);
    EXPECT_EQ(t.sources.at("vector:local_timer").time_ns, t.LostNs());
  }
  EXPECT_EQ(r.tasks[0].tid, 100);
  EXPECT_EQ(r.tasks[0].LostNs(), 300);
  EXPECT_EQ(r.idle.count, 0u);
}

// A switch the kernel placed before the interrupt began: all of it is the next task's,
// and it hit the preempted task not at all.
TEST_F(IrqSummaryTest, AnInterruptWhollyAfterTheSwitchIsTheNextTasksOnly) {
  Irq(IrqKind::kVector, "vector:local_timer", 1, 1000, 1400, &job_);
  Current(1450, 1, &other_);
  observer_.OnInterruptSegment(other_, Microstate::kIrq, 1, 1000, 1400);
  IrqReport r;
  observer_.Fill(r);
  ASSERT_EQ(r.tasks.size(), 1u);
  EXPECT_EQ(r.tasks[0].tid, 200);
  EXPECT_EQ(r.tasks[0].count, 1u);
  EXPECT_EQ(r.tasks[0].sources.at("vector:local_timer").time_ns, 400);
}

// An interrupt is the rest of the task the trace showed next on its CPU right after it,
// and of no other task with an irq segment there at that time.
TEST_F(IrqSummaryTest, AnInterruptIsTheRestOfTheTaskThatCameNextOnly) {
  Irq(IrqKind::kVector, "vector:local_timer", 1, 1000, 1400, &other_);
  Current(201'400, 1, &job_);  // other_ ran on after the tick
  observer_.OnInterruptSegment(other_, Microstate::kIrq, 1, 1000, 1400);
  observer_.OnInterruptSegment(job_, Microstate::kIrq, 1, 1100, 1200);
  IrqReport r;
  observer_.Fill(r);
  ASSERT_EQ(r.tasks.size(), 2u);
  EXPECT_EQ(r.tasks[0].tid, 200);
  EXPECT_EQ(r.tasks[0].sources.at("vector:local_timer").time_ns, 400);
  EXPECT_EQ(r.tasks[1].tid, 100);
  EXPECT_EQ(r.tasks[1].count, 0u);
  EXPECT_TRUE(r.tasks[1].sources.empty());
}

// A segment is final only at the kernel's next accounting of its thread, which may have
// been woken onto another CPU by then: the interrupt it was the rest of is looked up on
// the segment's CPU, not the thread's (here the rest stayed idle time).
TEST_F(IrqSummaryTest, ASegmentCountsOnItsOwnCpuNotWhereItsThreadIsNow) {
  job_.cpu = 0;  // queued on CPU 0 by the time its segment is delivered
  Irq(IrqKind::kVector, "vector:local_timer", 1, 1000, 1400, nullptr);
  Irq(IrqKind::kVector, "vector:local_timer", 0, 1000, 1400, &other_);
  Current(1450, 1, &job_);
  Current(1450, 0, &job_);  // (as if it had come next on CPU 0 too)
  observer_.OnInterruptSegment(job_, Microstate::kIrq, 1, 1300, 1400);
  IrqReport r;
  observer_.Fill(r);
  EXPECT_EQ(r.idle.time_ns, 300);
  ASSERT_EQ(r.tasks.size(), 2u);
  EXPECT_EQ(r.tasks[0].tid, 100);  // (its LOST first: other_'s segments are not here)
  EXPECT_EQ(r.tasks[0].count, 1u);
  EXPECT_EQ(r.tasks[0].sources.at("vector:local_timer").time_ns, 100);
  EXPECT_EQ(r.tasks[1].tid, 200);  // its tick on CPU 0 stays whole
  EXPECT_EQ(r.tasks[1].count, 1u);
  EXPECT_EQ(r.tasks[1].sources.at("vector:local_timer").time_ns, 400);
}

// The recorder's own threads (traced by cstool irq, not the recording's): their
// interrupts count in the sources, and they are no row of the task table.
TEST_F(IrqSummaryTest, ThreadsNotTheRecordingsAreNoTasks) {
  Thread recorder = MakeThread(2, 300, 300, "cstool");
  recorder.tracked = false;
  Irq(IrqKind::kVector, "vector:local_timer", 0, 1000, 1400, &recorder);
  observer_.OnInterruptSegment(recorder, Microstate::kIrq, 0, 1000, 1400);
  Irq(IrqKind::kVector, "vector:local_timer", 1, 2000, 2100, &job_);
  observer_.OnInterruptSegment(job_, Microstate::kIrq, 1, 2000, 2100);
  IrqReport r;
  observer_.Fill(r);
  ASSERT_EQ(r.sources.size(), 1u);
  EXPECT_EQ(r.sources[0].count, 2u);
  EXPECT_EQ(r.sources[0].time_ns, 500);
  ASSERT_EQ(r.tasks.size(), 1u);
  EXPECT_EQ(r.tasks[0].tid, 100);
  // Theirs on a line of its own: tasks, idle and the recorder add up to the sources.
  EXPECT_EQ(r.recorder.count, 1u);
  EXPECT_EQ(r.recorder.irq_ns, 400);
  EXPECT_EQ(r.tasks[0].irq_ns + r.idle.time_ns + r.recorder.irq_ns, r.sources[0].time_ns);
  std::ostringstream table;
  MakeIrqOutput("table", table)->RenderSummary(r);
  EXPECT_NE(table.str().find(
                "cstool's own threads (not listed) were hit 1 times (IRQ_US 0.4, SOFTIRQ_US 0.0)"),
            std::string::npos)
      << table.str();
  EXPECT_EQ(IrqReportToJson(r)["recorder"]["irq_ns"], 400);
  EXPECT_EQ(IrqReportToJson(r)["recorder"]["softirq_ns"], 0);
}

// Past the table's top ten, the other tasks' interrupts show on a line of their own, in
// the table's terms: a task there may have lost softirq time alone.
TEST_F(IrqSummaryTest, TheTableSumsUpTheTasksPastItsTop) {
  std::vector<Thread> threads;
  for (uint32_t i = 0; i < 13; ++i)
    threads.push_back(MakeThread(10 + i, 1000 + static_cast<int32_t>(i), 1000, "worker"));
  for (uint32_t i = 0; i < 12; ++i) {
    const int64_t at = 10'000 * (i + 1), dur = 1000 - 10 * i;  // the last two least
    Irq(IrqKind::kVector, "vector:local_timer", 0, at, at + dur, &threads[i]);
    observer_.OnInterruptSegment(threads[i], Microstate::kIrq, 0, at, at + dur);
  }
  Irq(IrqKind::kSoftirq, "softirq:RCU", 0, 200'000, 200'300, &threads[12]);
  observer_.OnInterruptSegment(threads[12], Microstate::kSoftirq, 0, 200'000, 200'300);
  IrqReport r;
  r.cpus = {0};
  observer_.Fill(r);
  std::ostringstream table;
  MakeIrqOutput("table", table)->RenderSummary(r);
  EXPECT_NE(
      table.str().find("3 more tasks were hit 3 times (LOST_US 2.1, IRQ_US 1.8, SOFTIRQ_US 0.3)"),
      std::string::npos)
      << table.str();
}

TEST_F(IrqSummaryTest, JsonListsPerCpuCountsAndIrqNumbers) {
  Irq(IrqKind::kVector, "vector:local_timer", 1, 0, 10, &job_);
  Irq(IrqKind::kHardirq, "irq:36 virtio1-req.0", 0, 0, 5, &job_);
  IrqReport r;
  r.cpus = {0, 1};
  observer_.Fill(r);
  nlohmann::json j = IrqReportToJson(r);
  ASSERT_EQ(j["sources"].size(), 2u);
  EXPECT_EQ(j["sources"][0]["name"], "vector:local_timer");
  EXPECT_EQ(j["sources"][0]["kind"], "vector");
  EXPECT_EQ(j["sources"][0]["per_cpu"]["1"]["count"], 1);
  EXPECT_EQ(j["sources"][0]["per_cpu"]["0"]["count"], 0);
  EXPECT_EQ(j["sources"][1]["irq"], 36);
  EXPECT_EQ(j["tasks"][0]["comm"], "job");
}

TEST(CpuEventCounterFormat, ReadsIdAndFieldOffsets) {
  const char* format =
      "name: hrtimer_expire_entry\n"
      "ID: 123\n"
      "format:\n"
      "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
      "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
      "\n"
      "\tfield:void * hrtimer;\toffset:8;\tsize:8;\tsigned:0;\n"
      "\tfield:s64 now;\toffset:16;\tsize:8;\tsigned:1;\n"
      "\tfield:void * function;\toffset:24;\tsize:8;\tsigned:0;\n"
      "\tfield:char comm[16];\toffset:32;\tsize:16;\tsigned:0;\n";
  EXPECT_EQ(FormatEventId(format), 123);
  int off = 0, size = 0;
  ASSERT_TRUE(FormatField(format, "function", &off, &size));
  EXPECT_EQ(off, 24);
  EXPECT_EQ(size, 8);
  ASSERT_TRUE(FormatField(format, "now", &off, &size));
  EXPECT_EQ(off, 16);
  ASSERT_TRUE(FormatField(format, "comm", &off, &size));
  EXPECT_EQ(size, 16);
  EXPECT_FALSE(FormatField(format, "func", &off, &size));
  EXPECT_EQ(FormatEventId("name: x\n"), -1);
}

}  // namespace
}  // namespace cstool
