// `cstool report` throughput on a real recording of a context-switch-heavy workload.
//
// Set-up (once per process): `cstool record --compress=none -- cstool_workload pingpong N 0`
// (a v6 file with the raw pages) into
// /tmp (N = $CSTOOL_BENCH_ROUND_TRIPS, default 300000: about 4M events with the default
// event set), plus a small recording (2000 round trips) for the memory comparison.
// Each recording is also converted to trace-cmd's v7 format with zstd-compressed chunks
// (`trace-cmd convert --file-version 7 --compression zstd`, trace-cmd's own writer), the
// kind of file users bring from trace-cmd. All files are deleted at exit.
//
//   BM_Decode           reader + merge + decode into a no-op EventSink (events/s)
//   BM_DecodeOnThread   -j 2's decoding stage alone: its thread reads, merges and decodes
//                       into batches, the calling thread replays them into a no-op EventSink
//   BM_Analyze          AnalyzeTrace: decode + state machine + every report observer, with
//                       jobs 1 and 2 (the two stages of -j 2 on their threads)
//   BM_AnalyzeForCheck  the same plus the kernel windows `report --check` needs
//   BM_ReportProcess    the `cstool report` process (table output), wall time and peak RSS,
//                       on the v6 recording and on its v7 conversion, with -j 1 and -j 2
//   BM_TraceCmdProfile  `trace-cmd report --profile -i FILE` on the same files, wall time
//                       (each timed process of these begins on CPUs running at even speed,
//                       waiting for them untimed up to a minute: bench/host_speed.h)
//   BM_SyntheticReportProcess, BM_SyntheticTraceCmdProfile  the same two on the synthetic
//                       4M-event file of 64 CPUs (bench/synthetic_file.h), v6: `-j 1` and
//                       `-j 2`, peak RSS; BM_SyntheticV7* the same on its v7+zstd conversion
//   BM_Timeline         `cstool report FILE --timeline OUT.json` and `OUT.pftrace` (Perfetto
//                       protobuf) on the v6 recording: wall time and the file's size (bytes
//                       per traced event; target: the protobuf at most 60)
//   BM_Export           `cstool report FILE --format sqlite -o OUT.db` (and jsonl -o DIR) on
//                       the v6 recording into a new database: wall time, rows written
//                       (rows/s) and the output's size; a measurement, no target
//
// After the runs a summary (medians over repetitions) is printed; scripts/bench.sh
// collects it into the `make bench` table.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_util.h"
#include "bench/host_speed.h"
#include "bench/synthetic_file.h"
#include "decode/decode_trace.h"
#include "decode/decode_trace_inl.h"
#include "decode/event_decoder.h"
#include "format/trace_file_reader.h"
#include "model/syscall_table.h"
#include "pipeline/analyze_trace.h"

