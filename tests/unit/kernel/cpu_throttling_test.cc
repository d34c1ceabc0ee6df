// The cgroups' CPU quotas and throttling counters: where the hierarchies are, what a
// cgroup's files say, and what was throttled between two readings.
#include "kernel/cpu_throttling.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace cstool {
namespace {

TEST(CpuThrottling, MountsWithTheCpuControllerAndCgroupV2) {
  // This project's VM (v1 controllers beside a v2 hierarchy without them), and a
  // container's v2 mount of its own cgroup.
  const char* mountinfo =
      "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
      "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
      "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
      "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime shared:7 - cgroup cgroup rw,cpuset\n"
      "35 31 0:32 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
      "41 31 0:38 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
      "52 40 0:40 /kubepods/pod1 /sys/fs/cgroup ro - cgroup2 cgroup rw\n";
  const std::vector<CpuCgroupMount> m = ParseCpuCgroupMounts(mountinfo);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0].version, 1);
  EXPECT_EQ(m[0].mount_point, "/sys/fs/cgroup/cpu");
  EXPECT_EQ(m[1].mount_point, "/sys/fs/cgroup/cpu,cpuacct");  // not cpuacct, not cpuset
  EXPECT_EQ(m[2].version, 2);
  EXPECT_EQ(m[2].mount_point, "/sys/fs/cgroup/unified");
  EXPECT_EQ(m[2].root, "/");
  EXPECT_EQ(m[3].root, "/kubepods/pod1");
}

TEST(CpuThrottling, QuotasOfBothVersions) {
  int64_t quota = 0;
  int64_t period = 0;
  ASSERT_TRUE(ParseCpuQuotaV1("20000\n", "100000\n", &quota, &period));
  EXPECT_EQ(quota, 20'000'000);
  EXPECT_EQ(period, 100'000'000);
  EXPECT_FALSE(ParseCpuQuotaV1("-1\n", "100000\n", &quota, &period));  // no quota
  ASSERT_TRUE(ParseCpuMax("50000 200000\n", &quota, &period));
  EXPECT_EQ(quota, 50'000'000);
  EXPECT_EQ(period, 200'000'000);
  EXPECT_FALSE(ParseCpuMax("max 100000\n", &quota, &period));
  EXPECT_FALSE(ParseCpuMax("", &quota, &period));
}

TEST(CpuThrottling, CpuStatOfBothVersions) {
  CpuLimitReading v1;
  ASSERT_TRUE(
      ParseCpuStat("nr_periods 19\nnr_throttled 15\nthrottled_time 1192184236\n"
                   "nr_bursts 0\nburst_time 0\n",
                   1, &v1));
  EXPECT_EQ(v1.periods, 19u);
  EXPECT_EQ(v1.throttled, 15u);
  EXPECT_EQ(v1.throttled_ns, 1192184236);
  CpuLimitReading v2;
  ASSERT_TRUE(
      ParseCpuStat("usage_usec 8\nuser_usec 4\nsystem_usec 4\nnr_periods 7\n"
                   "nr_throttled 3\nthrottled_usec 250\nnr_bursts 0\nburst_usec 0\n",
                   2, &v2));
  EXPECT_EQ(v2.throttled, 3u);
  EXPECT_EQ(v2.throttled_ns, 250'000);
  // v2 without the cpu controller has only the usage lines.
  CpuLimitReading none;
  EXPECT_FALSE(ParseCpuStat("usage_usec 8\nuser_usec 4\nsystem_usec 4\n", 2, &none));
  EXPECT_FALSE(ParseCpuStat("nr_periods 7\nnr_throttled 3\nthrottled_usec 250\n", 1, &none));
}

TEST(CpuThrottling, ATasksCpuCgroup) {
  const CpuCgroupOfTask v1 = ParseCpuCgroupOf(
      "9:name=systemd:/\n4:memory:/\n2:cpu,cpuacct:/exp/web\n1:cpuset:/\n0::/user.slice\n");
  EXPECT_EQ(v1.version, 1);
  EXPECT_EQ(v1.cgroup, "/exp/web");
  const CpuCgroupOfTask v2 = ParseCpuCgroupOf("0::/system.slice/nginx.service\n");
  EXPECT_EQ(v2.version, 2);
  EXPECT_EQ(v2.cgroup, "/system.slice/nginx.service");
  EXPECT_EQ(ParseCpuCgroupOf("2:cpuacct:/x\n").cgroup, "");  // cpuacct is not cpu
}

// Throttled between the readings: the difference, with the processes seen in the cgroup
// or below it (a quota holds its subtree), not in a sibling whose name it begins. A
// cgroup first read after tracing began counts from then; one no recorded process was
// seen in is some other workload's, kept only when asked (record -a).
TEST(CpuThrottling, PairsTheReadingsOfEachThrottledCgroup) {
  constexpr int64_t kStart = 1'000'000'000;
  const std::vector<CpuLimitReading> start = {
      {1, "/a", 20'000'000, 100'000'000, 10, 4, 300'000'000, kStart - 5},
      {1, "/idle", 20'000'000, 100'000'000, 5, 0, 0, kStart - 5},
      {2, "/a", 10'000'000, 100'000'000, 1, 1, 90'000'000, kStart - 5},
      {1, "/other", 20'000'000, 100'000'000, 1, 1, 1, kStart - 5},
      {1, "/late", 20'000'000, 100'000'000, 0, 0, 0, kStart + 500'000'000},
  };
  const std::vector<CpuLimitReading> end = {
      {1, "/a", 20'000'000, 100'000'000, 19, 12, 1'000'000'000, 0},
      {1, "/idle", 20'000'000, 100'000'000, 9, 0, 0, 0},   // ran, never throttled
      {1, "/new", 20'000'000, 100'000'000, 9, 9, 900, 0},  // no start reading
      {2, "/a", 10'000'000, 100'000'000, 1, 1, 90'000'000, 0},
      {1, "/other", 20'000'000, 100'000'000, 3, 3, 5, 0},
      {1, "/late", 20'000'000, 100'000'000, 4, 2, 80'000'000, 0},
  };
  const std::map<std::string, std::set<int32_t>> seen = {
      {CgroupKey(1, "/a"), {100}}, {CgroupKey(1, "/a/b"), {101}},  {CgroupKey(1, "/ab"), {102}},
      {CgroupKey(2, "/a"), {103}}, {CgroupKey(1, "/late"), {104}},
  };
  const std::vector<CgroupThrottling> t = PairThrottling(start, end, seen, kStart, false);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].version, 1);
  EXPECT_EQ(t[0].cgroup, "/a");
  EXPECT_EQ(t[0].periods, 9u);
  EXPECT_EQ(t[0].throttled, 8u);
  EXPECT_EQ(t[0].throttled_ns, 700'000'000);
  EXPECT_EQ(t[0].quota_ns, 20'000'000);
  EXPECT_EQ(t[0].since_ns, 0);
  EXPECT_EQ(t[0].pids, (std::vector<int32_t>{100, 101}));
  EXPECT_EQ(t[1].cgroup, "/late");
  EXPECT_EQ(t[1].since_ns, 500'000'000);
  EXPECT_EQ(t[1].throttled_ns, 80'000'000);
  const std::vector<CgroupThrottling> all = PairThrottling(start, end, seen, kStart, true);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[1].cgroup, "/other");
  EXPECT_TRUE(all[1].pids.empty());
}

