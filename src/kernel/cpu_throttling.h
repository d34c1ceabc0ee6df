// CPU bandwidth throttling, from the cgroups' own counters: a cgroup with a CPU quota
// (cgroup v1 cpu.cfs_quota_us, v2 cpu.max) that used it up in a period has its threads
// held off every CPU until the next period. They stay runnable, so the kernel counts the
// time as run delay and the trace shows it as a wait for a CPU, behind whatever ran
// there; no event marks it. The cgroup's cpu.stat counts it, read when tracing starts
// and stops.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "model/recording_info.h"

namespace cstool {

// Where a hierarchy that has the cpu controller is mounted: cgroup v1 with "cpu" among
// its options, or cgroup v2.
struct CpuCgroupMount {
  int version = 2;
  std::string mount_point;  // "/sys/fs/cgroup/cpu,cpuacct"
  std::string root;         // the cgroup the mount shows ("/" but in a container)
};

// Pure parser of /proc/self/mountinfo text.
std::vector<CpuCgroupMount> ParseCpuCgroupMounts(std::string_view mountinfo);

// One cgroup's quota and counters at one instant.
struct CpuLimitReading {
  int version = 2;
  std::string cgroup;  // its path in the hierarchy, "/exp/web"
  int64_t quota_ns = 0;
  int64_t period_ns = 0;
  uint64_t periods = 0;    // nr_periods: periods in which it ran
  uint64_t throttled = 0;  // nr_throttled: periods that ended its threads' run
  int64_t throttled_ns = 0;
  int64_t read_at_ns = 0;  // CLOCK_MONOTONIC
};

// v1: cpu.cfs_quota_us and cpu.cfs_period_us; v2: cpu.max ("QUOTA PERIOD", in us). False
// for no quota ("-1", "max").
bool ParseCpuQuotaV1(std::string_view quota_us, std::string_view period_us, int64_t* quota_ns,
                     int64_t* period_ns);
bool ParseCpuMax(std::string_view cpu_max, int64_t* quota_ns, int64_t* period_ns);
// cpu.stat: nr_periods, nr_throttled, and throttled_time (v1, ns) or throttled_usec (v2).
bool ParseCpuStat(std::string_view cpu_stat, int version, CpuLimitReading* reading);

// The cgroup of the cpu controller in /proc/PID/cgroup text: the v1 line whose
// controllers include cpu, else the v2 line ("0::/path"). Empty `cgroup` when none.
struct CpuCgroupOfTask {
  int version = 2;
  std::string cgroup;
};
CpuCgroupOfTask ParseCpuCgroupOf(std::string_view proc_pid_cgroup);
CpuCgroupOfTask ReadCpuCgroupOf(int32_t pid);

// Every cgroup with a quota under `mounts`, read at `now_ns`. A cgroup removed meanwhile
// is left out, with its subtree, and nothing else.
std::vector<CpuLimitReading> ReadCpuLimits(const std::vector<CpuCgroupMount>& mounts,
                                           int64_t now_ns);
// One cgroup's, when it has a quota.
std::optional<CpuLimitReading> ReadCpuLimitOf(const std::vector<CpuCgroupMount>& mounts,
                                              int version, const std::string& cgroup,
                                              int64_t now_ns);
// The hierarchies with the cpu controller (a v2 one only where it is enabled).
std::vector<CpuCgroupMount> ReadCpuCgroupMounts();

// The cgroups throttled between two readings (a cgroup in only one is left out), with the
// processes seen in each or in a cgroup below it (`seen`: "VERSION:PATH" -> pids); those
// with none only when `keep_unseen`. `start_ns`: when tracing went live (a start reading
// after it is of a cgroup first seen then).
std::vector<CgroupThrottling> PairThrottling(const std::vector<CpuLimitReading>& start,
                                             const std::vector<CpuLimitReading>& end,
                                             const std::map<std::string, std::set<int32_t>>& seen,
                                             int64_t start_ns, bool keep_unseen);

// The key of `seen` for a task's cgroup.
std::string CgroupKey(int version, std::string_view cgroup);

}  // namespace cstool
