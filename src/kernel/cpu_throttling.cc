#include "kernel/cpu_throttling.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <system_error>

#include "base/read_file.h"
#include "base/split_list.h"
#include "base/text_fields.h"

namespace cstool {
namespace {

constexpr int64_t kNsPerUs = 1000;

// Whether `list` (of words between `separator`s) has `word`.
bool HasWord(std::string_view list, std::string_view word, char separator = ',') {
  for (std::string_view w : SplitList(list, separator))
    if (w == word) return true;
  return false;
}

// The cgroup at `dir`, `rel` below its mount's root.
std::optional<CpuLimitReading> ReadLimit(const CpuCgroupMount& m, const std::filesystem::path& dir,
                                         const std::string& rel, int64_t now_ns) {
  CpuLimitReading r;
  r.version = m.version;
  r.read_at_ns = now_ns;
  std::string root = m.root == "/" ? "" : m.root;
  r.cgroup = rel.empty() ? (root.empty() ? "/" : root) : root + "/" + rel;
  if (m.version == 1) {
    const auto quota = ReadWholeFile((dir / "cpu.cfs_quota_us").string());
    const auto period = ReadWholeFile((dir / "cpu.cfs_period_us").string());
    if (!quota || !period || !ParseCpuQuotaV1(*quota, *period, &r.quota_ns, &r.period_ns))
      return std::nullopt;
  } else {
    const auto max = ReadWholeFile((dir / "cpu.max").string());
    if (!max || !ParseCpuMax(*max, &r.quota_ns, &r.period_ns)) return std::nullopt;
  }
  const auto stat = ReadWholeFile((dir / "cpu.stat").string());
  if (!stat || !ParseCpuStat(*stat, m.version, &r)) return std::nullopt;
  return r;
}

// Each directory below `dir` in turn: one removed meanwhile ends its own walk (its
// iterator fails), not its parent's.
template <typename Keep>
void WalkBelow(const CpuCgroupMount& m, const std::filesystem::path& top,
               const std::filesystem::path& dir, int64_t now_ns, Keep& keep) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    std::error_code kind;
    if (it->is_symlink(kind) || !it->is_directory(kind)) continue;
    keep(ReadLimit(m, it->path(), it->path().lexically_relative(top).string(), now_ns));
    WalkBelow(m, top, it->path(), now_ns, keep);
  }
}

// The directory of `cgroup` (a path in the hierarchy) under mount `m`, when the mount
// shows it.
std::optional<std::string> RelativeTo(const CpuCgroupMount& m, const std::string& cgroup) {
  if (m.root == "/") return cgroup == "/" ? std::string() : cgroup.substr(1);
  if (cgroup == m.root) return std::string();
  if (cgroup.starts_with(m.root + "/")) return cgroup.substr(m.root.size() + 1);
  return std::nullopt;
}

}  // namespace

std::vector<CpuCgroupMount> ParseCpuCgroupMounts(std::string_view mountinfo) {
  // ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS
  std::vector<CpuCgroupMount> out;
  for (std::string_view line : SplitList(mountinfo, '\n')) {
    const size_t dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    std::string_view head = line.substr(0, dash);
    std::string_view tail = line.substr(dash + 3);
    NextToken(head);
    NextToken(head);
    NextToken(head);
    const std::string_view root = NextToken(head);
    const std::string_view mount_point = NextToken(head);
    const std::string_view fstype = NextToken(tail);
    NextToken(tail);
    const std::string_view options = NextToken(tail);
    if (fstype == "cgroup2")
      out.push_back({2, std::string(mount_point), std::string(root)});
    else if (fstype == "cgroup" && HasWord(options, "cpu"))
      out.push_back({1, std::string(mount_point), std::string(root)});
  }
  return out;
}

bool ParseCpuQuotaV1(std::string_view quota_us, std::string_view period_us, int64_t* quota_ns,
                     int64_t* period_ns) {
  int64_t quota = 0;
  int64_t period = 0;
  if (!ParseNumber(quota_us, &quota) || !ParseNumber(period_us, &period) || quota <= 0 ||
      period <= 0)
    return false;
  *quota_ns = quota * kNsPerUs;
  *period_ns = period * kNsPerUs;
  return true;
}

bool ParseCpuMax(std::string_view cpu_max, int64_t* quota_ns, int64_t* period_ns) {
  const std::string_view quota_text = NextToken(cpu_max);
  const std::string_view period_text = NextToken(cpu_max);
  return ParseCpuQuotaV1(quota_text, period_text, quota_ns, period_ns);
}

bool ParseCpuStat(std::string_view cpu_stat, int version, CpuLimitReading* reading) {
  bool periods = false;
  bool throttled = false;
  bool time = false;
  for (std::string_view line : SplitList(cpu_stat, '\n')) {
    const std::string_view key = NextToken(line);
    int64_t value = 0;
    if (!ParseNumber(line, &value) || value < 0) continue;
    if (key == "nr_periods") {
      reading->periods = static_cast<uint64_t>(value);
      periods = true;
    } else if (key == "nr_throttled") {
      reading->throttled = static_cast<uint64_t>(value);
      throttled = true;
    } else if (version == 1 && key == "throttled_time") {
      reading->throttled_ns = value;
      time = true;
    } else if (version == 2 && key == "throttled_usec") {
      reading->throttled_ns = value * kNsPerUs;
      time = true;
    }
  }
  return periods && throttled && time;
}

