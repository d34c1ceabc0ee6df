// The decoding threads of report -j get about equal data: the largest CPUs first, each
// to the emptiest share; and the largest share's part, which decides whether shares pay.
#include "decode/cpu_shares.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/synthetic_trace.h"

namespace cstool {
namespace {

namespace fs = std::filesystem;

const std::string kFixtures = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/";

// A v6 file whose CPUs hold `records[cpu]` records each (about 200 a page).
std::string WriteFile(const fs::path& dir, const std::vector<int>& records) {
  SyntheticTrace t(kFixtures + "formats/events", static_cast<int>(records.size()));
  const int se = t.AddEvent("raw_syscalls", "sys_enter");
  for (size_t cpu = 0; cpu < records.size(); ++cpu)
    for (int i = 0; i < records[cpu]; ++i)
      t.Append(static_cast<int>(cpu), 1000 + static_cast<uint64_t>(i),
               t.NewRecord(se, 100).Set("id", 1));
  std::string path = (dir / ("shares" + std::to_string(records.size()) + ".dat")).string();
  t.Write(path);
  return path;
}

class CpuSharesTest : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(dir_); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_ = fs::temp_directory_path() / ("cstool-shares-" + std::to_string(::getpid()));
};

TEST_F(CpuSharesTest, TheLargestCpusFirstEachToTheEmptiestShare) {
  auto reader = OpenTraceFile(WriteFile(dir_, {600, 2000, 600, 600, 200}));
  uint64_t total = 0;
  for (int cpu = 0; cpu < 5; ++cpu) total += reader->CpuDataBytes(cpu);
  ASSERT_GT(reader->CpuDataBytes(1), 2 * reader->CpuDataBytes(0));
  const CpuShares two = ShareCpus(*reader, 2);
  EXPECT_EQ(two.cpus, (std::vector<std::vector<int>>{{1}, {0, 2, 3, 4}}));
  EXPECT_DOUBLE_EQ(two.largest_fraction,
                   static_cast<double>(reader->CpuDataBytes(1)) / static_cast<double>(total));
  // More shares than CPUs: one CPU each.
  EXPECT_EQ(ShareCpus(*reader, 8).cpus, (std::vector<std::vector<int>>{{1}, {0}, {2}, {3}, {4}}));
}

TEST_F(CpuSharesTest, OneBusyCpuMakesOneShareHoldNearlyAll) {
  auto reader = OpenTraceFile(WriteFile(dir_, {20000, 10}));
  const CpuShares two = ShareCpus(*reader, 2);
  EXPECT_EQ(two.cpus, (std::vector<std::vector<int>>{{0}, {1}}));
  EXPECT_GT(two.largest_fraction, 0.9);
}

// libtracecmd does not say where a CPU's data lies: CPU n goes to share n mod shares.
TEST_F(CpuSharesTest, WithoutSizesRoundRobin) {
  auto reader = OpenTraceFile(WriteFile(dir_, {100, 5000, 100, 100, 100}),
                              {.backend = ReaderBackend::kLibTracecmd});
  EXPECT_EQ(reader->CpuDataBytes(1), 0u);
  const CpuShares two = ShareCpus(*reader, 2);
  EXPECT_EQ(two.cpus, (std::vector<std::vector<int>>{{0, 2, 4}, {1, 3}}));
  EXPECT_DOUBLE_EQ(two.largest_fraction, 3.0 / 5);
}

}  // namespace
}  // namespace cstool
