#include "kernel/proc_task_counters.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <set>

#include "base/text_fields.h"
#include "base/unique_fd.h"

namespace cstool {
namespace {

void SetError(std::string* error, std::string msg) {
  if (error) *error = std::move(msg);
}

// The whole of a small /proc file, read from its start (a seq_file regenerates its text
// on a read at offset 0, so the same descriptor can be read again). nullopt with *err =
// errno on failure.
std::optional<std::string> ReadFromStart(int fd, int* err) {
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = pread(fd, buf, sizeof buf, static_cast<off_t>(out.size()));
    if (n < 0) {
      if (errno == EINTR) continue;
      *err = errno;
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// Opens a /proc file; -1 with *err = errno on failure.
int OpenProcFile(const std::string& path, int* err) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) *err = errno;
  return fd;
}

std::optional<std::string> ReadFile(const std::string& path, int* err) {
  UniqueFd fd(OpenProcFile(path, err));
  if (fd.get() < 0) return std::nullopt;
  return ReadFromStart(fd.get(), err);
}

bool IsGone(int err) { return err == ENOENT || err == ESRCH; }

std::vector<int32_t> ListNumericDir(const std::string& path, int* err) {
  std::vector<int32_t> out;
  DIR* d = opendir(path.c_str());
  if (!d) {
    *err = errno;
    return out;
  }
  while (dirent* e = readdir(d)) {
    int32_t n = 0;
    if (ParseNumber(std::string_view(e->d_name), &n) && n > 0) out.push_back(n);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  *err = 0;
  return out;
}

void SnapshotProcess(int32_t pid, const std::string& proc_root, std::set<int32_t>* seen_tgids,
                     ProcSnapshot* snap) {
  int err = 0;
  std::vector<int32_t> tids = ListNumericDir(fmt::format("{}/{}/task", proc_root, pid), &err);
  if (err != 0) {
    if (IsGone(err)) {
      ++snap->missing_processes;
    } else {
      snap->errors.push_back(fmt::format("{}/{}/task: {}", proc_root, pid, std::strerror(err)));
    }
    return;
  }
  bool first = true;
  for (int32_t tid : tids) {
    std::string error;
    auto c = ReadProcTask(pid, tid, &error, proc_root);
    if (!c) {
      if (error.empty()) {
        ++snap->vanished_threads;
      } else {
        snap->errors.push_back(std::move(error));
      }
      continue;
    }
    if (first) {
      // A non-leader tid given as pid lists the whole process; read each process once.
      if (c->tgid != 0 && !seen_tgids->insert(c->tgid).second) return;
      first = false;
    }
    snap->tasks.push_back(std::move(*c));
  }
}

}  // namespace

std::optional<ProcStatusFields> ParseProcStatus(std::string_view text, std::string* error) {
  ProcStatusFields f;
  bool have_tgid = false, have_pid = false, have_nvcsw = false, have_nivcsw = false;
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon);
    std::string_view value = line.substr(colon + 1);
    bool ok = true;
    if (key == "Name") {
      while (!value.empty() && (value.front() == '\t' || value.front() == ' '))
        value.remove_prefix(1);
      f.name = std::string(value);
    } else if (key == "Tgid") {
      ok = have_tgid = ParseNumber(value, &f.tgid);
    } else if (key == "Pid") {
      ok = have_pid = ParseNumber(value, &f.pid);
    } else if (key == "PPid") {
      ok = ParseNumber(value, &f.ppid);
    } else if (key == "voluntary_ctxt_switches") {
      ok = have_nvcsw = ParseNumber(value, &f.nvcsw);
    } else if (key == "nonvoluntary_ctxt_switches") {
      ok = have_nivcsw = ParseNumber(value, &f.nivcsw);
    }
    if (!ok) {
      SetError(error, fmt::format("status: bad value for {}: \"{}\"", key, value));
      return std::nullopt;
    }
  }
  if (!have_tgid || !have_pid || !have_nvcsw || !have_nivcsw) {
    SetError(error,
             fmt::format("status: missing {}", !have_tgid    ? "Tgid"
                                               : !have_pid   ? "Pid"
                                               : !have_nvcsw ? "voluntary_ctxt_switches"
                                                             : "nonvoluntary_ctxt_switches"));
    return std::nullopt;
  }
  return f;
}

std::optional<ProcSchedstat> ParseProcSchedstat(std::string_view text, std::string* error) {
  std::string_view fields[3];
  size_t n = 0;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t')) ++i;
    if (i >= text.size()) break;
    size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\n' && text[i] != '\t') ++i;
    if (n == 3) {
      SetError(error, fmt::format("schedstat: more than 3 fields: \"{}\"", text));
      return std::nullopt;
    }
    fields[n++] = text.substr(start, i - start);
  }
  ProcSchedstat s;
  uint64_t runtime = 0, delay = 0;
  if (n != 3 || !ParseNumber(fields[0], &runtime) || !ParseNumber(fields[1], &delay) ||
      !ParseNumber(fields[2], &s.timeslices)) {
    SetError(error, fmt::format("schedstat: expected 3 numbers, got \"{}\"", text));
    return std::nullopt;
  }
  s.exec_runtime_ns = static_cast<int64_t>(runtime);
  s.run_delay_ns = static_cast<int64_t>(delay);
  return s;
}

