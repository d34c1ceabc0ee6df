#include "tracefs/instance_owner.h"

#include <fmt/core.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace cstool {
namespace {

int64_t NsOf(const timespec& t) { return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec; }

int64_t ClockNs(clockid_t clock) {
  timespec t{};
  ::clock_gettime(clock, &t);
  return NsOf(t);
}

int64_t TickNs() {
  const long hz = ::sysconf(_SC_CLK_TCK);
  return 1'000'000'000 / (hz > 0 ? hz : 100);
}

// The fields of /proc/PID/stat after the command name, which may hold spaces and
// parentheses: from its last ')' on (" S 1 ..."); nullopt when it cannot be read.
std::optional<std::string> StatAfterName(int pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  return stat.substr(paren + 1);
}

}  // namespace

bool ProcessAlive(int pid) {
  if (::kill(pid, 0) != 0 && errno != EPERM) return false;
  const std::optional<std::string> fields = StatAfterName(pid);
  return !fields || fields->size() < 2 || (*fields)[1] != 'Z';
}

std::optional<int64_t> ProcessStartBootNs(int pid) {
  const std::optional<std::string> after_name = StatAfterName(pid);
  if (!after_name) return std::nullopt;
  // The start time is field 22, the 20th after the name.
  std::istringstream fields(*after_name);
  std::string field;
  for (int i = 0; i < 20; ++i)
    if (!(fields >> field)) return std::nullopt;
  const int64_t ticks = std::strtoll(field.c_str(), nullptr, 10);
  if (ticks <= 0) return std::nullopt;
  return ticks * TickNs();
}

std::optional<int64_t> ChangedAtWallNs(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return NsOf(st.st_ctim);
}

std::optional<int64_t> ChangedAtBootNs(const std::filesystem::path& path) {
  const std::optional<int64_t> wall = ChangedAtWallNs(path);
  if (!wall) return std::nullopt;
  // The stamp is wall-clock time; the clocks' offset now turns it into boot time.
  return *wall - (ClockNs(CLOCK_REALTIME) - ClockNs(CLOCK_BOOTTIME));
}

std::optional<bool> FilesUnderOpen(int pid, const std::filesystem::path& dir) {
  const std::string prefix = dir.string() + "/";
  std::error_code ec;
  // The process may exit while this runs: every step takes an error code, never throws.
  std::filesystem::directory_iterator fd(fmt::format("/proc/{}/fd", pid), ec), end;
  // Gone, it holds nothing; unreadable (another user's, to a cstool that is not root), it
  // may hold anything.
  if (ec)
    return ec == std::errc::no_such_file_or_directory || ec == std::errc::no_such_process
               ? std::optional(false)
               : std::nullopt;
  for (; !ec && fd != end; fd.increment(ec)) {
    std::error_code link_ec;
    if (std::filesystem::read_symlink(fd->path(), link_ec).string().rfind(prefix, 0) == 0)
      return true;
  }
  return false;
}

bool InstanceOwnerRuns(const std::filesystem::path& dir, int pid) {
  if (!ProcessAlive(pid)) return false;
  const std::optional<int64_t> started = ProcessStartBootNs(pid);
  const std::optional<int64_t> made = ChangedAtBootNs(dir);
  if (!started || !made) return true;
  // An owner started before it made the instance. The slack: the directory's time stamp
  // comes from the kernel's coarse clock, up to a jiffy behind (a clock tick of /proc is
  // at least one). A process started later has a dead owner's pid, unless it holds the
  // instance open, as every live session does (a wall clock set forward since the
  // instance was made makes it look older).
  if (*started <= *made + TickNs()) return true;
  return FilesUnderOpen(pid, dir).value_or(true);
}

}  // namespace cstool
