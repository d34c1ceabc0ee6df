#include "tests/support/synthetic_workload.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "tests/support/synthetic_trace.h"

namespace cstool {
namespace {

std::string SyntheticEventsDir() {
  std::string live = "/sys/kernel/tracing/events";
  if (::access((live + "/sched/sched_switch/format").c_str(), R_OK) == 0) return live;
  return (std::filesystem::path(__FILE__).parent_path().parent_path() / "fixtures/formats/events")
      .string();
}

}  // namespace

void WriteSyntheticWorkload(int cpus, uint64_t events, const std::string& path) {
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
  constexpr int kThreadsPerCpu = 4;
  const int weights[] = {400, 200, 250, 149, 1};  // per mille: the bursts below, in order
  auto tid_of = [](int cpu, int k) { return 1000 + kThreadsPerCpu * cpu + k; };
  std::vector<int> running(static_cast<size_t>(cpus), 0);
  std::vector<uint64_t> ts(static_cast<size_t>(cpus));
  for (int c = 0; c < cpus; ++c) ts[static_cast<size_t>(c)] = 1'000'000 + 50 * c;
  int32_t next_child = 100000;
  uint64_t x = 88172645463325252ull;
  uint64_t written = 0;
  while (written < events) {
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
}

}  // namespace cstool
