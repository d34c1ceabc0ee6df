// Throughput of the report pipeline's front half on a synthetic multi-million-event
// v6 file built from real event formats (tests/support/synthetic_trace.h), with 2 CPUs
// and with 64 (the same events spread over 64 streams: the merge's heap path):
//   (a) BM_ReadMerge        per-CPU page walking + k-way merge, no decoding
//   (b) BM_ReadMergeDecode  the same + decoding every record into a no-op EventSink
//   (c) BM_ReadMergeDecodeV7  (b) on the file converted to v7 with zstd chunks
//       (`trace-cmd convert --file-version 7 --compression zstd`): decompression included
//   (d) BM_LibtracecmdReadMergeDecode  (b) through the libtracecmd backend, for scale
// items_per_second is events/s. Formats come from /sys/kernel/tracing/events when it is
// readable, else from the snapshot in tests/fixtures/formats/events.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "decode/decode_trace.h"
#include "decode/event_decoder.h"
#include "decode/merge.h"
#include "format/trace_file_reader.h"
#include "tests/support/synthetic_trace.h"

namespace cstool {
namespace {

constexpr uint64_t kEvents = 4'000'000;

std::string EventsDir() {
  std::string live = "/sys/kernel/tracing/events";
  if (::access((live + "/sched/sched_switch/format").c_str(), R_OK) == 0) return live;
  return (std::filesystem::path(__FILE__).parent_path().parent_path() /
          "tests/fixtures/formats/events")
      .string();
}

// Builds the benchmark file (and its v7 conversion) once per process; removes both at exit.
class BenchFile {
 public:
  explicit BenchFile(int cpus) {
    const std::string stem =
        (std::filesystem::temp_directory_path() /
         ("cstool_decode_bench_" + std::to_string(::getpid()) + "_" + std::to_string(cpus)))
            .string();
    path_ = stem + ".dat";
    v7_path_ = stem + ".v7.dat";
    SyntheticTrace t(EventsDir(), cpus);
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
    // Per CPU, bursts shaped like a syscall-heavy workload: syscall pairs, wakeup +
    // switch, timer interrupt with its softirq, now and then a fork.
    auto rec = [&](SyntheticTrace::Record r) { return r; };
    const std::vector<std::vector<SyntheticTrace::Record>> bursts = {
        {rec(t.NewRecord(se, 1).Set("id", 0)), rec(t.NewRecord(sx, 1).Set("id", 0).Set("ret", 8))},
        {rec(t.NewRecord(se, 1).Set("id", 1)), rec(t.NewRecord(sx, 1).Set("id", 1).Set("ret", 8))},
        {rec(t.NewRecord(waking, 1).SetString("comm", "worker").Set("pid", 2)),
         rec(t.NewRecord(wakeup, 1).SetString("comm", "worker").Set("pid", 2)),
         rec(t.NewRecord(sw, 1)
                 .SetString("prev_comm", "worker")
                 .Set("prev_pid", 1)
                 .Set("prev_state", 1)
                 .SetString("next_comm", "other")
                 .Set("next_pid", 2))},
        {rec(t.NewRecord(lte, 1).Set("vector", 236)), rec(t.NewRecord(se_irq, 1).Set("vec", 1)),
         rec(t.NewRecord(t.AddEvent("irq", "softirq_exit"), 1).Set("vec", 1)),
         rec(t.NewRecord(ltx, 1).Set("vector", 236)),
         rec(t.NewRecord(sw, 1).SetString("prev_comm", "w").Set("prev_state", 0x100))},
        {rec(t.NewRecord(fork, 1).SetString("parent_comm", "p").SetString("child_comm", "c"))},
    };
    const int weights[] = {40, 20, 25, 14, 1};  // percent
    std::vector<uint64_t> ts(static_cast<size_t>(cpus));
    for (int c = 0; c < cpus; ++c) ts[static_cast<size_t>(c)] = 1'000'000 + 50 * c;
    uint64_t x = 88172645463325252ull;
    uint64_t written = 0;
    while (written < kEvents) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      // The CPU whose clock is behind runs next, so the streams interleave in time.
      const int cpu = static_cast<int>(std::min_element(ts.begin(), ts.end()) - ts.begin());
      int pick = static_cast<int>((x >> 8) % 100), b = 0;
      while (pick >= weights[b]) pick -= weights[b++];
      const int32_t pid = static_cast<int32_t>(100 + ((x >> 20) & 63));
      for (const auto& r : bursts[static_cast<size_t>(b)]) {
        std::vector<uint8_t> bytes(r.bytes().begin(), r.bytes().end());
        std::memcpy(bytes.data() + 4, &pid, 4);  // common_pid
        ts[cpu] += 50 + ((x >> 32) & 511);
        t.Append(cpu, ts[cpu], bytes);
        ++written;
      }
    }
    t.Write(path_);
    const std::string convert = "trace-cmd convert -i " + path_ + " -o " + v7_path_ +
                                " --file-version 7 --compression zstd >/dev/null 2>&1";
    if (std::system(convert.c_str()) != 0) v7_path_.clear();
    ::sync();  // written back before the timed runs, not half a minute into them
  }
  ~BenchFile() {
    std::filesystem::remove(path_);
    if (!v7_path_.empty()) std::filesystem::remove(v7_path_);
  }
  const std::string& path() const { return path_; }
  const std::string& v7_path() const { return v7_path_; }  // empty without trace-cmd

