// The counters library without a PMU: the -c/-V syntax, derived metrics, the stored
// samples' JSON and totals, and a software group on the test's own thread.
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/errors.h"
#include "counters/counter_samples.h"
#include "counters/derived_metrics.h"
#include "counters/event_list.h"
#include "counters/perf_group.h"
#include "counters/thread_counters.h"
#include "counters/virtual_counters.h"
#include "tests/support/sweep.h"

namespace cstool {
namespace {

std::string UsageMessage(auto fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(EventList, ParsesNamedRawAndSampling) {
  std::vector<CounterEvent> e =
      ParseEventList("instructions,page-faults,r01c2,cycles:ebs=100000,context-switches");
  ASSERT_EQ(e.size(), 5u);
  EXPECT_EQ(e[0].name, "instructions");
  EXPECT_EQ(e[0].type, uint32_t{PERF_TYPE_HARDWARE});
  EXPECT_EQ(e[0].config, uint64_t{PERF_COUNT_HW_INSTRUCTIONS});
  EXPECT_TRUE(e[0].hardware());
  EXPECT_EQ(e[1].type, uint32_t{PERF_TYPE_SOFTWARE});
  EXPECT_EQ(e[1].config, uint64_t{PERF_COUNT_SW_PAGE_FAULTS});
  EXPECT_FALSE(e[1].hardware());
  EXPECT_EQ(e[2].name, "r01c2");
  EXPECT_EQ(e[2].type, uint32_t{PERF_TYPE_RAW});
  EXPECT_EQ(e[2].config, 0x1c2u);
  EXPECT_EQ(e[3].name, "cycles");
  EXPECT_EQ(e[3].ebs_period, 100000u);
  EXPECT_EQ(e[4].config, uint64_t{PERF_COUNT_SW_CONTEXT_SWITCHES});
}

TEST(EventList, RefusesMistakesNamingWhatExists) {
  EXPECT_NE(UsageMessage([] {
              ParseEventList("instr,page-faults");
            }).find("unknown counter event 'instr' (hardware: instructions, cycles"),
            std::string::npos);
  EXPECT_NE(UsageMessage([] { ParseEventList("task-clock,"); }).find("empty name"),
            std::string::npos);
  EXPECT_NE(UsageMessage([] { ParseEventList("rxyz"); }).find("unknown counter event 'rxyz'"),
            std::string::npos);
  EXPECT_NE(UsageMessage([] { ParseEventList("cycles:ebs=0"); }).find("at least 1"),
            std::string::npos);
  EXPECT_NE(UsageMessage([] { ParseEventList("cycles:ebs=x"); }).find("invalid sampling period"),
            std::string::npos);
  EXPECT_NE(UsageMessage([] { ParseEventList("cycles:period=3"); }).find("unknown modifier"),
            std::string::npos);
  EXPECT_NE(UsageMessage([] { ParseEventList("cycles,cycles"); }).find("given twice"),
            std::string::npos);
}

TEST(VirtualCounters, ParsesAndRefuses) {
  std::vector<VirtualCounter> v = ParseVirtualList("write-bytes,read-bytes");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].kind, VirtualCounter::Kind::kWriteBytes);
  EXPECT_TRUE(v[1].per_thread());
  // The per-thread ones apart from energy, which only msa takes.
  EXPECT_EQ(UsageMessage([] { ParseVirtualList("io"); }),
            "unknown virtual counter 'io' (expected read-bytes or write-bytes, per thread; or "
            "energy, for the whole machine, with `cstool msa`)");
  if (!ReadPackageEnergyUj()) {
    EXPECT_NE(UsageMessage([] {
                ParseVirtualList("energy");
              }).find("per-thread virtual counters that work here: read-bytes, write-bytes"),
              std::string::npos);
  }
}

TEST(DerivedMetrics, OnlyWhereInputsWereCounted) {
  auto d = DerivedMetrics({"instructions", "cycles", "cache-misses", "branch-misses"},
                          {2000, 1000, 30, 4});
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].first, "ipc");
  EXPECT_DOUBLE_EQ(d[0].second, 2.0);
  EXPECT_EQ(d[1].first, "cache_misses_mpki");
  EXPECT_DOUBLE_EQ(d[1].second, 15.0);
  EXPECT_EQ(d[2].first, "branch_misses_mpki");
  EXPECT_DOUBLE_EQ(d[2].second, 2.0);
  EXPECT_TRUE(DerivedMetrics({"page-faults", "cycles"}, {5, 7}).empty());
  EXPECT_TRUE(DerivedMetrics({"instructions", "cycles"}, {5, 0}).empty());  // no division by 0
}

