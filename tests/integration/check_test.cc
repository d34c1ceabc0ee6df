// `cstool report --check` end to end: a multi-threaded workload agrees with the kernel,
// the file stays readable by trace-cmd, and corrupting the recorded kernel counters makes
// the check fail with exit status 1.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/kernel_agreement.h"
#include "tests/support/patch_recording_info.h"
#include "tests/support/run_command.h"

namespace cstool::testing {
namespace {

class CheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why = TracefsUnavailableReason();
    if (!why.empty()) GTEST_SKIP() << "skipping tracefs test: " << why;
    file_ = "/tmp/cstool_check_" + std::to_string(getpid()) + ".dat";
    CommandResult rec =
        RunCommand({CSTOOL_BINARY, "record", "-o", file_, "--",
                    std::string(CSTOOL_WORKLOAD_DIR) + "/cstool_workload", "mutex", "4", "300"});
    ASSERT_EQ(rec.status, 0) << rec.err;
    record_err_ = rec.err;
  }
  void TearDown() override {
    if (!file_.empty()) std::remove(file_.c_str());
  }

  std::string file_;
  std::string record_err_;
};

TEST_F(CheckTest, MultiThreadedWorkloadAgreesInTheTable) {
  CommandResult rep = RunCommand({CSTOOL_BINARY, "report", file_, "--check"});
  EXPECT_NE(rep.out.find("KERNEL CHECK"), std::string::npos) << rep.out;
  // Every thread checked, switch counts exact (times: see kernel_agreement.h), and the
  // exit status is the verdict's.
  EXPECT_NE(rep.out.find("threads agree with the kernel, 5 of 5 checked"), std::string::npos)
      << rep.out;
  EXPECT_EQ(rep.out.find("DISAGREE (switches"), std::string::npos) << rep.out;
  const bool pass = rep.out.find("kernel check: PASS: 5/5") != std::string::npos;
  EXPECT_EQ(rep.status, pass ? 0 : 1) << rep.out << rep.err;
  EXPECT_NE(record_err_.find("/5 threads"), std::string::npos) << record_err_;
  CommandResult json = RunCommand({CSTOOL_BINARY, "report", file_, "--check", "--format", "json"});
  ExpectSwitchesExactAndTimesWithinResidue(nlohmann::json::parse(json.out).at("check"));
}

TEST_F(CheckTest, KernelObjectsInJsonWithoutCheck) {
  CommandResult rep = RunCommand({CSTOOL_BINARY, "report", file_, "--format", "json"});
  ASSERT_EQ(rep.status, 0) << rep.err;
  auto j = nlohmann::json::parse(rep.out);
  EXPECT_FALSE(j.contains("check"));
  ASSERT_EQ(j.at("threads").size(), 5u);
  for (const auto& t : j.at("threads")) {
    ASSERT_TRUE(t.contains("kernel")) << t.dump();
    const auto& k = t.at("kernel");
    for (const char* key :
         {"nvcsw", "nivcsw", "run_delay_ns", "exec_runtime_ns", "source", "taken_at_ns"})
      EXPECT_TRUE(k.contains(key)) << key;
    EXPECT_EQ(k.at("source"), "taskstats_exit");  // every thread exited during the trace
  }
}

TEST_F(CheckTest, TraceCmdStillReadsTheFile) {
  const char* tc = "/usr/bin/trace-cmd";
  if (access(tc, X_OK) != 0) GTEST_SKIP() << "trace-cmd not installed";
  CommandResult r = RunCommand({tc, "report", "-i", file_});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("sched_switch"), std::string::npos);
}

TEST_F(CheckTest, CorruptedKernelCountersFailTheCheck) {
  std::string err = PatchRecordingInfo(file_, [](nlohmann::json& info) {
    for (auto& rec : info.at("kernel_counters").at("records"))
      if (rec.at("nvcsw").get<uint64_t>() > 0) rec["nvcsw"] = 0;  // shorter: fits in place
  });
  ASSERT_EQ(err, "");
  CommandResult rep = RunCommand({CSTOOL_BINARY, "report", file_, "--check"});
  EXPECT_EQ(rep.status, 1) << rep.out << rep.err;
  EXPECT_NE(rep.out.find("kernel check: FAIL"), std::string::npos) << rep.out;
  EXPECT_NE(rep.out.find("DISAGREE"), std::string::npos) << rep.out;

  CommandResult json = RunCommand({CSTOOL_BINARY, "report", file_, "--check", "--format", "json"});
  EXPECT_EQ(json.status, 1);
  auto j = nlohmann::json::parse(json.out);
  EXPECT_FALSE(j.at("check").at("passed").get<bool>());
  // Without --check the report itself still succeeds.
  EXPECT_EQ(RunCommand({CSTOOL_BINARY, "report", file_}).status, 0);
}

}  // namespace
}  // namespace cstool::testing
