// Helpers shared by the bench/ programs: running a command with its output captured
// and its peak RSS measured, medians, and a Google Benchmark reporter that keeps every
// repetition so a program can print its own summary table after the runs.
#pragma once

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace cstool::bench {

struct ProcessResult {
  int status = -1;  // wait status
  std::string out;  // stdout (empty when discarded)
  std::string err;  // stderr
  double wall_s = 0;
  // ru_maxrss of the child: what `/usr/bin/time -v` prints. Linux keeps the high-water
  // mark of the image exec replaced, a copy of this process: RssFloorKb is the floor.
  long max_rss_kb = 0;
  double cpu_s = 0;  // the child's user + system time (wall time on a busy machine is not)
  bool ok() const { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }
};

inline std::string ReadAll(int fd) {
  std::string s;
  ::lseek(fd, 0, SEEK_SET);
  char buf[65536];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) s.append(buf, static_cast<size_t>(n));
  return s;
}

// The floor, in KiB, under the ru_maxrss of a child this process forks and that then
// execs: the peak RSS of a child that exits at once (what a fork copies: the anonymous
// pages, mapped again in the child), plus the few pages the child touches on its way to
// exec. Not this process's VmRSS: that counts its file pages too, which a fork does not
// map again (report_bench: VmRSS 8.6 MiB, a fork's copy 2.9 MiB), and cstool's own peaks
// (6-7 MiB) had fallen below it. A fork of its own: call it outside timed code.
inline long RssFloorKb() {
  constexpr long kOnTheWayToExecKb = 256;
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  struct rusage ru {};
  int status = 0;
  if (pid < 0 || ::wait4(pid, &status, 0, &ru) != pid) return 0;
  return ru.ru_maxrss + kOnTheWayToExecKb;
}

// Runs argv (PATH is searched) and waits for it. stdout goes to /dev/null unless
// `capture_out`; stderr is always captured.
inline ProcessResult RunProcess(const std::vector<std::string>& argv, bool capture_out = true) {
  ProcessResult r;
  int out_fd = capture_out ? ::memfd_create("bench-out", 0) : ::open("/dev/null", O_WRONLY);
  int err_fd = ::memfd_create("bench-err", 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  auto start = std::chrono::steady_clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_fd, STDOUT_FILENO);
    ::dup2(err_fd, STDERR_FILENO);
    ::execvp(args[0], args.data());
    std::perror(args[0]);
    ::_exit(127);
  }
  struct rusage ru {};
  if (pid > 0) ::wait4(pid, &r.status, 0, &ru);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.max_rss_kb = ru.ru_maxrss;
  r.cpu_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
            static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  if (capture_out) r.out = ReadAll(out_fd);
  r.err = ReadAll(err_fd);
  ::close(out_fd);
  ::close(err_fd);
  return r;
}

// The first number after `prefix` in `text` (-1 when absent).
inline double NumberAfter(const std::string& text, const std::string& prefix) {
  size_t pos = text.find(prefix);
  if (pos == std::string::npos) return -1;
  return std::strtod(text.c_str() + pos + prefix.size(), nullptr);
}

inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

inline bool CommandExists(const std::string& name) {
  return RunProcess({"sh", "-c", "command -v " + name}, true).ok();
}

// Console output as usual, plus every single repetition (not the aggregates) kept by
// benchmark name, for summaries.
class CollectingReporter : public benchmark::ConsoleReporter {
 public:
  // Colours only on a terminal (the logs of scripts/bench.sh are files).
  CollectingReporter() : ConsoleReporter(::isatty(STDOUT_FILENO) ? OO_ColorTabular : OO_Tabular) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    benchmark::ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs)
      if (r.run_type == Run::RT_Iteration && !r.error_occurred)
        runs_[r.run_name.function_name + (r.run_name.args.empty() ? "" : "/" + r.run_name.args)]
            .push_back(r);
  }
  // Median over repetitions of a user counter (or "real_time_s").
  double MedianOf(const std::string& name, const std::string& counter) const {
    auto it = runs_.find(name);
    if (it == runs_.end()) return -1;
    std::vector<double> v;
    for (const Run& r : it->second) {
      if (counter == "real_time_s") {
        v.push_back(r.real_accumulated_time /
                    static_cast<double>(std::max<int64_t>(1, r.iterations)));
      } else if (auto c = r.counters.find(counter); c != r.counters.end()) {
        v.push_back(c->second.value);  // rates are already finished when reported
      }
    }
    return v.empty() ? -1 : Median(v);
  }
  size_t Count(const std::string& name) const {
    auto it = runs_.find(name);
    return it == runs_.end() ? 0 : it->second.size();
  }
  const std::map<std::string, std::vector<Run>>& runs() const { return runs_; }

 private:
  std::map<std::string, std::vector<Run>> runs_;
};

}  // namespace cstool::bench
