// A command tree (a shell that forks and execs 30 short children, each exec'd process a
// grandchild of cstool) checked against the kernel: every process carries the kernel's
// own counters (taskstats exit records follow the whole tree), every switch count is
// exact, and times agree within the residue named in tests/support/kernel_agreement.h.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/kernel_agreement.h"
#include "tests/support/run_command.h"

namespace cstool::testing {
namespace {

TEST(ProcessTree, ForkExecStormIsCheckedThreadByThread) {
  std::string why = TracefsUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << "skipping tracefs test: " << why;
  const std::string file = "/tmp/cstool_tree_" + std::to_string(getpid()) + ".dat";
  CommandResult rec = RunCommand({CSTOOL_BINARY, "record", "-o", file, "--", "/bin/sh", "-c",
                                  "for i in $(seq 30); do /bin/true; done"});
  ASSERT_EQ(rec.status, 0) << rec.err;
  CommandResult rep = RunCommand({CSTOOL_BINARY, "report", file, "--check", "--format", "json"});
  std::remove(file.c_str());
  ASSERT_LE(rep.status, 1) << rep.err;
  const nlohmann::json report = nlohmann::json::parse(rep.out);
  const nlohmann::json& check = report.at("check");
  // The shell, `seq` and 30 children: nothing is left without the kernel's counters.
  EXPECT_GE(check.at("compared").get<uint32_t>(), 32u) << check.dump(2);
  EXPECT_EQ(check.at("without_counters").get<uint32_t>(), 0u) << check.dump(2);
  EXPECT_EQ(check.at("partial").get<uint32_t>(), 0u) << check.dump(2);
  EXPECT_TRUE(check.at("covered").get<bool>());
  ExpectSwitchesExactAndTimesWithinResidue(check);
  EXPECT_EQ(rep.status, check.at("passed").get<bool>() ? 0 : 1);
  uint32_t trues = 0;
  for (const auto& t : report.at("threads")) trues += t.at("comm") == "true";
  EXPECT_EQ(trues, 30u);
}

}  // namespace
}  // namespace cstool::testing