namespace cstool {
namespace {

using bench::RunProcess;

long EnvLong(const char* name, long def) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtol(v, nullptr, 10) : def;
}

uint64_t CountEvents(const std::string& path) {
  auto reader = OpenTraceFile(path);
  EventSink sink;
  return DecodeTrace(*reader, sink).events;
}

// One recording, made on first use, removed at exit.
class Recording {
 public:
  // `also`: event systems recorded besides cstool's own (record -e).
  Recording(const std::string& tag, long round_trips, const std::vector<std::string>& also = {}) {
    path_ = (std::filesystem::temp_directory_path() /
             ("cstool_report_bench_" + tag + "_" + std::to_string(::getpid()) + ".dat"))
                .string();
    std::vector<std::string> args = {CSTOOL_BINARY, "record", "--compress=none", "-o", path_};
    for (const std::string& system : also) args.insert(args.end(), {"-e", system});
    args.insert(args.end(), {"--", std::string(CSTOOL_WORKLOAD_DIR) + "/cstool_workload",
                             "pingpong", std::to_string(round_trips), "0"});
    auto r = RunProcess(args);
    if (!r.ok()) {
      std::fprintf(stderr, "report_bench: cstool record failed:\n%s\n", r.err.c_str());
      std::exit(1);
    }
    lost_ = static_cast<uint64_t>(std::max(0.0, bench::NumberAfter(r.err, "lost ")));
    events_ = CountEvents(path_);
    bytes_ = std::filesystem::file_size(path_);
    v7_path_ = path_.substr(0, path_.size() - 4) + ".v7.dat";
    auto c = RunProcess({"trace-cmd", "convert", "-i", path_, "-o", v7_path_, "--file-version", "7",
                         "--compression", "zstd"});
    if (!c.ok()) {
      std::fprintf(stderr, "report_bench: trace-cmd convert failed:\n%s\n", c.err.c_str());
      std::exit(1);
    }
    v7_bytes_ = std::filesystem::file_size(v7_path_);
    // Written back now: the kernel would otherwise start on the 200 MB half a minute
    // later, in the middle of the timed runs, and take one of the two vCPUs from them.
    ::sync();
  }
  ~Recording() {
    std::filesystem::remove(path_);
    std::filesystem::remove(v7_path_);
  }
  const std::string& path(bool v7 = false) const { return v7 ? v7_path_ : path_; }
  uint64_t events() const { return events_; }
  uint64_t bytes(bool v7 = false) const { return v7 ? v7_bytes_ : bytes_; }
  uint64_t lost() const { return lost_; }

 private:
  std::string path_, v7_path_;
  uint64_t events_ = 0, bytes_ = 0, v7_bytes_ = 0, lost_ = 0;
};

const Recording& Large() {
  static Recording r("large", EnvLong("CSTOOL_BENCH_ROUND_TRIPS", 300000));
  return r;
}
const Recording& Small() {
  static Recording r("small", 2000);
  return r;
}
// Every syscall event recorded too: some 800 event formats, of which a report decodes
// the few dozen of its own events (the rest are only named).
const Recording& ManyFormats() {
  static Recording r("many_formats", 2000, {"syscalls"});
  return r;
}

// Decodes the large recording into a no-op EventSink once per iteration with `decode`
// (one of the two calls below); events/s.
template <typename Decode>
void DecodeIntoNoOps(benchmark::State& state, Decode decode) {
  const std::string& path = Large().path();
  uint64_t n = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    auto reader = OpenTraceFile(path);
    EventDecoder decoder(reader->tep());
    EventSink sink;  // every Push* is a no-op
    n += decode(*reader, decoder, sink).events;
  }
  state.SetItemsProcessed(static_cast<int64_t>(n));
}

void BM_Decode(benchmark::State& state) {
  DecodeIntoNoOps(state, [](TraceFileReader& reader, EventDecoder& decoder, EventSink& sink) {
    return DecodeTrace(reader, decoder, sink);
  });
}
BENCHMARK(BM_Decode)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.5);

// The first stage of `report -j 2` on its own: the second (the state machine) replays into
// no-ops, so this is the decoding thread's time, the least -j 2 can take on this file.
void BM_DecodeOnThread(benchmark::State& state) {
  DecodeIntoNoOps(state, [](TraceFileReader& reader, EventDecoder& decoder, EventSink& sink) {
    return DecodeTraceOnThread(reader, decoder, sink, {});
  });
}
BENCHMARK(BM_DecodeOnThread)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.5);

void Analyze(benchmark::State& state, const AnalyzeOptions& options) {
  const std::string& path = Large().path();
  SyscallTable syscalls;
  uint64_t n = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    auto analyzed = AnalyzeTrace(path, syscalls, options);
    n += analyzed->model.trace.events;
    benchmark::DoNotOptimize(analyzed->model.threads.size());
  }
  state.SetItemsProcessed(static_cast<int64_t>(n));
}
void BM_Analyze(benchmark::State& state) {
  Analyze(state, {.jobs = static_cast<int>(state.range(0))});
}
BENCHMARK(BM_Analyze)
    ->ArgName("jobs")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(0.5);
