// The synthetic workload the benchmarks and the release build's profile run on: the events
// asked for, over every CPU, in a schedule the state machine takes without an anomaly.
#include "tests/support/synthetic_workload.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "pipeline/analyze_trace.h"
#include "tests/support/synthetic_trace.h"

namespace cstool {
namespace {

TEST(SyntheticWorkload, EveryCpuTakesItsFourThreadsInTurnWithoutAnAnomaly) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("cstool-synthetic-workload-" + std::to_string(::getpid()) + ".dat"))
                               .string();
  constexpr int kCpus = 8;
  constexpr uint64_t kEvents = 20000;
  WriteSyntheticWorkload(kCpus, kEvents, path);
  SyscallTable syscalls;
  const auto analyzed = AnalyzeTrace(path, syscalls);
  std::filesystem::remove(path);
  const TraceSummary& trace = analyzed->model.trace;
  // It stops after the burst that reaches the count: four records at most.
  EXPECT_GE(trace.events, kEvents);
  EXPECT_LT(trace.events, kEvents + 4);
  EXPECT_EQ(trace.cpus, kCpus);
  EXPECT_TRUE(trace.anomalies.empty()) << ::testing::PrintToString(trace.anomalies);
  // Each CPU's four workers (tids 1000 + 4 * cpu + k) switch voluntarily, one to the next.
  int workers = 0;
  for (const ThreadReport& r : analyzed->model.threads) {
    if (r.thread == nullptr || r.thread->tid < 1000 || r.thread->tid >= 1000 + 4 * kCpus) continue;
    ++workers;
    EXPECT_GT(r.voluntary, 0u) << r.thread->tid;
    EXPECT_EQ(r.involuntary, 0u) << r.thread->tid;
  }
  EXPECT_EQ(workers, 4 * kCpus);
}

}  // namespace
}  // namespace cstool
