// Recording overhead and loss of `cstool record`, measured on a two-thread pipe
// ping-pong pinned to CPU 0 (`cstool_workload pingrate SECS 0 [RATE]`, which prints its
// round trips per second).
//
//   BM_PingPong/config:0  untraced
//   BM_PingPong/config:1  under `cstool record` with the default events
//   BM_PingPong/config:2  under `cstool record --no-defaults -e sched:...` (scheduler only)
//   BM_PingPong/config:3  under `perf sched record` (system-wide, as perf sched does)
//   BM_PingPong/config:4  the scheduler events of config 2 enabled in a bare tracefs
//                         instance with the same pid filter and nobody reading it: the
//                         kernel's own cost of the tracepoints, the floor for any tracer
//   BM_PingPong/config:5  the same with sched_switch alone: what the one tracepoint every
//                         context-switch tracer needs costs by itself
//   BM_PingPong/config:6  under `cstool record --compress=none` (raw pages, v6): what the
//                         default zstd compression of config 1 costs against it, and the
//                         bytes per event of both (the compression ratio)
//   BM_PingPong/config:7  under `cstool record --stacks` (default events plus the kernel
//                         stack of every sleep): its ratio to config 1 decides whether
//                         --stacks could be on by default (within 5 %)
//   BM_Loss/rate:R        `cstool record` (default events, default buffers) of the ping-pong
//                         paced to R round trips/s (0: full speed); events/s and lost events
//
// Every run is one process for $CSTOOL_BENCH_SECS seconds (default 2), at nice -20
// ($CSTOOL_BENCH_NICE). Unless given on
// the command line, runs are repeated 5 times and randomly interleaved, so slow phases
// of a shared machine hit every configuration alike; the summary uses medians.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "tracefs/tracefs_api.h"

namespace cstool {
namespace {

using bench::NumberAfter;
using bench::RunProcess;

enum Config {
  kUntraced,
  kCstoolDefault,
  kCstoolSched,
  kPerfSched,
  kKernelOnly,
  kKernelSwitchOnly,
  kCstoolRawPages,
  kCstoolStacks,
  kConfigs
};
const char* const kConfigNames[] = {"untraced",
                                    "cstool record (default events)",
                                    "cstool record (sched events only)",
                                    "perf sched record",
                                    "sched events, no reader (floor)",
                                    "sched_switch alone, no reader",
                                    "cstool record --compress=none",
                                    "cstool record --stacks"};
const char* const kSchedEvents[] = {
    "sched_switch",       "sched_waking",       "sched_wakeup",
    "sched_wakeup_new",   "sched_process_fork", "sched_process_exec",
    "sched_process_exit", "sched_process_free", "sched_migrate_task"};

std::string Secs() {
  const char* v = std::getenv("CSTOOL_BENCH_SECS");
  return v && *v ? v : "2";
}

std::string TempPath(const char* suffix) {
  return (std::filesystem::temp_directory_path() /
          ("cstool_record_bench_" + std::to_string(::getpid()) + suffix))
      .string();
}

std::vector<std::string> Workload(const std::string& rate = "0") {
  return {std::string(CSTOOL_WORKLOAD_DIR) + "/cstool_workload", "pingrate", Secs(), "0", rate};
}

std::vector<std::string> CstoolRecord(bool sched_only, const std::string& out,
                                      bool raw_pages = false, bool stacks = false) {
  std::vector<std::string> cmd = {CSTOOL_BINARY, "record", "-o", out};
  if (raw_pages) cmd.push_back("--compress=none");
  if (stacks) cmd.push_back("--stacks");
  if (sched_only) {
    cmd.push_back("--no-defaults");
    for (const char* e : kSchedEvents) {
      cmd.push_back("-e");
      cmd.push_back(std::string("sched:") + e);
    }
  }
  cmd.push_back("--");
  return cmd;
}

// A tracefs instance with the scheduler events on, following one process tree by pid
// (like cstool record), that nobody reads: the ring buffers just wrap. Removed at scope end.
class BareInstance {
 public:
  explicit BareInstance(const std::vector<std::string>& sched_events)
      : dir_(std::string(TracingDir()) + "/instances/cstool_bench_floor_" +
             std::to_string(::getpid())) {
    std::filesystem::create_directory(dir_);
    Write("trace_clock", "mono");
    Write("buffer_size_kb", "4096");
    Write("options/event-fork", "1");
    for (const std::string& e : sched_events) Write("events/sched/" + e + "/enable", "1");
  }
  ~BareInstance() {
    Write("tracing_on", "0");
    ::rmdir(dir_.c_str());
  }
  BareInstance(const BareInstance&) = delete;
  BareInstance& operator=(const BareInstance&) = delete;
  // argv that puts its own pid in the filter, then execs `cmd`.
  std::vector<std::string> Wrap(const std::vector<std::string>& cmd) const {
    std::vector<std::string> argv = {
        "/bin/sh", "-c", "echo $$ > '" + dir_ + "/set_event_pid' && exec \"$0\" \"$@\""};
    argv.insert(argv.end(), cmd.begin(), cmd.end());
    return argv;
  }

