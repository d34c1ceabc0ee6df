// Throughput of the report pipeline's front half on the synthetic 4M-event v6 file
// (bench/synthetic_file.h), with 2 CPUs and with 64 (the same mix of events over 64
// streams: the merge's heap path):
//   (a) BM_ReadMerge        per-CPU page walking + k-way merge, no decoding
//   (b) BM_ReadMergeDecode  the same + decoding every record into a no-op EventSink
//   (c) BM_ReadMergeDecodeV7  (b) on the file converted to v7 with zstd chunks
//       (`trace-cmd convert --file-version 7 --compression zstd`): decompression included
//   (d) BM_LibtracecmdReadMergeDecode  (b) through the libtracecmd backend, for scale
// items_per_second is events/s.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "bench/synthetic_file.h"
#include "decode/decode_trace.h"
#include "decode/event_decoder.h"
#include "decode/merge.h"
#include "format/trace_file_reader.h"

namespace cstool {
namespace {

const bench::SyntheticFile& File(int64_t cpus = 2) {
  static bench::SyntheticFile two(2);
  if (cpus == 2) return two;
  static bench::SyntheticFile many(64);
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
  auto reader = OpenTraceFile(path, {.backend = backend});
  EventDecoder decoder(reader->tep());
  EventSink sink;  // every Push* is a no-op
  uint64_t n = 0;
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    DecodeStats st = DecodeTrace(*reader, decoder, sink, {.decoding_threads = jobs});
    n += st.events;
  }
  state.SetItemsProcessed(static_cast<int64_t>(n));
}

// The v6 and v7 runs over one grid: 2 and 64 CPUs, 1 and 2 jobs (threads reading,
// decompressing and decoding: above 1, each takes a share of the CPUs and this thread
// merges the shares, DecodeOptions::decoding_threads).
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