// task-clock counts nanoseconds: per second, the CPUs it kept busy (it read as
// "987654321.0" per second); other counters stay counts per second.
TEST(DerivedMetrics, ATimeCountersRateReadsAsCpus) {
  EXPECT_EQ(RateText("task-clock", 987'654'321.0), "0.988 CPUs");
  EXPECT_EQ(RateText("task-clock", 2e9), "2.000 CPUs");
  EXPECT_EQ(RateText("page-faults", 1234.56), "1234.6");
}

TEST(CounterSamples, JsonRoundTripAndTotals) {
  CounterRecording rec;
  rec.names = {"page-faults", "write-bytes"};
  rec.perf_columns = 1;
  rec.interval_ns = 500000000;
  rec.samples = {{11, 10, 1000, "start", {0, 100}, false},
                 {10, 10, 1000, "start", {0, 0}, false},
                 {11, 10, 2000000000, "interval", {7, 150}, false},
                 {11, 10, 3000000000, "exit", {9, 300}, true},
                 {10, 10, 4000001000, "end", {4, 10}, false}};
  const CounterRecording back = nlohmann::json(rec).get<CounterRecording>();
  ASSERT_EQ(back.samples.size(), 5u);
  EXPECT_EQ(back.samples[3].kind, "exit");
  EXPECT_EQ(back.interval_ns, 500000000);

  std::vector<CounterTotals> threads = TotalsByThread(back);
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads[0].tid, 10);
  EXPECT_EQ(threads[0].values, (std::vector<uint64_t>{4, 10}));
  EXPECT_DOUBLE_EQ(threads[0].Rate(0), 1.0);  // 4 over 4 s
  EXPECT_EQ(threads[1].tid, 11);
  EXPECT_EQ(threads[1].values, (std::vector<uint64_t>{9, 200}));
  EXPECT_TRUE(threads[1].scaled);
  EXPECT_TRUE(threads[1].exited);
  EXPECT_EQ(threads[1].samples, 3u);

  std::vector<CounterTotals> procs = SumByProcess(threads);
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(procs[0].tgid, 10);
  EXPECT_EQ(procs[0].values, (std::vector<uint64_t>{13, 210}));
  EXPECT_EQ(procs[0].first_ts, 1000);
  EXPECT_EQ(procs[0].last_ts, 4000001000);

  rec.samples.push_back({12, 10, 5, "start", {1}, false});
  EXPECT_THROW(TotalsByThread(rec), Error);
}

// -c EVENT:ebs=N adds the sampling and its overflows; a file from before sampling (no
// such keys) reads as none.
TEST(CounterSamples, OverflowsRoundTripAndOlderFilesHaveNone) {
  CounterRecording rec;
  rec.names = {"page-faults", "write-bytes"};
  rec.perf_columns = 1;
  rec.samples = {{11, 10, 1000, "start", {0, 0}, false}, {11, 10, 9000, "exit", {250, 7}, false}};
  rec.sampling = {"page-faults", 100, {{11, 10, 2, 1, 1, 1}}};
  rec.overflows = {{11, 10, 4000, 1, 0x401000, {100}, false},
                   {11, 10, 6000, 0, 0x401008, {200}, false}};
  const nlohmann::json j = rec;
  EXPECT_EQ(j["version"], 1);
  const CounterRecording back = j.get<CounterRecording>();
  EXPECT_EQ(back.sampling.event, "page-faults");
  EXPECT_EQ(back.sampling.period, 100u);
  ASSERT_EQ(back.sampling.threads.size(), 1u);
  EXPECT_EQ(back.sampling.threads[0].lost, 1u);
  EXPECT_EQ(back.sampling.threads[0].throttles, 1u);
  ASSERT_EQ(back.overflows.size(), 2u);
  EXPECT_EQ(back.overflows[1].ts, 6000);
  EXPECT_EQ(back.overflows[1].ip, 0x401008u);
  EXPECT_EQ(back.overflows[1].values, (std::vector<uint64_t>{200}));
  EXPECT_EQ(TotalsByThread(back).size(), 1u);

  nlohmann::json old = j;
  old.erase("sampling");
  old.erase("overflows");
  const CounterRecording older = old.get<CounterRecording>();
  EXPECT_EQ(older.sampling.period, 0u);
  EXPECT_TRUE(older.overflows.empty());
  EXPECT_EQ(older.samples.size(), 2u);

  rec.overflows.push_back({11, 10, 7000, 0, 0, {300, 9}, false});  // virtual columns too
  EXPECT_THROW(TotalsByThread(rec), Error);
}

