// Golden outputs of `cstool report` on a small trace recorded with `cstool record` on
// the 6.18 test machine (tests/fixtures/golden_mutex.dat: `cstool_workload mutex 2 40`)
// and on a trace-cmd v6 file. Regenerate after an intended change with
//   CSTOOL_UPDATE_GOLDEN=1 build/cstool_unit_tests --gtest_filter='Golden*'
// and review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/files.h"
#include "tests/support/run_command.h"

namespace cstool::testing {
namespace {

// Output with the source directory stripped, so goldens do not depend on the checkout.
std::string Report(const std::string& fixture, const std::string& format,
                   const std::vector<std::string>& options = {}) {
  std::string src = std::string(CSTOOL_SOURCE_DIR) + "/";
  std::vector<std::string> argv = {CSTOOL_BINARY, "report", src + "tests/fixtures/" + fixture,
                                   "--format", format};
  argv.insert(argv.end(), options.begin(), options.end());
  CommandResult r = RunCommand(argv);
  EXPECT_EQ(r.status, 0) << r.err;
  std::string out = r.out;
  for (size_t pos; (pos = out.find(src)) != std::string::npos;) out.erase(pos, src.size());
  return out;
}

struct GoldenCase {
  std::string fixture;
  std::string format;
  std::string golden;
  std::vector<std::string> options;
};

class Golden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(Golden, ReportMatches) {
  const GoldenCase& c = GetParam();
  std::string path = std::string(CSTOOL_SOURCE_DIR) + "/tests/golden/" + c.golden;
  std::string actual = Report(c.fixture, c.format, c.options);
  if (std::getenv("CSTOOL_UPDATE_GOLDEN")) {
    std::ofstream(path) << actual;
    GTEST_SKIP() << "updated " << path;
  }
  std::string expected = ReadWholeFile(path);
  ASSERT_FALSE(expected.empty()) << path << " is missing";
  EXPECT_EQ(actual, expected) << "report of " << c.fixture << " as " << c.format
                              << " changed; see the header comment to regenerate";
}

INSTANTIATE_TEST_SUITE_P(
    Reports, Golden,
    ::testing::Values(GoldenCase{"golden_mutex.dat", "table", "golden_mutex.table"},
                      GoldenCase{"golden_mutex.dat", "json", "golden_mutex.json"},
                      GoldenCase{"golden_mutex.dat", "csv", "golden_mutex.csv"},
                      GoldenCase{"golden_mutex.dat", "table", "golden_mutex_ms.table", {"--ms"}},
                      GoldenCase{"small_v6.dat", "table", "small_v6.table"},
                      GoldenCase{"small_v7_zstd.dat", "table", "small_v7_zstd.table"}),
    [](const auto& info) {
      std::string n = info.param.golden;
      for (char& ch : n)
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return n;
    });

// Both trace.dat readers give byte-identical reports on every fixture: cstool's own
// (v6, v7 with pages in place, v7 with zstd chunks) and libtracecmd.
TEST(ReaderBackends, ReportsAreByteIdentical) {
  const std::string dir = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/";
  for (const char* fixture :
       {"golden_mutex.dat", "small_v6.dat", "small_v7_none.dat", "small_v7_zstd.dat"}) {
    for (const char* format : {"json", "table"}) {
      SCOPED_TRACE(std::string(fixture) + " " + format);
      CommandResult fast = RunCommand(
          {CSTOOL_BINARY, "report", dir + fixture, "--format", format, "--reader", "fast"});
      CommandResult lib = RunCommand(
          {CSTOOL_BINARY, "report", dir + fixture, "--format", format, "--reader", "libtracecmd"});
      ASSERT_EQ(fast.status, 0) << fast.err;
      ASSERT_EQ(lib.status, 0) << lib.err;
      EXPECT_GT(fast.out.size(), 1000u);
      EXPECT_EQ(fast.out, lib.out);
    }
  }
}

// `report -j N` decodes on a thread of its own and reads the CPUs' pages ahead on the
// others (with 2 jobs and compressed data, reads ahead only): every format of every
// fixture is byte-identical to -j 1, with fewer workers than CPUs, as many, and more.
TEST(ReaderJobs, ReportsAreByteIdentical) {
  const std::string dir = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/";
  for (const char* fixture :
       {"golden_mutex.dat", "small_v6.dat", "small_v7_none.dat", "small_v7_zstd.dat"}) {
    for (const char* format : {"json", "table", "csv"}) {
      SCOPED_TRACE(std::string(fixture) + " " + format);
      CommandResult one =
          RunCommand({CSTOOL_BINARY, "report", dir + fixture, "--format", format, "-j", "1"});
      ASSERT_EQ(one.status, 0) << one.err;
      EXPECT_GT(one.out.size(), 1000u);
      for (const char* jobs : {"2", "3", "8"}) {
        CommandResult many =
            RunCommand({CSTOOL_BINARY, "report", dir + fixture, "--format", format, "-j", jobs});
        ASSERT_EQ(many.status, 0) << many.err;
        EXPECT_EQ(many.out, one.out) << "-j " << jobs;
      }
      // libtracecmd reads on the decoding thread too.
      CommandResult lib = RunCommand({CSTOOL_BINARY, "report", dir + fixture, "--format", format,
                                      "--reader", "libtracecmd", "-j", "2"});
      ASSERT_EQ(lib.status, 0) << lib.err;
      EXPECT_EQ(lib.out, one.out) << "--reader libtracecmd -j 2";
    }
  }
}

}  // namespace
}  // namespace cstool::testing
