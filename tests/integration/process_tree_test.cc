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
  ExpectCheckPasses(report);
  EXPECT_EQ(rep.status, check.at("passed").get<bool>() ? 0 : 1);
  uint32_t trues = 0;
  for (const auto& t : report.at("threads")) trues += t.at("comm") == "true";
  EXPECT_EQ(trues, 30u);

  // The command tree: the shell is the one root, every other process hangs below it
  // (the traced forks), and the root's totals are the kernel's own for the whole command
  // (wait4's rusage covers what the shell waited for): involuntary switches exactly; of
  // the voluntary ones, a process's final switch is missing from the rusage when its
  // parent reaped it before the dying task's last schedule() counted it (the parent is
  // woken first, and may run on the other CPU meanwhile), at most one per process.
  const nlohmann::json& child = report.at("trace").at("child");
  const int shell = child.at("pid").get<int>();
  EXPECT_EQ(report.at("tree_roots"), nlohmann::json::array({shell}));
  const nlohmann::json* root = nullptr;
  for (const auto& p : report.at("processes")) {
    if (p.at("pid") == shell) {
      root = &p;
      // The recorder, which forked it: a process outside the report.
      EXPECT_TRUE(p.at("ppid").is_number()) << p.dump();
      for (const auto& q : report.at("processes")) EXPECT_NE(q.at("pid"), p.at("ppid"));
    } else {
      EXPECT_FALSE(p.at("ppid").is_null()) << p.dump();
    }
  }
  ASSERT_NE(root, nullptr);
  const nlohmann::json& tree = root->at("tree");
  EXPECT_EQ(tree.at("processes").get<size_t>(), report.at("processes").size());
  EXPECT_EQ(tree.at("threads").get<size_t>(), report.at("threads").size());
  const uint64_t traced_vcx = tree.at("switches").at("voluntary").get<uint64_t>();
  const uint64_t kernel_vcx =
      child.at("exit_nvcsw").get<uint64_t>() - child.at("baseline_nvcsw").get<uint64_t>();
  EXPECT_GE(traced_vcx, kernel_vcx);
  EXPECT_LE(traced_vcx - kernel_vcx, tree.at("processes").get<uint64_t>());
  EXPECT_EQ(tree.at("switches").at("involuntary").get<uint64_t>(),
            child.at("exit_nivcsw").get<uint64_t>() - child.at("baseline_nivcsw").get<uint64_t>());
}

}  // namespace
}  // namespace cstool::testing