// A thread's group keeps its final counts after the thread exited; ThreadCounters gives
// them once, marked exited, and stops following the thread.
TEST(ThreadCounters, FinalCountsOfAnExitedThread) {
  ThreadCounters tc(ParseEventList("page-faults"), {});
  std::mutex m;
  std::condition_variable cv;
  bool counted = false;
  int32_t tid = 0;
  std::thread worker([&] {
    std::unique_lock lock(m);
    tid = static_cast<int32_t>(::gettid());
    cv.notify_all();
    cv.wait(lock, [&] { return counted; });
    const long page = sysconf(_SC_PAGESIZE);
    char* mem = static_cast<char*>(
        mmap(nullptr, 32 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    madvise(mem, 32 * page, MADV_NOHUGEPAGE);
    for (int i = 0; i < 32; ++i) mem[i * page] = 1;
    munmap(mem, 32 * page);
  });
  {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return tid != 0; });
    try {
      ASSERT_TRUE(tc.Follow(::getpid(), tid));
    } catch (const Error& e) {
      counted = true;
      cv.notify_all();
      lock.unlock();
      worker.join();
      GTEST_SKIP() << e.what();
    }
    counted = true;
    cv.notify_all();
  }
  worker.join();
  std::vector<ThreadReading> exited = tc.ReadExited(1);
  ASSERT_EQ(exited.size(), 1u);
  EXPECT_TRUE(exited[0].exited);
  EXPECT_GE(exited[0].values[0], 32u);
  EXPECT_EQ(tc.live(), 0u);
  EXPECT_TRUE(tc.Followed(tid));
  EXPECT_FALSE(tc.Follow(::getpid(), tid));  // a thread is followed once
}

// A group opened on a thread that is running (msa attaches to running threads) counts
// with every member from the open: a member added to the running group counted from the
// thread's next switch-in only, which a busy thread may not have for long (msa showed
// task-clock 0-325 ms of a spinning thread's 500). The group's running time is the
// leader's, kept on the same context clock as task-clock and started in the same pass
// over the group: a member that started late reads less than it. (The thread's CPU-time
// clock is no bound: it starts each switch-in at schedule()'s entry, perf at the end of
// the switch, so task-clock falls short by the switches' length, once 50 us in 4.)
TEST(PerfGroup, AMemberCountsFromTheOpenOfARunningThread) {
  std::atomic<bool> stop{false};
  std::atomic<pid_t> tid{0};
  std::thread spinner([&] {
    tid = static_cast<pid_t>(::syscall(SYS_gettid));
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  while (tid == 0) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // running by now
  int error = 0;
  std::optional<PerfGroup> g =
      PerfGroup::Open(tid, ParseEventList("context-switches,task-clock"), &error);
  if (!g && (error == EACCES || error == EPERM)) {
    stop = true;
    spinner.join();
    GTEST_SKIP() << "perf_event_open not permitted";
  }
  ASSERT_TRUE(g) << error;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::optional<GroupReading> r = g->Read();
  stop = true;
  spinner.join();
  ASSERT_TRUE(r);
  EXPECT_GT(r->running_ns, 0u);
  // The read brings task-clock up to the moment it is read, after the group's times.
  EXPECT_GE(r->values[1], r->running_ns)
      << "task-clock " << r->values[1] << " switches " << r->values[0];
}

// Software events count on any kernel: this thread's own faults, exactly.
TEST(PerfGroup, CountsOwnPageFaults) {
  // (task-clock is left out: a thread reading its own group while running sees the
  // clock of the last switch; the integration test checks task-clock from outside.)
  std::vector<CounterEvent> events = ParseEventList("page-faults,context-switches");
  int error = 0;
  std::optional<PerfGroup> g = PerfGroup::Open(0, events, &error);
  if (!g && (error == EACCES || error == EPERM)) GTEST_SKIP() << "perf_event_open not permitted";
  ASSERT_TRUE(g) << error;
  const long page = sysconf(_SC_PAGESIZE);
  constexpr long kPages = 64;
  char* mem = static_cast<char*>(
      mmap(nullptr, kPages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(mem, MAP_FAILED);
  madvise(mem, kPages * page, MADV_NOHUGEPAGE);
  // A reading allocates its values after the counters are read: a first reading, thrown
  // away, leaves heap blocks of its sizes for `before`'s to take, so no fresh heap page
  // faults between the two readings (65 for 64 once in a clean build).
  (void)g->Read();
  std::optional<GroupReading> before = g->Read();
  for (long i = 0; i < kPages; ++i) mem[i * page] = 1;
  std::optional<GroupReading> after = g->Read();
  munmap(mem, kPages * page);
  ASSERT_TRUE(before && after);
  const uint64_t faults = after->values[0] - before->values[0];
  if (testing::kUnderAddressSanitizer) {
    // AddressSanitizer checks every store against its shadow (a byte per 8): the first
    // store into each shadow page faults as well (kPages / 8 pages), and its allocator
    // maps a few fresh pages for the readings (75 in one run: 64 + 8 + 3).
    EXPECT_GE(faults, uint64_t{kPages});
    EXPECT_LE(faults, uint64_t{kPages + kPages / 8 + 8});
  } else {
    EXPECT_EQ(faults, uint64_t{kPages});
  }
  EXPECT_FALSE(after->scaled);  // software events are never multiplexed
}

}  // namespace
}  // namespace cstool