// The same with the per-thread kernel windows `report --check` adds.
void BM_AnalyzeForCheck(benchmark::State& state) { Analyze(state, {.counter_windows = true}); }
BENCHMARK(BM_AnalyzeForCheck)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.5);

// Before a timed process (untimed): waits up to a minute for the CPUs to run at even speed
// (bench/host_speed.h), so that a slow spell of one vCPU does not make a -j 2 row; counts
// in `uneven_starts` the runs that began without it.
void StartOnEvenHost(benchmark::State& state, double* uneven_starts) {
  state.PauseTiming();
  const auto speeds = bench::WaitForEvenCpus(std::chrono::seconds(60), bench::kShortLoop);
  if (bench::Spread(speeds) > bench::kEvenSpread) ++*uneven_starts;
  state.ResumeTiming();
}

// Runs `cstool report PATH -j JOBS` once per iteration: wall time, peak RSS and the floor
// under it (bench_util.h), events/s.
void TimeReport(benchmark::State& state, const std::string& path, const std::string& jobs,
                double events) {
  double rss = 0, floor = 0, wall = 0, uneven = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    StartOnEvenHost(state, &uneven);
    state.PauseTiming();
    floor = std::max(floor, static_cast<double>(bench::RssFloorKb()));
    state.ResumeTiming();
    auto r = RunProcess({CSTOOL_BINARY, "report", path, "-j", jobs}, false);
    if (!r.ok()) {
      state.SkipWithError(("cstool report failed: " + r.err).c_str());
      break;
    }
    rss = static_cast<double>(r.max_rss_kb);
    wall += r.wall_s;
  }
  state.counters["peak_rss_kb"] = rss;
  state.counters["rss_floor_kb"] = floor;
  state.counters["events_per_s"] = events / (wall / static_cast<double>(state.iterations()));
  state.counters["uneven_starts"] = uneven;
}

// Runs `trace-cmd report --profile -i PATH` once per iteration: wall time, events/s.
void TimeTraceCmdProfile(benchmark::State& state, const std::string& path, double events) {
  double wall = 0, uneven = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    StartOnEvenHost(state, &uneven);
    auto r = RunProcess({"trace-cmd", "report", "--profile", "-i", path}, false);
    if (!r.ok()) {
      state.SkipWithError(("trace-cmd report failed: " + r.err).c_str());
      break;
    }
    wall += r.wall_s;
  }
  state.counters["events_per_s"] = events / (wall / static_cast<double>(state.iterations()));
  state.counters["uneven_starts"] = uneven;
}

// The whole `cstool report` process (file open, analysis, table rendering).
void BM_ReportProcess(benchmark::State& state) {
  const Recording& rec = state.range(0) ? Large() : Small();
  TimeReport(state, rec.path(state.range(1) != 0), std::to_string(state.range(2)),
             static_cast<double>(rec.events()));
  state.counters["events"] = static_cast<double>(rec.events());
}
BENCHMARK(BM_ReportProcess)
    ->ArgNames({"large", "v7", "jobs"})
    ->ArgsProduct({{0, 1}, {0, 1}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1)
    ->Repetitions(9);

void BM_TraceCmdProfile(benchmark::State& state) {
  const Recording& rec = Large();
  TimeTraceCmdProfile(state, rec.path(state.range(0) != 0), static_cast<double>(rec.events()));
}
BENCHMARK(BM_TraceCmdProfile)
    ->ArgName("v7")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1)
    ->Repetitions(3);

// The synthetic file of 64 CPUs, made on first use (after the recordings), removed at exit.
const bench::SyntheticFile& Synthetic64() {
  static bench::SyntheticFile file(64, /*with_v7=*/true);
  return file;
}

// A file `cstool report` (-j 1 and -j 2) and `trace-cmd report --profile` are timed on:
// BM_<name>ReportProcess/jobs:N and BM_<name>TraceCmdProfile.
struct ComparedFile {
  const char* name;
  std::string (*path)();
  double (*events)();
  int report_repetitions;
  int trace_cmd_repetitions;
};

