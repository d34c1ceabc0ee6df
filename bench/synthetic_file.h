// The synthetic benchmark file of decode_bench and report_bench: 4M events shaped like a
// syscall-heavy workload (syscall pairs, wakeups and switches, timer interrupts with their
// softirqs, now and then a fork; four threads per CPU taking turns), written as a v6
// trace.dat from real event formats
// (tests/support/synthetic_trace.h) over 2 or 64 CPUs whose streams interleave in time,
// and its v7 conversion with zstd chunks (`trace-cmd convert --file-version 7
// --compression zstd`; none without trace-cmd). Formats come from
// /sys/kernel/tracing/events when it is readable, else from the snapshot in
// tests/fixtures/formats/events.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "tests/support/synthetic_trace.h"

namespace cstool::bench {

inline std::string SyntheticEventsDir() {
  std::string live = "/sys/kernel/tracing/events";
  if (::access((live + "/sched/sched_switch/format").c_str(), R_OK) == 0) return live;
  return (std::filesystem::path(__FILE__).parent_path().parent_path() /
          "tests/fixtures/formats/events")
      .string();
}

// The benchmark file of `cpus` CPUs and its v7 conversion, built on construction and
// removed by the destructor.
class SyntheticFile {
 public:
  static constexpr uint64_t kEvents = 4'000'000;