CpuCgroupOfTask ParseCpuCgroupOf(std::string_view proc_pid_cgroup) {
  // HIERARCHY_ID:CONTROLLERS:PATH; v2's is "0::PATH".
  CpuCgroupOfTask v2;
  for (std::string_view line : SplitList(proc_pid_cgroup, '\n')) {
    const size_t a = line.find(':');
    const size_t b = a == std::string_view::npos ? a : line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    const std::string_view controllers = line.substr(a + 1, b - a - 1);
    const std::string_view path = Trim(line.substr(b + 1));
    if (HasWord(controllers, "cpu")) return {1, std::string(path)};
    if (line.substr(0, a) == "0" && controllers.empty()) v2 = {2, std::string(path)};
  }
  return v2;
}

CpuCgroupOfTask ReadCpuCgroupOf(int32_t pid) {
  const auto text = ReadWholeFile(fmt::format("/proc/{}/cgroup", pid));
  return text ? ParseCpuCgroupOf(*text) : CpuCgroupOfTask{};
}

std::vector<CpuCgroupMount> ReadCpuCgroupMounts() {
  const auto text = ReadWholeFile("/proc/self/mountinfo");
  std::vector<CpuCgroupMount> out;
  if (!text) return out;
  for (CpuCgroupMount& m : ParseCpuCgroupMounts(*text)) {
    // A v2 hierarchy has quotas only where the cpu controller is enabled (a hybrid
    // system's has none: its cpu controller is v1's).
    if (m.version == 2) {
      const auto controllers = ReadWholeFile(m.mount_point + "/cgroup.controllers");
      if (!controllers || !HasWord(Trim(*controllers), "cpu", ' ')) continue;
    }
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<CpuLimitReading> ReadCpuLimits(const std::vector<CpuCgroupMount>& mounts,
                                           int64_t now_ns) {
  std::vector<CpuLimitReading> out;
  std::set<std::string> read;  // a hierarchy mounted twice is read once
  const auto keep = [&](std::optional<CpuLimitReading> r) {
    if (r && read.insert(CgroupKey(r->version, r->cgroup)).second) out.push_back(std::move(*r));
  };
  for (const CpuCgroupMount& m : mounts) {
    const std::filesystem::path top(m.mount_point);
    keep(ReadLimit(m, top, "", now_ns));
    WalkBelow(m, top, top, now_ns, keep);
  }
  return out;
}

std::optional<CpuLimitReading> ReadCpuLimitOf(const std::vector<CpuCgroupMount>& mounts,
                                              int version, const std::string& cgroup,
                                              int64_t now_ns) {
  for (const CpuCgroupMount& m : mounts) {
    if (m.version != version) continue;
    if (const std::optional<std::string> rel = RelativeTo(m, cgroup))
      return ReadLimit(m, std::filesystem::path(m.mount_point) / *rel, *rel, now_ns);
  }
  return std::nullopt;
}

std::string CgroupKey(int version, std::string_view cgroup) {
  return fmt::format("{}:{}", version, cgroup);
}

std::vector<CgroupThrottling> PairThrottling(const std::vector<CpuLimitReading>& start,
                                             const std::vector<CpuLimitReading>& end,
                                             const std::map<std::string, std::set<int32_t>>& seen,
                                             int64_t start_ns, bool keep_unseen) {
  std::vector<CgroupThrottling> out;
  for (const CpuLimitReading& e : end)
    for (const CpuLimitReading& s : start) {
      if (s.version != e.version || s.cgroup != e.cgroup || e.throttled <= s.throttled ||
          e.throttled_ns < s.throttled_ns || e.periods < s.periods)
        continue;
      // A quota holds the cgroups below it too.
      const std::string prefix = fmt::format("{}:", e.version);
      const std::string below = e.cgroup == "/" ? "/" : e.cgroup + "/";
      std::set<int32_t> pids;
      for (const auto& [key, in] : seen) {
        if (!key.starts_with(prefix)) continue;
        const std::string_view path = std::string_view(key).substr(prefix.size());
        if (path == e.cgroup || path.starts_with(below)) pids.insert(in.begin(), in.end());
      }
      if (pids.empty() && !keep_unseen) continue;
      out.push_back({.version = e.version,
                     .cgroup = e.cgroup,
                     .quota_ns = e.quota_ns,
                     .period_ns = e.period_ns,
                     .periods = e.periods - s.periods,
                     .throttled = e.throttled - s.throttled,
                     .throttled_ns = e.throttled_ns - s.throttled_ns,
                     .since_ns = std::max<int64_t>(s.read_at_ns - start_ns, 0),
                     .pids = {pids.begin(), pids.end()}});
    }
  return out;
}

}  // namespace cstool
