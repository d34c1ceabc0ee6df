// report -j N: which threads read, decompress, decode and analyse.
#pragma once

#include <cstdint>

#include "format/trace_file_reader.h"

namespace cstool {

// How report -j N spends its threads. The serial work is the analysis (and a merge);
// reading, decompressing and decoding are per CPU. Measured on 2 vCPUs (4.3M-event
// ping-pong on one CPU, -j 1 = 1.00): pages in place, a decoding thread 0.68 and reading
// ahead 0.95; zstd chunks, reading ahead 0.67 and a decoding thread 0.80 (the
// decompression then stays with the decoding), both together 1.1 (three busy threads on
// two cores). Since a CPU's chunks can be decompressed by several threads at once
// (format/page_prefetch.h), 2 jobs on zstd chunks are a decoding thread that decompresses
// beside an analysing thread that decompresses whenever it would wait for a batch: both
// busy, the v7+zstd ping-pong's -j 2 about 12 % faster than with a read-ahead worker
// (medians of 12 alternated runs, 191.5 against 219.9 ms; -j 1 272-276). Pages in place
// are not read ahead at all (the reader's choice, format/fast_trace_file.cc). Where the CPUs' data splits evenly, decoding shares
// (DecodeTraceInGroups: each reads, decompresses and decodes its own CPUs) take over
// from 3 jobs on, and for compressed data from 2: on the synthetic 64-CPU zstd file,
// read-ahead leaves the decoding and the merge on the calling thread beside the state
// machine, two shares only the state machine and the merge of two (wall, medians of 9:
// 0.77 against 0.61 s; -j 1 0.82).
struct JobPlan {
  bool decode_thread = false;
  int reading = 1;          // ReaderOptions::jobs of the thread that reads
  int decoding_shares = 1;  // above 1: DecodeTraceInGroups
  // The analysing thread reads ahead while it waits for the decoding thread
  // (TraceFileReader::ReadAheadOnCallers).
  bool analysis_reads_ahead = false;
};

// The plan for `jobs` threads on the file `reader` reads (opened, not yet read).
JobPlan PlanJobs(int jobs, const TraceFileReader& reader);

// Below these bytes of CPU data, a second thread's start and hand-over cost more than it
// saves. Measured on 2 vCPUs (ping-pong recordings, `report` -j 1 against -j 2, medians
// of 15-21): pages in place 0.9 MB 17.9 against 21.5 ms, 7.2 MB 26.2 against 28.1,
// 21 MB 37.8 against 35.2; zstd chunks 0.49 MB 30.0 against 29.9, 1.35 MB 45.3 against
// 41.4 (each compressed byte is about 13 in pages, and its decompression can move).
constexpr uint64_t kOneThreadPagesBytes = 12 << 20;
constexpr uint64_t kOneThreadCompressedBytes = 512 << 10;

// The threads for a report when -j is not given, with `usable_cpus` to run on: one for
// a file whose CPU data is below the thresholds (as the reader counts it: compressed when
// it is), all of them otherwise and when the reader does not know the sizes.
int DefaultJobs(const TraceFileReader& reader, int usable_cpus,
                uint64_t one_thread_pages = kOneThreadPagesBytes,
                uint64_t one_thread_compressed = kOneThreadCompressedBytes);

}  // namespace cstool