 private:
  static const char* TracingDir() {
    const char* d = tracefs_tracing_dir();
    return d ? d : "/sys/kernel/tracing";
  }
  void Write(const std::string& file, const std::string& value) const {
    std::ofstream(dir_ + "/" + file) << value;
  }
  std::string dir_;
};

struct RunResult {
  bool ok = false;
  std::string error;
  double round_trips_per_s = 0;
  double elapsed_s = 0;
  double events = -1;  // cstool only
  double lost = -1;    // cstool only
  double bytes = -1;   // cstool only: size of the file written
};

RunResult RunConfig(Config config, const std::string& rate = "0") {
  std::vector<std::string> cmd;
  std::string out;
  const bool cstool = config == kCstoolDefault || config == kCstoolSched ||
                      config == kCstoolRawPages || config == kCstoolStacks;
  if (cstool) {
    out = TempPath(".dat");
    cmd = CstoolRecord(config == kCstoolSched, out, config == kCstoolRawPages,
                       config == kCstoolStacks);
  } else if (config == kPerfSched) {
    out = TempPath(".perf.data");
    cmd = {"perf", "sched", "record", "-o", out, "--"};
  }
  for (auto& a : Workload(rate)) cmd.push_back(a);
  std::optional<BareInstance> bare;
  if (config == kKernelOnly)
    cmd = bare.emplace(std::vector<std::string>(std::begin(kSchedEvents), std::end(kSchedEvents)))
              .Wrap(cmd);
  if (config == kKernelSwitchOnly)
    cmd = bare.emplace(std::vector<std::string>{"sched_switch"}).Wrap(cmd);
  bench::ProcessResult p = RunProcess(cmd);
  RunResult r;
  if (std::error_code ec; cstool && std::filesystem::exists(out, ec))
    r.bytes = static_cast<double>(std::filesystem::file_size(out));
  if (!out.empty()) std::filesystem::remove(out);
  r.round_trips_per_s = NumberAfter(p.out, "pingrate ");
  r.elapsed_s = NumberAfter(p.out, " round_trips ");
  if (!p.ok() || r.round_trips_per_s <= 0) {
    r.error = "run failed: " + p.err.substr(0, 400);
    return r;
  }
  if (cstool) {
    r.events = NumberAfter(p.err, "  total ");
    r.lost = NumberAfter(p.err, "events/s, lost ");
  }
  r.ok = true;
  return r;
}

void BM_PingPong(benchmark::State& state) {
  const auto config = static_cast<Config>(state.range(0));
  if (config == kPerfSched && !bench::CommandExists("perf")) {
    state.SkipWithError("perf is not installed");
    return;
  }
  RunResult r;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    r = RunConfig(config);
    if (!r.ok) {
      state.SkipWithError(r.error.c_str());
      return;
    }
  }
  state.counters["round_trips_per_s"] = r.round_trips_per_s;
  if (r.events >= 0) {
    state.counters["events_per_s"] = r.events / r.elapsed_s;
    state.counters["lost"] = r.lost;
    state.counters["bytes_per_event"] = r.bytes / r.events;
    state.counters["mb_per_s"] = r.bytes / r.elapsed_s / 1e6;
  }
  state.SetLabel(kConfigNames[config]);
}
BENCHMARK(BM_PingPong)
    ->ArgName("config")
    ->DenseRange(0, kConfigs - 1)
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kSecond);

// Paced rates, round trips/s; 0 = full speed.
const std::vector<int64_t> kLossRates = {25000, 50000, 100000, 200000, 400000, 0};

