#include "kernel/proc_threads.h"

#include <dirent.h>
#include <fmt/core.h>
#include <signal.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

namespace cstool {
namespace {

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};

std::vector<int> NumericEntries(const std::string& dir) {
  std::vector<int> out;
  std::unique_ptr<DIR, DirCloser> d(::opendir(dir.c_str()));
  if (!d) return out;
  while (dirent* e = ::readdir(d.get())) {
    char* end = nullptr;
    long v = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0' && v > 0) out.push_back(static_cast<int>(v));
  }
  return out;
}

std::string ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The fields of /proc/PID/stat.
std::optional<StatFields> ReadProcStat(int pid) {
  return ParseProcStat(ReadLine(fmt::format("/proc/{}/stat", pid)));
}

// The numbers /proc/PID/status gives for `keys` ("Tgid:", ...), in their order; a key
// the file lacks (or a file that cannot be read) leaves its number nullopt.
template <size_t N>
std::array<std::optional<uint64_t>, N> ReadStatusNumbers(
    int pid, const std::array<std::string_view, N>& keys) {
  std::array<std::optional<uint64_t>, N> out;
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (in && std::getline(in, line)) {
    std::istringstream ls(line);
    std::string key;
    uint64_t value = 0;
    if (!(ls >> key >> value)) continue;
    for (size_t i = 0; i < N; ++i)
      if (key == keys[i]) out[i] = value;
  }
  return out;
}

// The threads of /proc/PID/task, labelled with their process `tgid`.
std::vector<ThreadIdentity> ThreadsOf(int pid, int tgid) {
  std::vector<ThreadIdentity> out;
  const std::optional<StatFields> stat = ReadProcStat(pid);
  const int ppid = stat ? stat->ppid : 0;
  const bool kernel_thread = stat && stat->kernel_thread();
  for (int tid : NumericEntries(fmt::format("/proc/{}/task", pid)))
    out.push_back(
        {tid, tgid, ReadLine(fmt::format("/proc/{}/task/{}/comm", pid, tid)), ppid, kernel_thread});
  return out;
}

}  // namespace

std::vector<ThreadIdentity> ListThreads(int pid) { return ThreadsOf(pid, ProcessOfThread(pid)); }

std::optional<StatFields> ParseProcStat(std::string_view text) {
  // "pid (comm) S ppid ..." — comm may hold spaces and parentheses: use the last ')'.
  size_t paren = text.rfind(')');
  if (paren == std::string_view::npos || paren + 2 >= text.size()) return std::nullopt;
  StatFields f;
  f.state = text[paren + 2];
  // Field 3 is the state (after the comm's last ')'), the rest count from there.
  std::string_view rest = text.substr(paren + 2);
  int field = 3;
  size_t pos = 0;
  auto number = [&rest, &pos](auto& out) {
    std::from_chars(rest.data() + pos, rest.data() + rest.size(), out);
  };
  while (field < 39) {
    size_t sp = rest.find(' ', pos);
    if (sp == std::string_view::npos) return f;  // older kernels: no CPU field
    pos = sp + 1;
    ++field;
    if (field == 4) number(f.ppid);
    if (field == 9) number(f.flags);
  }
  number(f.cpu);
  return f;
}

std::vector<ThreadIdentity> ListAllThreads() {
  std::vector<ThreadIdentity> out;
  for (int pid : NumericEntries("/proc")) {  // readdir of /proc lists processes only
    auto threads = ThreadsOf(pid, pid);
    out.insert(out.end(), threads.begin(), threads.end());
  }
  return out;
}

ProcessParents ProcessParents::Read() {
  ProcessParents parents;
  for (int p : NumericEntries("/proc"))
    if (std::optional<StatFields> stat = ReadProcStat(p))
      parents.parent_of_.emplace_back(p, stat->ppid);
  return parents;
}

std::vector<int> ProcessParents::DescendantsOf(int pid) const {
  std::vector<int> out{pid};
  for (size_t i = 0; i < out.size(); ++i)
    for (auto [p, ppid] : parent_of_)
      if (ppid == out[i]) out.push_back(p);
  out.erase(out.begin());
  return out;
}

std::vector<int> DescendantsOf(int pid) { return ProcessParents::Read().DescendantsOf(pid); }

std::string UnfollowedDescendantsWarning(int pid, const std::vector<int>& descendants) {
  const bool one = descendants.size() == 1;
  return fmt::format(
      "process {} has {} descendant process{} that {} not followed (e.g. {}); add --children to "
      "include {}",
      pid, descendants.size(), one ? "" : "es", one ? "is" : "are",
      descendants.empty() ? 0 : descendants.front(), one ? "it" : "them");
}

bool ProcessExists(int pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

std::optional<char> ProcessState(int pid) {
  std::optional<StatFields> stat = ReadProcStat(pid);
  if (!stat) return std::nullopt;
  return stat->state;
}

std::optional<ContextSwitches> ReadContextSwitches(int pid) {
  const auto [voluntary, involuntary] =
      ReadStatusNumbers<2>(pid, {"voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"});
  if (!voluntary || !involuntary) return std::nullopt;
  return ContextSwitches{*voluntary, *involuntary};
}

int ProcessOfThread(int tid) {
  const auto [tgid] = ReadStatusNumbers<1>(tid, {"Tgid:"});
  return tgid && *tgid > 0 ? static_cast<int>(*tgid) : tid;
}

std::string ThreadOfAnotherProcessNote(int tid, int tgid) {
  return fmt::format("{} is a thread of process {} ({}): following the whole process", tid, tgid,
                     ReadLine(fmt::format("/proc/{}/comm", tgid)));
}

}  // namespace cstool
