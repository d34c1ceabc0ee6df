// report -j N on a real recording whose two CPUs are equally busy, where the CPUs are
// decoded in shares on threads of their own (PlanJobs): every format byte-identical to
// -j 1, for cstool's default zstd chunks and for pages in place.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/cpu_list.h"
#include "format/trace_file_reader.h"
#include "pipeline/job_plan.h"
#include "tests/support/recording_fixture.h"
#include "tests/support/run_command.h"

namespace cstool::testing {
namespace {

class ReportJobsTest : public RecordingFixture {
 protected:
  ReportJobsTest() : RecordingFixture("cstool_report_jobs") {}
  void SetUp() override {
    RecordingFixture::SetUp();
    if (IsSkipped()) return;
    if (UsableCpuCount() < 2) GTEST_SKIP() << "needs two CPUs to keep both busy";
    file_ = (dir_ / "jobs.dat").string();
  }
  std::string file_;
};

TEST_F(ReportJobsTest, DecodingSharesGiveTheReportOfOneThread) {
  const std::string workload = std::string(CSTOOL_WORKLOAD_DIR) + "/cstool_workload";
  // A ping-pong pinned to each CPU: their data are about equal.
  const std::string both =
      "'" + workload + "' pingpong 3000 0 & '" + workload + "' pingpong 3000 1; wait";
  for (const char* compress : {"zstd", "none"}) {
    SCOPED_TRACE(compress);
    CommandResult rec = RunCommand({CSTOOL_BINARY, "record", "-o", file_,
                                    std::string("--compress=") + compress, "--", "sh", "-c", both});
    ASSERT_EQ(rec.status, 0) << rec.err;
    {
      auto reader = OpenTraceFile(file_);
      // The shares are what this test is about: make sure the plan takes them.
      EXPECT_EQ(PlanJobs(3, *reader).decoding_shares, 2);
      EXPECT_EQ(PlanJobs(2, *reader).decoding_shares, std::string(compress) == "none" ? 1 : 2);
    }
    for (const char* format : {"json", "table", "csv"}) {
      SCOPED_TRACE(format);
      CommandResult one =
          RunCommand({CSTOOL_BINARY, "report", file_, "--format", format, "-j", "1"});
      ASSERT_EQ(one.status, 0) << one.err;
      EXPECT_GT(one.out.size(), 1000u);
      for (const char* jobs : {"2", "3", "8"}) {
        CommandResult many =
            RunCommand({CSTOOL_BINARY, "report", file_, "--format", format, "-j", jobs});
        ASSERT_EQ(many.status, 0) << many.err;
        EXPECT_EQ(many.out, one.out) << "-j " << jobs;
        EXPECT_EQ(many.err, one.err) << "-j " << jobs;
      }
    }
  }
}

}  // namespace
}  // namespace cstool::testing
