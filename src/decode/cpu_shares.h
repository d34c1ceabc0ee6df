// Which CPUs each decoding thread of DecodeTraceInGroups reads.
#pragma once

#include <cstdint>
#include <vector>

#include "format/trace_file_reader.h"

namespace cstool {

struct CpuShares {
  std::vector<std::vector<int>> cpus;  // per share, in ascending order
  std::vector<uint64_t> bytes;         // per share: its CPUs' data (0 when unknown)
  // The largest share's part of the file's CPU data (its bytes over all bytes; by CPUs
  // when the reader does not know the bytes).
  double largest_fraction = 1.0;
};

// Whether `reader`'s CPUs can be decoded in shares at all: more than one, and streams
// that may be read on different threads at once.
bool CpusCanBeShared(const TraceFileReader& reader);

// The CPUs in `shares` shares (at most one per CPU) of about equal data: largest CPU
// first, each to the share with the fewest bytes so far (at a tie, the fewest CPUs, then
// the first), so that the threads get about equal work. With no sizes known this is
// CPU n to share n mod shares.
CpuShares ShareCpus(const TraceFileReader& reader, int shares);

}  // namespace cstool