// The walk of a hierarchy (here a directory shaped like a v1 cpu mount): every cgroup with
// a quota, nested ones too, by its path; one cgroup's reading by that path, through a
// mount whose root is not the hierarchy's.
TEST(CpuThrottling, ReadsEveryCgroupWithAQuota) {
  namespace fs = std::filesystem;
  const fs::path top = fs::temp_directory_path() / fmt::format("cstool-cgroups-{}", ::getpid());
  fs::remove_all(top);
  const auto make = [&](const fs::path& dir, const char* quota, const char* throttled_ns) {
    fs::create_directories(dir);
    std::ofstream(dir / "cpu.cfs_quota_us") << quota << "\n";
    std::ofstream(dir / "cpu.cfs_period_us") << "100000\n";
    std::ofstream(dir / "cpu.stat")
        << "nr_periods 5\nnr_throttled 2\nthrottled_time " << throttled_ns << "\n";
  };
  make(top, "-1", "0");
  make(top / "web", "50000", "7");
  make(top / "web" / "worker", "10000", "9");
  make(top / "batch", "-1", "0");
  fs::create_directories(top / "empty");  // no files at all: skipped
  const std::vector<CpuCgroupMount> mounts = {{1, top.string(), "/"}};
  std::vector<CpuLimitReading> r = ReadCpuLimits(mounts, 42);
  std::sort(r.begin(), r.end(), [](auto& a, auto& b) { return a.cgroup < b.cgroup; });
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].cgroup, "/web");
  EXPECT_EQ(r[0].quota_ns, 50'000'000);
  EXPECT_EQ(r[0].throttled_ns, 7);
  EXPECT_EQ(r[0].read_at_ns, 42);
  EXPECT_EQ(r[1].cgroup, "/web/worker");
  const std::vector<CpuCgroupMount> container = {{1, (top / "web").string(), "/web"}};
  const std::optional<CpuLimitReading> worker = ReadCpuLimitOf(container, 1, "/web/worker", 7);
  ASSERT_TRUE(worker.has_value());
  EXPECT_EQ(worker->cgroup, "/web/worker");
  EXPECT_EQ(worker->throttled_ns, 9);
  EXPECT_FALSE(ReadCpuLimitOf(container, 1, "/batch", 7).has_value());  // not under its root
  EXPECT_FALSE(ReadCpuLimitOf(container, 2, "/web/worker", 7).has_value());
  fs::remove_all(top);
}

}  // namespace
}  // namespace cstool