  // With `with_v7`, also the v7 conversion.
  explicit SyntheticFile(int cpus, bool with_v7 = true) {
    const std::string stem =
        (std::filesystem::temp_directory_path() /
         ("cstool_synthetic_bench_" + std::to_string(::getpid()) + "_" + std::to_string(cpus)))
            .string();
    path_ = stem + ".dat";
    v7_path_ = stem + ".v7.dat";
    // Built in a child: the benchmark's own memory stays as it was. A child it forks later
    // starts from a copy of it, and Linux counts that copy in the child's peak RSS
    // (ru_maxrss keeps the high-water mark of the image exec replaced), so a benchmark
    // process left larger by building 165 MB of records would raise every peak RSS
    // measured after it to its own size.
    if (!with_v7) v7_path_.clear();
    const pid_t pid = ::fork();
    if (pid == 0) {
      // Never returns: the child is a copy of the benchmark, whose exit would run its
      // destructors (and remove the parent's files).
      try {
        Build(cpus, path_, v7_path_);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "synthetic benchmark file %s: %s\n", path_.c_str(), e.what());
        ::_exit(1);
      }
      ::_exit(0);
    }
    int status = 0;
    if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0 || !std::filesystem::exists(path_)) {
      std::fprintf(stderr, "synthetic benchmark file %s could not be built\n", path_.c_str());
      std::error_code ec;
      std::filesystem::remove(path_, ec);
      if (!v7_path_.empty()) std::filesystem::remove(v7_path_, ec);
      std::exit(1);
    }
    if (!v7_path_.empty() && !std::filesystem::exists(v7_path_)) v7_path_.clear();
    ::sync();  // written back before the timed runs, not half a minute into them
  }
  ~SyntheticFile() {
    std::filesystem::remove(path_);
    if (!v7_path_.empty()) std::filesystem::remove(v7_path_);
  }
  const std::string& path() const { return path_; }
  // Empty without trace-cmd (or without `with_v7`).
  const std::string& v7_path() const { return v7_path_; }

 private:
  static void Build(int cpus, const std::string& path, const std::string& v7_path) {
    SyntheticTrace t(SyntheticEventsDir(), cpus);
    const int sw = t.AddEvent("sched", "sched_switch");
    const int waking = t.AddEvent("sched", "sched_waking");
    const int wakeup = t.AddEvent("sched", "sched_wakeup");
    const int se = t.AddEvent("raw_syscalls", "sys_enter");
    const int sx = t.AddEvent("raw_syscalls", "sys_exit");
    const int lte = t.AddEvent("irq_vectors", "local_timer_entry");
    const int ltx = t.AddEvent("irq_vectors", "local_timer_exit");
    const int se_irq = t.AddEvent("irq", "softirq_entry");
    const int fork = t.AddEvent("sched", "sched_process_fork");
    t.AddEvent("sched", "sched_process_exit");
    t.AddEvent("task", "task_newtask");
    const int sx_irq = t.AddEvent("irq", "softirq_exit");
    // Each CPU runs its own four threads, which take turns: bursts shaped like a
    // syscall-heavy workload (syscall pairs; the running thread wakes the next one and
    // sleeps; a timer interrupt with its softirq; now and then a fork), so that the state
    // machine sees a consistent schedule, as in a real recording of many CPUs.
    constexpr int kThreadsPerCpu = 4;
    const int weights[] = {400, 200, 250, 149, 1};  // per mille: the bursts below, in order
    auto tid_of = [](int cpu, int k) { return 1000 + kThreadsPerCpu * cpu + k; };
    std::vector<int> running(static_cast<size_t>(cpus), 0);
    std::vector<uint64_t> ts(static_cast<size_t>(cpus));
    for (int c = 0; c < cpus; ++c) ts[static_cast<size_t>(c)] = 1'000'000 + 50 * c;
    int32_t next_child = 100000;
    uint64_t x = 88172645463325252ull;
    uint64_t written = 0;
    while (written < kEvents) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      // The CPU whose clock is behind runs next, so the streams interleave in time.
      const int cpu = static_cast<int>(std::min_element(ts.begin(), ts.end()) - ts.begin());
      int pick = static_cast<int>((x >> 8) % 1000), b = 0;
      while (pick >= weights[b]) pick -= weights[b++];
      int& k = running[static_cast<size_t>(cpu)];
      const int32_t cur = tid_of(cpu, k);
      std::vector<SyntheticTrace::Record> burst;
      switch (b) {
        case 0:
        case 1:
          burst.push_back(t.NewRecord(se, cur).Set("id", b));
          burst.push_back(t.NewRecord(sx, cur).Set("id", b).Set("ret", 8));
          break;
        case 2: {
          const int next_k = (k + 1) % kThreadsPerCpu;
          const int32_t next = tid_of(cpu, next_k);
          for (int ev : {waking, wakeup})
            burst.push_back(t.NewRecord(ev, cur)
                                .SetString("comm", "worker")
                                .Set("pid", next)
                                .Set("prio", 120)
                                .Set("target_cpu", cpu));
          burst.push_back(t.NewRecord(sw, cur)
                              .SetString("prev_comm", "worker")
                              .Set("prev_pid", cur)
                              .Set("prev_prio", 120)
                              .Set("prev_state", 1)
                              .SetString("next_comm", "worker")
                              .Set("next_pid", next)
                              .Set("next_prio", 120));
          k = next_k;
          break;
        }
        case 3:
          // The timer's softirq runs as the interrupt returns (irq_exit), after its exit.
          burst.push_back(t.NewRecord(lte, cur, 0x9).Set("vector", 236));
          burst.push_back(t.NewRecord(ltx, cur, 0x9).Set("vector", 236));
          burst.push_back(t.NewRecord(se_irq, cur, 0x10).Set("vec", 1));
          burst.push_back(t.NewRecord(sx_irq, cur, 0x10).Set("vec", 1));
          break;
        default:
          burst.push_back(t.NewRecord(fork, cur)
                              .SetString("parent_comm", "worker")
                              .Set("parent_pid", cur)
                              .SetString("child_comm", "worker")
                              .Set("child_pid", next_child++));
          break;
      }
      for (const SyntheticTrace::Record& r : burst) {
        ts[cpu] += 50 + ((x >> 32) & 511);
        t.Append(cpu, ts[cpu], r);
        ++written;
      }
    }
    t.Write(path);
    if (v7_path.empty()) return;
    const std::string convert = "trace-cmd convert -i " + path + " -o " + v7_path +
                                " --file-version 7 --compression zstd >/dev/null 2>&1";
    if (std::system(convert.c_str()) != 0) std::filesystem::remove(v7_path);
  }

  std::string path_;
  std::string v7_path_;
};

}  // namespace cstool::bench