 private:
  std::string path_;
  std::string v7_path_;
};

const BenchFile& File(int64_t cpus = 2) {
  static BenchFile two(2);
  if (cpus == 2) return two;
  static BenchFile many(64);
  return many;
}

void BM_ReadMerge(benchmark::State& state) {
  auto reader = OpenTraceFile(File(state.range(0)).path(), {ReaderBackend::kFast, ""});
  uint64_t n = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    std::vector<std::unique_ptr<CpuRecordStream>> streams;
    streams.reserve(static_cast<size_t>(reader->cpus()));
    for (int cpu = 0; cpu < reader->cpus(); ++cpu) streams.push_back(reader->OpenCpu(cpu));
    RecordMerger merger(std::move(streams));
    uint64_t count = 0;
    int64_t sum = 0;
    merger.Run([&](const RawRecord& r) {
      ++count;
      sum += r.ts;
    });
    benchmark::DoNotOptimize(sum);
    n += count;
  }
  state.SetItemsProcessed(static_cast<int64_t>(n));
}
BENCHMARK(BM_ReadMerge)->ArgName("cpus")->Arg(2)->Arg(64)->Unit(benchmark::kMillisecond);

void ReplayBench(benchmark::State& state, const std::string& path, ReaderBackend backend,
                 int jobs = 1) {
  if (path.empty()) {
    state.SkipWithError("no v7 file (trace-cmd convert failed or is missing)");
    return;
  }
  auto reader = OpenTraceFile(path, {backend, "", false, jobs});
  EventDecoder decoder(reader->tep());
  EventSink sink;  // every Push* is a no-op
  uint64_t n = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    DecodeStats st = DecodeTrace(*reader, decoder, sink);
    n += st.events;
  }
  state.SetItemsProcessed(static_cast<int64_t>(n));
}

// The v6 and v7 runs over one grid: 2 and 64 CPUs, 1 and 2 jobs (threads reading, report
// -j: above 1, the pages are read and decompressed ahead on jobs - 1 workers).
void CpusAndJobs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"cpus", "jobs"})
      ->ArgsProduct({{2, 64}, {1, 2}})
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
}

void BM_ReadMergeDecode(benchmark::State& state) {
  ReplayBench(state, File(state.range(0)).path(), ReaderBackend::kFast,
              static_cast<int>(state.range(1)));
}
BENCHMARK(BM_ReadMergeDecode)->Apply(CpusAndJobs);

void BM_ReadMergeDecodeV7(benchmark::State& state) {
  ReplayBench(state, File(state.range(0)).v7_path(), ReaderBackend::kFast,
              static_cast<int>(state.range(1)));
}
BENCHMARK(BM_ReadMergeDecodeV7)->Apply(CpusAndJobs);

void BM_LibtracecmdReadMergeDecode(benchmark::State& state) {
  ReplayBench(state, File().path(), ReaderBackend::kLibTracecmd);
}
BENCHMARK(BM_LibtracecmdReadMergeDecode)->Unit(benchmark::kMillisecond);

// Decoding alone, over records already in memory (no page walking, no merge).
void BM_DecodeOnly(benchmark::State& state) {
  auto reader = OpenTraceFile(File().path(), {ReaderBackend::kFast, ""});
  std::vector<RawRecord> all;
  auto stream = reader->OpenCpu(0);
  for (auto b = stream->NextBatch(); !b.empty(); b = stream->NextBatch())
    all.insert(all.end(), b.begin(), b.end());
  EventDecoder decoder(reader->tep());
  EventSink sink;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    for (const RawRecord& r : all)
      if (!r.is_loss()) benchmark::DoNotOptimize(decoder.Decode(r, sink));
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * all.size()));
}
BENCHMARK(BM_DecodeOnly)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace cstool

BENCHMARK_MAIN();