// status (switch counts) and schedstat (times) are read back to back between clock
// reads: the counts hold at one instant inside [before, mid] (a switch traced there may
// be on either side of them, and the check allows exactly that), the times at one inside
// [mid, after], and the report cuts the times at `after`. A reader preempted inside the
// bracket (milliseconds on a busy CPU, dozens of switches of a ping-pong thread) would
// widen it, so a wide bracket is read again, keeping the narrowest of a few tries.
// Opening the files (the path walk) stays outside the bracket.
constexpr int64_t kNarrowReadNs = 50'000;
constexpr int kReadTries = 4;

std::optional<KernelTaskCounters> ReadProcTask(int32_t pid, int32_t tid, std::string* error,
                                               const std::string& proc_root) {
  const std::string dir = fmt::format("{}/{}/task/{}", proc_root, pid, tid);
  int err = 0;
  auto fail = [&](const char* file) -> std::optional<KernelTaskCounters> {
    if (!IsGone(err)) SetError(error, fmt::format("{}/{}: {}", dir, file, std::strerror(err)));
    return std::nullopt;
  };
  auto comm_text = ReadFile(dir + "/comm", &err);
  if (!comm_text) return fail("comm");
  UniqueFd status_fd(OpenProcFile(dir + "/status", &err));
  if (status_fd.get() < 0) return fail("status");
  UniqueFd sched_fd(OpenProcFile(dir + "/schedstat", &err));
  if (sched_fd.get() < 0) return fail("schedstat");

  std::optional<std::string> status_text, sched_text;
  int64_t counts_from = 0, counts_to = 0, now = 0;
  int64_t span = std::numeric_limits<int64_t>::max();
  for (int i = 0; i < kReadTries && span > kNarrowReadNs; ++i) {
    const int64_t before = MonotonicNowNs();
    auto status_try = ReadFromStart(status_fd.get(), &err);
    if (!status_try) return fail("status");
    const int64_t mid = MonotonicNowNs();
    auto sched_try = ReadFromStart(sched_fd.get(), &err);
    if (!sched_try) return fail("schedstat");
    const int64_t after = MonotonicNowNs();
    if (after - before < span) {
      span = after - before;
      counts_from = before;
      counts_to = mid;
      now = after;
      status_text = std::move(status_try);
      sched_text = std::move(sched_try);
    }
  }
  // A file of a thread that died while being read can come back empty.
  if (status_text->empty() || sched_text->empty()) return std::nullopt;

  std::string perr;
  auto status = ParseProcStatus(*status_text, &perr);
  if (!status) {
    SetError(error, fmt::format("{}/{}", dir, perr));
    return std::nullopt;
  }
  auto sched = ParseProcSchedstat(*sched_text, &perr);
  if (!sched) {
    SetError(error, fmt::format("{}/{}", dir, perr));
    return std::nullopt;
  }
  KernelTaskCounters c;
  c.source = KernelTaskCounters::Source::kProcSnapshot;
  c.tid = tid;
  c.tgid = status->tgid;
  c.ppid = status->ppid;
  c.comm = *comm_text;
  if (!c.comm.empty() && c.comm.back() == '\n') c.comm.pop_back();
  if (c.comm.empty()) c.comm = status->name;
  c.nvcsw = status->nvcsw;
  c.nivcsw = status->nivcsw;
  c.exec_runtime_ns = sched->exec_runtime_ns;
  c.run_delay_ns = sched->run_delay_ns;
  c.run_delay_count = sched->timeslices;
  c.taken_at_ns = now;
  c.switches_read_from_ns = counts_from;
  c.switches_read_to_ns = counts_to;
  return c;
}

ProcSnapshot SnapshotProcTasks(std::span<const int32_t> pids, const std::string& proc_root) {
  ProcSnapshot snap;
  std::set<int32_t> seen;
  for (int32_t pid : pids) {
    if (pid <= 0) continue;
    SnapshotProcess(pid, proc_root, &seen, &snap);
  }
  return snap;
}

ProcSnapshot SnapshotAllProcTasks(const std::string& proc_root) {
  int err = 0;
  std::vector<int32_t> pids = ListNumericDir(proc_root, &err);
  if (err != 0) {
    ProcSnapshot snap;
    snap.errors.push_back(fmt::format("{}: {}", proc_root, std::strerror(err)));
    return snap;
  }
  ProcSnapshot snap = SnapshotProcTasks(pids, proc_root);
  // Processes that exited between listing /proc and reading them are expected here.
  snap.vanished_threads += snap.missing_processes;
  snap.missing_processes = 0;
  return snap;
}

}  // namespace cstool
