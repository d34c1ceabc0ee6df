#include "kernel/proc_seed.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>

#include "kernel/kernel_counters.h"  // MonotonicNowNs
#include "kernel/proc_task_counters.h"
#include "kernel/proc_threads.h"
#include "model/syscall_table.h"

namespace cstool {
namespace {

// Reads a small /proc file; nullopt if it cannot be opened or read (thread gone).
std::optional<std::string> ReadSmallFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

}  // namespace

int64_t ParseProcSyscall(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  if (text.empty() || text.starts_with("running")) return kSyscallUnknown;
  int64_t nr = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), nr);
  if (ec != std::errc{}) return kSyscallUnknown;
  (void)ptr;
  return nr < 0 ? kNotInSyscall : nr;
}

ProcSeed ReadProcSeed(int32_t pid) { return ReadProcSeed(std::vector<int32_t>{pid}); }

ProcSeed ReadProcSeed(const std::vector<int32_t>& pids) {
  ProcSeed seed;
  std::vector<ThreadIdentity> threads;
  for (int32_t pid : pids) {
    std::vector<ThreadIdentity> of_pid = ListThreads(pid);
    threads.insert(threads.end(), of_pid.begin(), of_pid.end());
  }
  seed.read_start_ns = MonotonicNowNs();
  for (const ThreadIdentity& id : threads) {
    const std::string dir = fmt::format("/proc/{}/task/{}/", id.tgid, id.tid);
    auto status_text = ReadSmallFile(dir + "status");
    auto stat_text = ReadSmallFile(dir + "stat");
    if (!status_text || !stat_text) continue;
    auto status = ParseProcStatus(*status_text);
    auto stat = ParseProcStat(*stat_text);
    if (!status || !stat) continue;
    ThreadSeed t;
    t.tid = id.tid;
    t.tgid = status->tgid;
    t.comm = id.comm.empty() ? status->name : id.comm;
    t.state = stat->state;
    t.cpu = stat->cpu;
    t.nvcsw = status->nvcsw;
    t.nivcsw = status->nivcsw;
    t.kernel_thread = stat->kernel_thread();
    if (t.kernel_thread)
      t.syscall = kNotInSyscall;
    else if (auto sc = ReadSmallFile(dir + "syscall"))
      t.syscall = ParseProcSyscall(*sc);
    seed.threads.push_back(std::move(t));
  }
  seed.read_end_ns = MonotonicNowNs();
  std::sort(seed.threads.begin(), seed.threads.end(),
            [](const ThreadSeed& a, const ThreadSeed& b) { return a.tid < b.tid; });
  return seed;
}

bool ProcessGone(int32_t pid) {
  // Cheap check first: the leader's own state.
  std::optional<char> leader = ProcessState(pid);
  if (!leader) return true;
  if (*leader != 'Z' && *leader != 'X') return false;
  // The leader may have exited alone (pthread_exit from main): look at the others.
  for (const ThreadIdentity& t : ListThreads(pid)) {
    auto stat = ReadSmallFile(fmt::format("/proc/{}/task/{}/stat", pid, t.tid));
    if (!stat) continue;
    auto f = ParseProcStat(*stat);
    if (f && f->state != 'Z' && f->state != 'X') return false;
  }
  return true;
}

}  // namespace cstool
