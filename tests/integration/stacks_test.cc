// `cstool record --stacks` for real, on this kernel: the blocking sites of sleeps with
// known kernel paths (a pipe, a contended mutex, fsync on a disk filesystem), and the
// same report from both trace readers.
#include <gtest/gtest.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/errors.h"
#include "tests/support/files.h"
#include "tests/support/recording_fixture.h"
#include "tests/support/run_command.h"
#include "tracefs/tracefs_session.h"

namespace cstool::testing {
namespace {

namespace fs = std::filesystem;
const std::string kCstool = CSTOOL_BINARY;
const std::string kWorkload = std::string(CSTOOL_WORKLOAD_DIR) + "/cstool_workload";
constexpr long kTmpfsMagic = 0x01021994;

class StacksTest : public testing::RecordingFixture {
 protected:
  // /var/tmp: a disk's filesystem on every usual setup (fsync must reach a journal).
  StacksTest() : RecordingFixture("cstool-stacks-test", "/var/tmp") {}

  // Records `workload` with --stacks and returns the JSON report.
  nlohmann::json RecordAndReport(const std::vector<std::string>& workload,
                                 const std::string& reader = "") {
    const std::string out = (dir_ / "stacks.dat").string();
    std::vector<std::string> argv = {kCstool, "record", "--stacks", "-o", out, "--"};
    argv.insert(argv.end(), workload.begin(), workload.end());
    CommandResult r = RunCommand(argv);
    EXPECT_EQ(r.status, 0) << r.err;
    return Report(out, reader);
  }
  static nlohmann::json Report(const std::string& file, const std::string& reader = "") {
    std::vector<std::string> argv = {kCstool, "report", file, "--format", "json"};
    if (!reader.empty()) argv.insert(argv.end(), {"--reader", reader});
    CommandResult r = RunCommand(argv);
    EXPECT_EQ(r.status, 0) << r.err;
    return nlohmann::json::parse(r.out);
  }

  // The voluntary switches of the workload's threads with each label, and the labels.
  struct Sites {
    std::map<std::string, uint64_t> count;
    uint64_t total = 0;
    std::string Labels() const {
      std::string s;
      for (auto& [l, n] : count) s += l + "=" + std::to_string(n) + " ";
      return s;
    }
  };
  static Sites SitesOf(const nlohmann::json& report) {
    Sites s;
    for (const auto& t : report.at("threads")) {
      if (t.at("comm") != "cstool_workload") continue;
      for (const auto& site : t.at("blocking_sites")) {
        s.count[site.at("label")] += site.at("count").get<uint64_t>();
        s.total += site.at("count").get<uint64_t>();
        // Full chains, symbolized, with the site among the frames.
        bool site_in_chain = false;
        for (const auto& st : site.at("stacks"))
          for (const auto& f : st.at("frames"))
            site_in_chain |= f.get<std::string>().starts_with(site.at("site").get<std::string>());
        EXPECT_TRUE(site_in_chain || site.at("site") == "?") << site.dump();
      }
    }
    return s;
  }
};

TEST_F(StacksTest, PipePingPongBlocksInPipeRead) {
  nlohmann::json rep = RecordAndReport({kWorkload, "pingpong", "2000"});
  Sites s = SitesOf(rep);
  // Each thread reads its pipe 2000 times; nearly every read blocks (the peer has not
  // written yet), inside the pipe's read function (anon_pipe_read since 6.16).
  uint64_t pipe_reads = 0;
  for (auto& [label, n] : s.count)
    if (label == "sleep:read @ anon_pipe_read" || label == "sleep:read @ pipe_read")
      pipe_reads += n;
  EXPECT_GE(pipe_reads, 2000u) << s.Labels();
  EXPECT_GE(pipe_reads * 10, s.total * 9) << s.Labels();
}

TEST_F(StacksTest, ContendedMutexBlocksInFutex) {
  nlohmann::json rep = RecordAndReport({kWorkload, "mutex", "4", "300"});
  Sites s = SitesOf(rep);
  uint64_t futex = 0;
  for (auto& [label, n] : s.count)
    if (label.starts_with("sleep:futex @ futex_")) futex += n;
  EXPECT_GT(futex, 0u) << s.Labels();
  // The workload's sleeps are all lock waits and joins: futex sites only.
  EXPECT_GE(futex * 10, s.total * 9) << s.Labels();
}

TEST_F(StacksTest, FsyncBlocksInTheFilesystem) {
  struct statfs st {};
  ASSERT_EQ(::statfs(dir_.c_str(), &st), 0);
  if (st.f_type == kTmpfsMagic) GTEST_SKIP() << dir_ << " is tmpfs: fsync does not block";
  nlohmann::json rep = RecordAndReport({kWorkload, "fsync", dir_.string(), "20"});
  Sites s = SitesOf(rep);
  uint64_t fs_sites = 0;
  for (auto& [label, n] : s.count) {
    if (!label.starts_with("sleep:fsync @ ")) continue;
    const std::string site = label.substr(14);
    // ext4 and its journal (jbd2), xfs, btrfs, or the block layer's flush they wait for.
    for (const char* prefix :
         {"ext4_", "jbd2_", "xfs_", "btrfs_", "f2fs_", "blkdev_", "submit_bio"})
      if (site.starts_with(prefix)) {
        fs_sites += n;
        break;
      }
  }
  EXPECT_GT(fs_sites, 0u) << s.Labels();
}

// The fast reader and libtracecmd read the same stacks and the same kallsyms.
TEST_F(StacksTest, BothReadersGiveTheSameSites) {
  const std::string out = (dir_ / "stacks.dat").string();
  for (const char* compress : {"--compress=zstd", "--compress=none"}) {
    CommandResult r = RunCommand(
        {kCstool, "record", "--stacks", compress, "-o", out, "--", kWorkload, "pingpong", "500"});
    ASSERT_EQ(r.status, 0) << r.err;
    nlohmann::json fast = Report(out, "fast");
    nlohmann::json lib = Report(out, "libtracecmd");
    ASSERT_FALSE(SitesOf(fast).count.empty()) << compress;
    for (auto* j : {&fast, &lib}) j->at("trace").erase("reader");
    EXPECT_EQ(fast.at("threads"), lib.at("threads")) << compress;
  }
}

// Without --stacks nothing of it is in the report.
TEST_F(StacksTest, OffByDefault) {
  const std::string out = (dir_ / "plain.dat").string();
  CommandResult r = RunCommand({kCstool, "record", "-o", out, "--", kWorkload, "pingpong", "100"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const auto& t : Report(out).at("threads")) EXPECT_FALSE(t.contains("blocking_sites"));
}

}  // namespace
}  // namespace cstool::testing
