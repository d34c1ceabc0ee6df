// The events each CPU lost, as a report counts them: one loss can show in the pages'
// headers, as gaps of unknown size, and in the kernel's overrun and drop counters saved
// at the recording's end; the largest of them is the CPU's count.
#pragma once

#include <cstdint>
#include <map>

#include "decode/decode_trace.h"
#include "format/trace_file_reader.h"

namespace cstool {

// Per CPU of `reader`'s file (every one listed, even at 0), from the pass that counted
// `stats`. A gap of unknown size counts as one event; `lower_bound` (if given) is set
// when some CPU's count rests on the pages alone while such gaps are in the file (no
// kernel count at the end covers them: a recovered recording), so that it is only a
// lower bound.
std::map<int32_t, uint64_t> LostEventsPerCpu(const DecodeStats& stats,
                                             const TraceFileReader& reader,
                                             bool* lower_bound = nullptr);

}  // namespace cstool