void BM_Loss(benchmark::State& state) {
  RunResult r;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    r = RunConfig(kCstoolDefault, std::to_string(state.range(0)));
    if (!r.ok) {
      state.SkipWithError(r.error.c_str());
      return;
    }
  }
  state.counters["round_trips_per_s"] = r.round_trips_per_s;
  state.counters["events_per_s"] = r.events / r.elapsed_s;
  state.counters["lost"] = r.lost;
}
BENCHMARK(BM_Loss)
    ->ArgName("rate")
    ->ArgsProduct({kLossRates})
    ->Iterations(1)
    ->Repetitions(1)
    ->UseRealTime()
    ->Unit(benchmark::kSecond);

double MaxOf(const bench::CollectingReporter& rep, const std::string& name, const char* counter) {
  double m = -1;
  auto it = rep.runs().find(name);
  if (it == rep.runs().end()) return m;
  for (const auto& r : it->second)
    if (auto c = r.counters.find(counter); c != r.counters.end()) m = std::max(m, c->second.value);
  return m;
}

void PrintSummary(const bench::CollectingReporter& rep) {
  std::printf("\n== record summary (medians; ping-pong pinned to CPU 0, %s s per run) ==\n",
              Secs().c_str());
  const double base = rep.MedianOf("BM_PingPong/config:0", "round_trips_per_s");
  std::printf("%-36s %14s %8s %5s %12s %10s\n", "configuration", "round trips/s", "ratio", "runs",
              "events/s", "lost(max)");
  for (int c = 0; c < kConfigs; ++c) {
    const std::string name = "BM_PingPong/config:" + std::to_string(c);
    const double rate = rep.MedianOf(name, "round_trips_per_s");
    if (rate < 0) {
      std::printf("%-36s %14s\n", kConfigNames[c], "n/a");
      continue;
    }
    const double ev = rep.MedianOf(name, "events_per_s");
    const double lost = MaxOf(rep, name, "lost");
    char evs[32] = "-", losts[32] = "-";
    if (ev >= 0) std::snprintf(evs, sizeof evs, "%.0f", ev);
    if (lost >= 0) std::snprintf(losts, sizeof losts, "%.0f", lost);
    std::printf("%-36s %14.0f %8.3f %5zu %12s %10s\n", kConfigNames[c], rate,
                base > 0 ? rate / base : 0, rep.Count(name), evs, losts);
  }

  const double floor_rate = rep.MedianOf("BM_PingPong/config:4", "round_trips_per_s");
  const double sched_rate = rep.MedianOf("BM_PingPong/config:2", "round_trips_per_s");
  if (floor_rate > 0 && sched_rate > 0)
    std::printf(
        "the kernel's tracepoints alone leave %.3f of untraced; cstool record (sched events "
        "only) runs at %.3f of that floor\n",
        base > 0 ? floor_rate / base : 0, sched_rate / floor_rate);
  const double switch_rate = rep.MedianOf("BM_PingPong/config:5", "round_trips_per_s");
  if (switch_rate > 0 && base > 0)
    std::printf("sched_switch alone, nobody reading, leaves %.3f of untraced\n",
                switch_rate / base);

  std::printf("\n== loss: cstool record, default events and buffers ==\n");
  std::printf("%-22s %14s %12s %10s\n", "paced rate (rt/s)", "round trips/s", "events/s", "lost");
  double best = -1;
  bool full_speed_clean = true;
  for (int64_t target : kLossRates) {
    const std::string name = "BM_Loss/rate:" + std::to_string(target);
    const double rate = rep.MedianOf(name, "round_trips_per_s");
    if (rate < 0) continue;
    const double ev = rep.MedianOf(name, "events_per_s");
    const double lost = MaxOf(rep, name, "lost");
    std::printf("%-22s %14.0f %12.0f %10.0f\n",
                target == 0 ? "full speed" : std::to_string(target).c_str(), rate, ev, lost);
    if (lost == 0) best = std::max(best, ev);
    if (target == 0 && lost != 0) full_speed_clean = false;
  }
  // The full-speed overhead runs count too.
  const double default_lost = MaxOf(rep, "BM_PingPong/config:1", "lost");
  if (default_lost > 0) full_speed_clean = false;
  if (default_lost == 0) best = std::max(best, MaxOf(rep, "BM_PingPong/config:1", "events_per_s"));
  std::printf("highest loss-free event rate: %.0f events/s; full speed loss-free: %s\n", best,
              full_speed_clean ? "yes" : "NO");

  // The default zstd compression: what it costs the workload and what it saves on disk.
  const double plain_rate = rep.MedianOf("BM_PingPong/config:6", "round_trips_per_s");
  const double zstd_rate = rep.MedianOf("BM_PingPong/config:1", "round_trips_per_s");
  const double plain_bpe = rep.MedianOf("BM_PingPong/config:6", "bytes_per_event");
  const double zstd_bpe = rep.MedianOf("BM_PingPong/config:1", "bytes_per_event");
  const double zstd_lost = MaxOf(rep, "BM_PingPong/config:1", "lost");
  std::printf(
      "\n== compression (default zstd vs --compress=none; default events, full speed) ==\n");
  std::printf("bytes per event: %.1f raw pages, %.1f zstd: ratio %.1fx\n", plain_bpe, zstd_bpe,
              zstd_bpe > 0 ? plain_bpe / zstd_bpe : 0);
  std::printf("written: %.1f MB/s raw pages, %.1f MB/s zstd\n",
              rep.MedianOf("BM_PingPong/config:6", "mb_per_s"),
              rep.MedianOf("BM_PingPong/config:1", "mb_per_s"));
  const double cost = plain_rate > 0 && zstd_rate > 0 ? zstd_rate / plain_rate : 0;
  std::printf("round trips/s with zstd: %.3f of raw-page recording; lost (max) %.0f\n", cost,
              zstd_lost);

  auto verdict = [](bool ok) { return ok ? "PASS" : "FAIL"; };
  // --stacks: on by default only if it stays within 5 % of the default recording.
  const double stacks_rate = rep.MedianOf("BM_PingPong/config:7", "round_trips_per_s");
  if (stacks_rate > 0 && zstd_rate > 0)
    std::printf(
        "\n== record --stacks (a kernel stack per sleep) ==\nround trips/s with --stacks: %.3f "
        "of the default recording (%s: on by default only within 5%%); lost (max) %.0f\n",
        stacks_rate / zstd_rate, stacks_rate / zstd_rate >= 0.95 ? "within" : "opt-in",
        MaxOf(rep, "BM_PingPong/config:7", "lost"));
  std::printf(
      "TARGET zstd compression (the default) costs under 5%% of the round-trip rate with zero "
      "lost events: %.3f, lost %.0f -> %s\n",
      cost, zstd_lost, verdict(cost >= 0.95 && zstd_lost == 0));
  const double sched = rep.MedianOf("BM_PingPong/config:2", "round_trips_per_s");
  const double perf = rep.MedianOf("BM_PingPong/config:3", "round_trips_per_s");
  const double sched_ratio = base > 0 && sched > 0 ? sched / base : 0;
  const double perf_ratio = base > 0 && perf > 0 ? perf / base : 0;
  std::printf("TARGET record (sched events only) >= 0.85 of untraced: %.3f -> %s\n", sched_ratio,
              verdict(sched_ratio >= 0.85));
  std::printf(
      "TARGET record (sched events only) better than perf sched record (%.3f): %.3f -> %s\n",
      perf_ratio, sched_ratio, verdict(perf_ratio > 0 && sched_ratio > perf_ratio));
  std::printf("TARGET zero lost events for the ping-pong at full speed, default buffers: %s\n",
              verdict(full_speed_clean));
}

}  // namespace
}  // namespace cstool

