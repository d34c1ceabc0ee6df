// report -j N: which threads read, decompress, decode and analyse.
#pragma once

#include "format/trace_file_reader.h"

namespace cstool {

// How report -j N spends its threads. The serial work is the analysis (and a merge);
// reading, decompressing and decoding are per CPU. Measured on 2 vCPUs (4.3M-event
// ping-pong on one CPU, -j 1 = 1.00): pages in place, a decoding thread 0.68 and reading
// ahead 0.95; zstd chunks, reading ahead 0.67 and a decoding thread 0.80 (the
// decompression then stays with the decoding), both together 1.1 (three busy threads on
// two cores). Pages in place are not read ahead at all (the reader's choice,
// format/fast_trace_file.cc). Where the CPUs' data splits evenly, decoding shares
// (DecodeTraceInGroups: each reads, decompresses and decodes its own CPUs) take over
// from 3 jobs on, and for compressed data from 2: on the synthetic 64-CPU zstd file,
// read-ahead leaves the decoding and the merge on the calling thread beside the state
// machine, two shares only the state machine and the merge of two (wall, medians of 9:
// 0.77 against 0.61 s; -j 1 0.82).
struct JobPlan {
  bool decode_thread = false;
  int reading = 1;          // ReaderOptions::jobs of the thread that reads
  int decoding_shares = 1;  // above 1: DecodeTraceInGroups
};

// The plan for `jobs` threads on the file `reader` reads (opened, not yet read).
JobPlan PlanJobs(int jobs, const TraceFileReader& reader);

}  // namespace cstool