const std::vector<ComparedFile>& ComparedFiles() {
  static const std::vector<ComparedFile> files = {
      // A small file of many event formats: what opening the file costs.
      {"ManyFormats", [] { return ManyFormats().path(); },
       [] { return static_cast<double>(ManyFormats().events()); }, 9, 5},
      // Many CPUs: the merge of 64 streams, which the decoding thread (-j 2) takes off the
      // state machine's thread.
      {"Synthetic", [] { return Synthetic64().path(); },
       [] { return static_cast<double>(bench::SyntheticFile::kEvents); }, 5, 3},
      // The same as zstd chunks: with -j 2 two decoding shares each decompress and decode
      // half of the CPUs.
      {"SyntheticV7", [] { return Synthetic64().v7_path(); },
       [] { return static_cast<double>(bench::SyntheticFile::kEvents); }, 5, 3},
  };
  return files;
}

void RegisterComparedFiles() {
  for (const ComparedFile& f : ComparedFiles()) {
    benchmark::RegisterBenchmark(fmt::format("BM_{}ReportProcess", f.name).c_str(),
                                 [&f](benchmark::State& state) {
                                   TimeReport(state, f.path(), std::to_string(state.range(0)),
                                              f.events());
                                 })
        ->ArgName("jobs")
        ->Arg(1)
        ->Arg(2)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->Iterations(1)
        ->Repetitions(f.report_repetitions);
    benchmark::RegisterBenchmark(
        fmt::format("BM_{}TraceCmdProfile", f.name).c_str(),
        [&f](benchmark::State& state) { TimeTraceCmdProfile(state, f.path(), f.events()); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->Iterations(1)
        ->Repetitions(f.trace_cmd_repetitions);
  }
}

// `report --timeline`: the process writing the Perfetto timeline next to the table, as
// JSON (proto:0) or as Perfetto's protobuf (proto:1).
void BM_Timeline(benchmark::State& state) {
  const Recording& rec = Large();
  const bool proto = state.range(0) != 0;
  const std::string out = rec.path().substr(0, rec.path().size() - 4) +
                          (proto ? ".timeline.pftrace" : ".timeline.json");
  double wall = 0, bytes = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    auto r = RunProcess({CSTOOL_BINARY, "report", rec.path(), "--timeline", out}, false);
    if (!r.ok()) {
      state.SkipWithError(("cstool report --timeline failed: " + r.err).c_str());
      break;
    }
    wall += r.wall_s;
    bytes = static_cast<double>(std::filesystem::file_size(out));
  }
  std::filesystem::remove(out);
  state.counters["bytes"] = bytes;
  state.counters["bytes_per_event"] = bytes / static_cast<double>(rec.events());
  state.counters["events_per_s"] = rec.events() / (wall / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_Timeline)
    ->ArgName("proto")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1)
    ->Repetitions(3);

// `report --format sqlite|jsonl`: the process exporting every table into a new database
// (or directory); rows from its status line ("...: N rows (...").
void BM_Export(benchmark::State& state) {
  const Recording& rec = Large();
  const bool jsonl = state.range(0) != 0;
  const std::string out =
      rec.path().substr(0, rec.path().size() - 4) + (jsonl ? ".tables" : ".export.db");
  double wall = 0, cpu = 0, rows = 0, bytes = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    std::filesystem::remove_all(out);
    auto r = RunProcess(
        {CSTOOL_BINARY, "report", rec.path(), "--format", jsonl ? "jsonl" : "sqlite", "-o", out},
        false);
    if (!r.ok()) {
      state.SkipWithError(("cstool report --format failed: " + r.err).c_str());
      break;
    }
    wall += r.wall_s;
    cpu += r.cpu_s;
    rows = bench::NumberAfter(r.err, "): ");
    bytes = 0;
    if (jsonl) {
      for (const auto& f : std::filesystem::directory_iterator(out))
        bytes += static_cast<double>(f.file_size());
    } else {
      bytes = static_cast<double>(std::filesystem::file_size(out));
    }
  }
  std::filesystem::remove_all(out);
  const double per_run = wall / static_cast<double>(state.iterations());
  state.counters["rows"] = rows;
  state.counters["bytes"] = bytes;
  state.counters["rows_per_s"] = rows / per_run;
  state.counters["cpu_s"] = cpu / static_cast<double>(state.iterations());
  state.counters["events_per_s"] = rec.events() / per_run;
}
BENCHMARK(BM_Export)
    ->ArgName("jsonl")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1)
    ->Repetitions(3);