int main(int argc, char** argv) {
  // Defaults for this program: interleaved repetitions (explicit flags win).
  std::vector<char*> args(argv, argv + argc);
  bool has_reps = false, has_interleave = false;
  for (int i = 1; i < argc; ++i) {
    has_reps |= std::strncmp(argv[i], "--benchmark_repetitions", 23) == 0;
    has_interleave |= std::strncmp(argv[i], "--benchmark_enable_random_interleaving", 38) == 0;
  }
  static char reps[] = "--benchmark_repetitions=5";
  static char interleave[] = "--benchmark_enable_random_interleaving=true";
  if (!has_reps) args.push_back(reps);
  if (!has_interleave) args.push_back(interleave);
  int n = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  if (::geteuid() != 0) {
    std::fprintf(stderr, "record_bench: needs root (cstool record, perf sched record)\n");
    return 2;
  }
  // Every configuration (workload, cstool or perf and their helpers) inherits this
  // nice value: on a shared machine it keeps other users' jobs from dominating the
  // ping-pong's CPU, which otherwise makes runs differ by 5x. $CSTOOL_BENCH_NICE=0
  // turns it off.
  const char* nice_env = std::getenv("CSTOOL_BENCH_NICE");
  const int nice_value = nice_env && *nice_env ? std::atoi(nice_env) : -20;
  ::setpriority(PRIO_PROCESS, 0, nice_value);
  cstool::bench::CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  cstool::PrintSummary(reporter);
  benchmark::Shutdown();
  return 0;
}
