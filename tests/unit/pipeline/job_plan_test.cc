// How report -j N spends its threads: decoding shares only where the CPUs' data split
// evenly and the reader can read CPUs at once; from 2 jobs for compressed data (where
// the alternative, read-ahead, leaves the decoding on the analysis thread), from 3 for
// pages in place (where 2 get the decoding thread).
#include "pipeline/job_plan.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/synthetic_trace.h"

namespace cstool {
namespace {

namespace fs = std::filesystem;

class JobPlanTest : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(dir_); }
  void TearDown() override { fs::remove_all(dir_); }

  // A v6 file whose CPUs hold `records[cpu]` records each, and (with `zstd`) its v7
  // conversion with zstd chunks.
  std::string File(const std::vector<int>& records, bool zstd) {
    SyntheticTrace t(std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/formats/events",
                     static_cast<int>(records.size()));
    const int se = t.AddEvent("raw_syscalls", "sys_enter");
    for (size_t cpu = 0; cpu < records.size(); ++cpu)
      for (int i = 0; i < records[cpu]; ++i)
        t.Append(static_cast<int>(cpu), 1000 + static_cast<uint64_t>(i) * 7,
                 t.NewRecord(se, 100).Set("id", i % 300));
    std::string v6 = (dir_ / ("f" + std::to_string(n_++) + ".dat")).string();
    t.Write(v6);
    if (!zstd) return v6;
    std::string v7 = v6 + ".v7";
    EXPECT_TRUE(ConvertToV7Zstd(v6, v7)) << v6 << ": install trace-cmd (make deps)";
    return v7;
  }

  fs::path dir_ = fs::temp_directory_path() / ("cstool-job-plan-" + std::to_string(::getpid()));
  int n_ = 0;
};

TEST_F(JobPlanTest, OneJobDoesEverythingOnTheCallingThread) {
  auto reader = OpenTraceFile(File({3000, 3000}, false));
  const JobPlan p = PlanJobs(1, *reader);
  EXPECT_FALSE(p.decode_thread);
  EXPECT_EQ(p.reading, 1);
  EXPECT_EQ(p.decoding_shares, 1);
}

TEST_F(JobPlanTest, PagesInPlaceEvenlySplitGetSharesFromThreeJobs) {
  auto reader = OpenTraceFile(File({3000, 3000, 3000}, false));
  const JobPlan two = PlanJobs(2, *reader);
  EXPECT_TRUE(two.decode_thread);
  EXPECT_EQ(two.decoding_shares, 1);
  const JobPlan three = PlanJobs(3, *reader);
  EXPECT_FALSE(three.decode_thread);
  EXPECT_EQ(three.reading, 1);
  EXPECT_EQ(three.decoding_shares, 2);
  EXPECT_EQ(PlanJobs(5, *reader).decoding_shares, 3) << "at most one share per CPU";
}

TEST_F(JobPlanTest, CompressedEvenlySplitGetsSharesFromTwoJobs) {
  auto reader = OpenTraceFile(File({3000, 3000}, true));
  ASSERT_TRUE(reader->data_compressed());
  EXPECT_EQ(PlanJobs(2, *reader).decoding_shares, 2);
  EXPECT_EQ(PlanJobs(3, *reader).decoding_shares, 2);
}

// One CPU with nearly all the data (a ping-pong pinned to it): a share would hold it all.
TEST_F(JobPlanTest, OneBusyCpuKeepsTheDecodingThreadOrReadAhead) {
  auto v6 = OpenTraceFile(File({20000, 50}, false));
  for (int jobs : {2, 3, 8}) {
    const JobPlan p = PlanJobs(jobs, *v6);
    EXPECT_TRUE(p.decode_thread) << jobs;
    EXPECT_EQ(p.decoding_shares, 1) << jobs;
  }
  auto v7 = OpenTraceFile(File({20000, 50}, true));
  // Two: the decoding thread decompresses, and the analysing thread too while it waits.
  const JobPlan two = PlanJobs(2, *v7);
  EXPECT_TRUE(two.decode_thread);
  EXPECT_EQ(two.reading, 1);
  EXPECT_TRUE(two.analysis_reads_ahead);
  EXPECT_EQ(two.decoding_shares, 1);
  // Three: a worker of its own decompresses ahead.
  const JobPlan three = PlanJobs(3, *v7);
  EXPECT_TRUE(three.decode_thread);
  EXPECT_EQ(three.reading, 2);
  EXPECT_FALSE(three.analysis_reads_ahead);
  for (int jobs : {2, 3, 8}) EXPECT_FALSE(PlanJobs(jobs, *v6).analysis_reads_ahead) << jobs;
}

// Without -j, a file below the thresholds (in its data's own bytes: compressed ones for
// zstd chunks) gets one thread, and a larger one every usable CPU.
TEST_F(JobPlanTest, DefaultJobsIsOneForASmallFile) {
  auto v6 = OpenTraceFile(File({20000, 50}, false));
  auto v7 = OpenTraceFile(File({20000, 50}, true));
  uint64_t v6_bytes = 0, v7_bytes = 0;
  for (int cpu = 0; cpu < 2; ++cpu) {
    v6_bytes += v6->CpuDataBytes(cpu);
    v7_bytes += v7->CpuDataBytes(cpu);
  }
  ASSERT_GT(v6_bytes, 0u);
  ASSERT_GT(v7_bytes, 0u);
  ASSERT_LT(v6_bytes, kOneThreadPagesBytes);
  ASSERT_LT(v7_bytes, kOneThreadCompressedBytes);
  EXPECT_EQ(DefaultJobs(*v6, 2), 1);
  EXPECT_EQ(DefaultJobs(*v7, 2), 1);
  // At the threshold, every CPU; each format by its own threshold.
  EXPECT_EQ(DefaultJobs(*v6, 4, v6_bytes, UINT64_MAX), 4);
  EXPECT_EQ(DefaultJobs(*v6, 4, v6_bytes + 1, 0), 1);
  EXPECT_EQ(DefaultJobs(*v7, 4, UINT64_MAX, v7_bytes), 4);
  EXPECT_EQ(DefaultJobs(*v7, 4, 0, v7_bytes + 1), 1);
  EXPECT_EQ(DefaultJobs(*v6, 1, 0, 0), 1);  // one usable CPU
  // A reader that does not know its sizes (libtracecmd's): every CPU.
  const std::string file = File({20000, 50}, false);
  auto lib = OpenTraceFile(file, {.backend = ReaderBackend::kLibTracecmd});
  ASSERT_EQ(lib->CpuDataBytes(0), 0u);
  EXPECT_EQ(DefaultJobs(*lib, 3), 3);
}

// Salvage notes come in reading order, and libtracecmd's streams share its handle.
TEST_F(JobPlanTest, NoSharesWhenSalvagingOrWithLibtracecmd) {
  const std::string file = File({3000, 3000, 3000}, false);
  EXPECT_EQ(PlanJobs(3, *OpenTraceFile(file, {.salvage = true})).decoding_shares, 1);
  EXPECT_EQ(
      PlanJobs(3, *OpenTraceFile(file, {.backend = ReaderBackend::kLibTracecmd})).decoding_shares,
      1);
}

}  // namespace
}  // namespace cstool
