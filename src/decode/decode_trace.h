// The one-call API of `cstool report` and `msa`: read a trace file, merge its CPUs by
// time, decode every record into an EventSink, and count what was seen.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "format/trace_file_reader.h"
#include "model/events.h"

namespace cstool {

class EventDecoder;

struct DecodeStats {
  uint64_t events = 0;                              // data records decoded
  std::vector<uint64_t> events_per_cpu;             // index = cpu
  std::map<std::string, uint64_t> events_per_type;  // "sched:sched_switch" -> count
  std::vector<uint64_t> lost_per_cpu;               // sum of known lost counts, index = cpu
  std::vector<uint64_t> lost_gaps_per_cpu;          // number of gaps (known or unknown size)
  uint64_t lost_events = 0;                         // sum of lost_per_cpu
  uint64_t lost_gaps_unknown = 0;                   // gaps whose size the kernel did not record
  // Of DecodeOptions::unfiltered_runtime: its increments done in another task's context
  // than the accounted one's (not those a task did in its own, which tell what ran), its
  // other records (the wakelist flushes), and the events its ring buffer lost (counted in
  // none of the above).
  uint64_t unfiltered_runtime_events = 0;
  uint64_t unfiltered_other_events = 0;
  uint64_t unfiltered_runtime_lost = 0;
  // The earliest and the latest data record's time (0 if none): the first and last
  // merged, unless a CPU's clock went backwards.
  int64_t first_ts = 0;
  int64_t last_ts = 0;
  // Named decoding anomaly counters (model/anomalies.h): "short_record", "bad_string",
  // "unknown_event_type" (a CPU's time going backwards is the state machine's
  // time_backwards). Zero counters are omitted.
  std::map<std::string, uint64_t> anomalies;
  std::vector<std::string> missing_events;  // known events the file has no format for
};

struct DecodeOptions {
  // Only merge, do not decode (the sink sees only PushLostEvents); for benchmarks.
  bool decode = true;
  // The file's unfiltered run-time buffer (a reader of tracefile::kUnfilteredRuntimeBuffer
  // on the same file), merged in time order: its increments go to
  // EventSink::PushUnfilteredRuntime.
  TraceFileReader* unfiltered_runtime = nullptr;
  // Threads that read and decode, each a share of the CPUs' streams merged in time order,
  // while the calling thread merges their shares into the sink (DecodeTraceInGroups). 1:
  // the calling thread does everything. Used only for a reader whose CPUs can be read at
  // once (TraceFileReader::ReadsCpusInParallel), and only when decoding.
  int decoding_threads = 1;
};

// What a pass over some of a file's CPUs counted, before FinishDecodeStats names it; the
// tallies of passes over disjoint CPUs add up (Add).
struct DecodeTally {
  DecodeTally(int cpus, const EventDecoder& decoder);
  void NoteSpan(int64_t first, int64_t last);
  void Add(const DecodeTally& other);

  DecodeStats stats;               // per-CPU counts, losses, unfiltered counts, span
  std::vector<uint64_t> per_type;  // index = type id
  uint64_t per_type_other = 0;     // records of a type id beyond the formats
  bool seen = false;               // whether stats' span holds a data record's time
};

// The totals and names of `tally`, with `decoder`'s anomaly counters and missing events.
DecodeStats FinishDecodeStats(DecodeTally tally, const EventDecoder& decoder);

// Decodes every record of `reader` into `sink` in (ts, cpu) order, with LostEvents
// before the first record after each gap. Throws cstool::Error on corrupt data.
DecodeStats DecodeTrace(TraceFileReader& reader, EventSink& sink,
                        const DecodeOptions& options = {});

// Same with a caller-owned decoder (to inspect its task-state map, counters...).
DecodeStats DecodeTrace(TraceFileReader& reader, EventDecoder& decoder, EventSink& sink,
                        const DecodeOptions& options = {});

}  // namespace cstool
