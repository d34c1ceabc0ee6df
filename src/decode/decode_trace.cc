#include "decode/decode_trace.h"

#include <algorithm>

#include "decode/cpu_shares.h"
#include "decode/decode_in_groups_inl.h"
#include "decode/decode_trace_inl.h"
#include "decode/event_decoder.h"
#include "model/anomalies.h"

namespace cstool {

DecodeTally::DecodeTally(int cpus, const EventDecoder& decoder)
    : per_type(static_cast<size_t>(decoder.max_type_id() + 1), 0) {
  stats.events_per_cpu.assign(static_cast<size_t>(cpus), 0);
  stats.lost_per_cpu.assign(static_cast<size_t>(cpus), 0);
  stats.lost_gaps_per_cpu.assign(static_cast<size_t>(cpus), 0);
}

void DecodeTally::NoteSpan(int64_t first, int64_t last) {
  stats.first_ts = seen ? std::min(stats.first_ts, first) : first;
  stats.last_ts = seen ? std::max(stats.last_ts, last) : last;
  seen = true;
}

void DecodeTally::Add(const DecodeTally& other) {
  auto add = [](std::vector<uint64_t>& to, const std::vector<uint64_t>& from) {
    for (size_t i = 0; i < to.size() && i < from.size(); ++i) to[i] += from[i];
  };
  add(stats.events_per_cpu, other.stats.events_per_cpu);
  add(stats.lost_per_cpu, other.stats.lost_per_cpu);
  add(stats.lost_gaps_per_cpu, other.stats.lost_gaps_per_cpu);
  add(per_type, other.per_type);
  per_type_other += other.per_type_other;
  stats.lost_gaps_unknown += other.stats.lost_gaps_unknown;
  stats.unfiltered_runtime_events += other.stats.unfiltered_runtime_events;
  stats.unfiltered_other_events += other.stats.unfiltered_other_events;
  stats.unfiltered_runtime_lost += other.stats.unfiltered_runtime_lost;
  if (other.seen) NoteSpan(other.stats.first_ts, other.stats.last_ts);
}

DecodeStats FinishDecodeStats(DecodeTally tally, const EventDecoder& decoder) {
  DecodeStats st = std::move(tally.stats);
  st.events = 0;
  st.lost_events = 0;
  for (size_t cpu = 0; cpu < st.events_per_cpu.size(); ++cpu) {
    st.events += st.events_per_cpu[cpu];
    st.lost_events += st.lost_per_cpu[cpu];
  }
  for (size_t t = 0; t < tally.per_type.size(); ++t)
    if (tally.per_type[t] != 0)
      st.events_per_type[decoder.EventName(static_cast<int>(t))] += tally.per_type[t];
  if (tally.per_type_other != 0) st.events_per_type["unknown"] += tally.per_type_other;
  const DecoderCounters& dc = decoder.counters();
  if (dc.short_records != 0)
    st.anomalies[std::string(NameOf(Anomaly::kShortRecord))] = dc.short_records;
  if (dc.bad_strings != 0) st.anomalies[std::string(NameOf(Anomaly::kBadString))] = dc.bad_strings;
  if (dc.unknown_type_ids != 0)
    st.anomalies[std::string(NameOf(Anomaly::kUnknownEventType))] = dc.unknown_type_ids;
  st.missing_events = decoder.missing_events();
  return st;
}

DecodeStats DecodeTrace(TraceFileReader& reader, EventSink& sink, const DecodeOptions& options) {
  EventDecoder decoder(reader.tep());
  return DecodeTrace(reader, decoder, sink, options);
}

DecodeStats DecodeTrace(TraceFileReader& reader, EventDecoder& decoder, EventSink& sink,
                        const DecodeOptions& options) {
  // Without decoding no record leaves an entry to merge by.
  if (options.decoding_threads > 1 && options.decode && CpusCanBeShared(reader))
    return DecodeTraceInGroups(reader, decoder, sink, options, options.decoding_threads);
  return DecodeTraceTo(reader, decoder, sink, options);
}

}  // namespace cstool