void PrintSummary(const bench::CollectingReporter& rep) {
  const Recording& large = Large();
  const Recording& small = Small();
  auto m = [&](const std::string& name, const char* counter) {
    return rep.MedianOf(name, counter);
  };
  const double decode = m("BM_Decode", "items_per_second");
  const double decode_on_thread = m("BM_DecodeOnThread", "items_per_second");
  const double analyze = m("BM_Analyze/jobs:1", "items_per_second");
  const double analyze_j2 = m("BM_Analyze/jobs:2", "items_per_second");
  const double analyze_check = m("BM_AnalyzeForCheck", "items_per_second");
  std::printf("\n== report summary (medians) ==\n");
  std::printf(
      "trace file: pingpong recording, %llu events, %llu lost; v6 %.1f MiB, v7+zstd %.1f MiB\n",
      static_cast<unsigned long long>(large.events()),
      static_cast<unsigned long long>(large.lost()), large.bytes() / 1048576.0,
      large.bytes(true) / 1048576.0);
  std::printf("%-46s %12s\n", "measure", "value");
  auto row = [](const std::string& what, double v, const char* unit) {
    if (v < 0)
      std::printf("%-46s %12s\n", what.c_str(), "n/a");
    else
      std::printf("%-46s %12.2f %s\n", what.c_str(), v, unit);
  };
  row("RSS a fork of the benchmark copies (floor)",
      m("BM_ReportProcess/large:1/v7:0/jobs:1", "rss_floor_kb") / 1024.0, "MiB");
  row("decode only (reader+merge+decode)", decode / 1e6, "M events/s");
  row("decode + state machine + analyses", analyze / 1e6, "M events/s");
  // -j 2 takes the longer of its two stages: the decoding one is measured alone, the state
  // machine's is what the whole takes when it is the longer.
  row("-j 2: decoding stage alone (its thread)", decode_on_thread / 1e6, "M events/s");
  row("-j 2: decode + state machine + analyses", analyze_j2 / 1e6, "M events/s");
  row("  its time that the decoding stage alone takes",
      decode_on_thread > 0 && analyze_j2 > 0 ? 100.0 * analyze_j2 / decode_on_thread : -1, "%");
  row("  + kernel windows (report --check)", analyze_check / 1e6, "M events/s");
  auto verdict = [](bool ok) { return ok ? "PASS" : "FAIL"; };
  // The rows of `cstool report` with -j 1 and -j 2 against trace-cmd on one file of
  // `events`; returns the -j 2 speedup over -j 1 and the faster one's over trace-cmd (-1:
  // not measured).
  auto compare = [&row](double j1_s, double j2_s, double tc_s, double events) {
    auto rate = [events](double s) { return s > 0 ? events / s / 1e6 : -1; };
    row("cstool report -j 1 (process)", j1_s, "s");
    row("  = events/s", rate(j1_s), "M events/s");
    row("cstool report -j 2 (process)", j2_s, "s");
    row("  = events/s", rate(j2_s), "M events/s");
    const double scaling = j1_s > 0 && j2_s > 0 ? j1_s / j2_s : -1;
    row("  -j 2 speedup over -j 1", scaling, "x");
    row("trace-cmd report --profile (process)", tc_s, "s");
    row("  = events/s", rate(tc_s), "M events/s");
    const double best_s = j2_s > 0 && (j1_s <= 0 || j2_s < j1_s) ? j2_s : j1_s;
    const double speedup = best_s > 0 && tc_s > 0 ? tc_s / best_s : -1;
    row("speedup vs trace-cmd report --profile", speedup, "x");
    return std::pair{scaling, speedup};
  };
  // Each timed process waited (untimed) for the CPUs to run at even speed; those that
  // began without it after a minute are counted here.
  int timed = 0, uneven = 0;
  for (const auto& [name, runs] : rep.runs())
    for (const auto& r : runs)
      if (auto c = r.counters.find("uneven_starts"); c != r.counters.end()) {
        timed += static_cast<int>(r.iterations);
        uneven += static_cast<int>(c->second.value);
      }
  std::printf("%-46s %12s\n", "timed processes begun on uneven CPUs",
              fmt::format("{} of {}", uneven, timed).c_str());
  std::vector<std::string> targets;
  for (int v7 = 0; v7 <= 1; ++v7) {
    const char* fmt = v7 ? "v7+zstd" : "v6";
    const std::string suffix = v7 ? "/v7:1" : "/v7:0";
    auto report = [&](int large, int jobs, const char* counter) {
      return m(fmt::format("BM_ReportProcess/large:{}{}/jobs:{}", large, suffix, jobs), counter);
    };
    const double j1_s = report(1, 1, "real_time_s");
    const double j2_s = report(1, 2, "real_time_s");
    const double tc_s = m(std::string("BM_TraceCmdProfile/v7:") + (v7 ? "1" : "0"), "real_time_s");
    std::printf("-- %s file --\n", fmt);
    const auto [scaling, speedup] = compare(j1_s, j2_s, tc_s, static_cast<double>(large.events()));
    for (int jobs = 1; jobs <= 2; ++jobs) {
      const double rss_small = report(0, jobs, "peak_rss_kb") / 1024.0;
      const double rss_large = report(1, jobs, "peak_rss_kb") / 1024.0;
      row(fmt::format("peak RSS -j {}, small file ({} events)", jobs, small.events()), rss_small,
          "MiB");
      row(fmt::format("peak RSS -j {}, large file ({} events)", jobs, large.events()), rss_large,
          "MiB");
      // A peak at what a fork of the benchmark copies was not measured (bench_util.h,
      // RssFloorKb).
      const double floor =
          std::max(report(0, jobs, "rss_floor_kb"), report(1, jobs, "rss_floor_kb")) / 1024.0;
      const bool measured = rss_small > floor && rss_large > floor;
      // Streaming: a file with ~100x the events may not need 10% more memory.
      targets.push_back(fmt::format(
          "TARGET report {} -j {} memory bounded by threads, not events: peak RSS {:.1f} MiB ({} "
          "events) vs {:.1f} MiB ({} events) -> {}",
          fmt, jobs, rss_small, small.events(), rss_large, large.events(),
          measured ? verdict(rss_small > 0 && rss_large <= rss_small * 1.10)
                   : "NOT MEASURED (at what a fork of the benchmark copies)"));
    }
    targets.push_back(
        fmt::format("TARGET report {} >= 10x faster than trace-cmd report --profile: "
                    "{:.1f}x -> {}",
                    fmt, speedup, verdict(speedup >= 10)));
    targets.push_back(fmt::format("TARGET report {} -j 2 >= 1.7x faster than -j 1: {:.2f}x -> {}",
                                  fmt, scaling, verdict(scaling >= 1.7)));
  }
  for (const auto& [bench_name, fmt_name] :
       {std::pair{"Synthetic", "v6"}, std::pair{"SyntheticV7", "v7+zstd"}}) {
    const std::string base = fmt::format("BM_{}ReportProcess/jobs:", bench_name);
    const double j1_s = m(base + "1", "real_time_s");
    const double j2_s = m(base + "2", "real_time_s");
    const double tc_s = m(fmt::format("BM_{}TraceCmdProfile", bench_name), "real_time_s");
    const double events = static_cast<double>(bench::SyntheticFile::kEvents);
    std::printf("-- synthetic file of 64 CPUs (%.0f M events, %s) --\n", events / 1e6, fmt_name);
    const double scaling = compare(j1_s, j2_s, tc_s, events).first;
    for (int jobs = 1; jobs <= 2; ++jobs) {
      const std::string name = base + std::to_string(jobs);
      const double rss = m(name, "peak_rss_kb"), floor = m(name, "rss_floor_kb");
      // At what a fork of the benchmark copies the peak was not measured (bench_util.h).
      row(fmt::format("peak RSS -j {}", jobs), rss > floor ? rss / 1024.0 : -1, "MiB");
    }
    targets.push_back(fmt::format(
        "TARGET report on the 64-CPU {} file grows with workers (-j 1 -> -j 2, at least 10 %): "
        "{:.2f}x -> {}",
        fmt_name, scaling, verdict(scaling >= 1.10)));
  }
  {
    const double events = static_cast<double>(ManyFormats().events());
    std::printf("-- small file with every syscall event (record -e syscalls, %.0f events) --\n",
                events);
    compare(m("BM_ManyFormatsReportProcess/jobs:1", "real_time_s"),
            m("BM_ManyFormatsReportProcess/jobs:2", "real_time_s"),
            m("BM_ManyFormatsTraceCmdProfile", "real_time_s"), events);
  }
  const double plain_s = m("BM_ReportProcess/large:1/v7:0/jobs:1", "real_time_s");
  for (int proto = 0; proto <= 1; ++proto) {
    const std::string name = std::string("BM_Timeline/proto:") + (proto ? "1" : "0");
    const double timeline_s = m(name, "real_time_s");
    std::printf("-- report --timeline, %s (v6 file) --\n",
                proto ? "Perfetto protobuf (.pftrace)" : "JSON");
    row("timeline size", m(name, "bytes") / 1048576.0, "MiB");
    row("  = bytes per traced event", m(name, "bytes_per_event"), "B/event");
    row("cstool report --timeline (process)", timeline_s, "s");
    row("  = events/s", timeline_s > 0 ? large.events() / timeline_s / 1e6 : -1, "M events/s");
    row("  time added by the timeline", timeline_s > 0 && plain_s > 0 ? timeline_s - plain_s : -1,
        "s");
  }
  const double proto_bpe = m("BM_Timeline/proto:1", "bytes_per_event");
  targets.push_back(
      fmt::format("TARGET report --timeline .pftrace <= 60 B/event: {:.1f} B/event -> {}",
                  proto_bpe, verdict(proto_bpe > 0 && proto_bpe <= 60)));
  for (int jsonl = 0; jsonl <= 1; ++jsonl) {
    const std::string name = jsonl ? "BM_Export/jsonl:1" : "BM_Export/jsonl:0";
    const double s = m(name, "real_time_s");
    std::printf("-- report --format %s (v6 file, into a new %s) --\n", jsonl ? "jsonl" : "sqlite",
                jsonl ? "directory" : "database");
    row("rows written (all tables)", m(name, "rows") / 1e6, "M rows");
    row("output size", m(name, "bytes") / 1048576.0, "MiB");
    row("cstool report --format (process)", s, "s");
    row("  = rows/s", s > 0 ? m(name, "rows") / s / 1e6 : -1, "M rows/s");
    row("  = events/s", s > 0 ? large.events() / s / 1e6 : -1, "M events/s");
    const double cpu = m(name, "cpu_s");
    row("  CPU time (user + sys)", cpu, "s");
    row("  = rows per CPU second", cpu > 0 ? m(name, "rows") / cpu / 1e6 : -1, "M rows/s");
  }
  std::printf("TARGET report decode+analysis >= 25 M events/s: %.1f M events/s -> %s\n",
              analyze / 1e6, verdict(analyze >= 25e6));
  for (const std::string& t : targets) std::printf("%s\n", t.c_str());
}

}  // namespace
}  // namespace cstool

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  cstool::RegisterComparedFiles();
  cstool::Large();  // record before timing anything
  cstool::Small();
  cstool::ManyFormats();
  cstool::Synthetic64();
  cstool::bench::CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  cstool::PrintSummary(reporter);
  benchmark::Shutdown();
  return 0;
}
