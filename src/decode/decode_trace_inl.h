// DecodeTrace's loop as a template over the sink type (for callers that have a concrete
// sink); include only where it is instantiated.
#pragma once

#include <memory>
#include <vector>

#include "decode/decode_trace.h"
#include "decode/event_decoder.h"
#include "decode/event_decoder_inl.h"
#include "decode/merge.h"
#include "model/anomalies.h"

namespace cstool {

// DecodeTrace for a sink whose type is known here: its Push calls are direct (inlined
// when final), which the state machine's hot loop needs; EventSink calls are virtual.
template <typename Sink>
inline DecodeStats DecodeTraceTo(TraceFileReader& reader, EventDecoder& decoder, Sink& sink,
                                 const DecodeOptions& options) {
  const int cpus = reader.cpus();
  std::vector<std::unique_ptr<CpuRecordStream>> streams;
  streams.reserve(static_cast<size_t>(cpus));
  for (int cpu = 0; cpu < cpus; ++cpu) streams.push_back(reader.OpenCpu(cpu));
  RecordMerger merger(std::move(streams));

  DecodeStats st;
  st.events_per_cpu.assign(static_cast<size_t>(cpus), 0);
  st.lost_per_cpu.assign(static_cast<size_t>(cpus), 0);
  st.lost_gaps_per_cpu.assign(static_cast<size_t>(cpus), 0);
  std::vector<uint64_t> per_type(static_cast<size_t>(decoder.max_type_id() + 1), 0);
  uint64_t per_type_other = 0;
  const bool decode = options.decode;

  // Hot loop: raw pointers and locals only.
  uint64_t* events_per_cpu = st.events_per_cpu.data();
  uint64_t* type_counts = per_type.data();
  const size_t ntypes = per_type.size();
  int64_t first_ts = 0, final_ts = 0;
  bool seen = false;
  merger.Run([&](const RawRecord& r) {
    const size_t cpu = static_cast<size_t>(r.cpu);
    if (r.is_loss()) [[unlikely]] {
      LostEvents lost{r.ts, r.cpu, r.lost};
      sink.PushLostEvents(lost);
      ++st.lost_gaps_per_cpu[cpu];
      if (r.lost > 0)
        st.lost_per_cpu[cpu] += static_cast<uint64_t>(r.lost);
      else
        ++st.lost_gaps_unknown;
      return;
    }
    if (!seen) [[unlikely]] {
      first_ts = r.ts;
      seen = true;
    }
    final_ts = r.ts;
    ++events_per_cpu[cpu];
    const int type = decode ? decoder.DecodeTo(r, sink) : decoder.TypeOf(r);
    if (static_cast<size_t>(type) < ntypes) [[likely]]
      ++type_counts[type];
    else
      ++per_type_other;
  });
  st.first_ts = first_ts;
  st.last_ts = final_ts;

  st.events = 0;
  for (int cpu = 0; cpu < cpus; ++cpu) {
    st.events += st.events_per_cpu[static_cast<size_t>(cpu)];
    st.lost_events += st.lost_per_cpu[static_cast<size_t>(cpu)];
  }
  for (size_t t = 0; t < per_type.size(); ++t)
    if (per_type[t] != 0) st.events_per_type[decoder.EventName(static_cast<int>(t))] += per_type[t];
  if (per_type_other != 0) st.events_per_type["unknown"] += per_type_other;
  const DecoderCounters& dc = decoder.counters();
  if (dc.short_records != 0)
    st.anomalies[std::string(NameOf(Anomaly::kShortRecord))] = dc.short_records;
  if (dc.bad_strings != 0) st.anomalies[std::string(NameOf(Anomaly::kBadString))] = dc.bad_strings;
  if (dc.unknown_type_ids != 0)
    st.anomalies[std::string(NameOf(Anomaly::kUnknownEventType))] = dc.unknown_type_ids;
  st.missing_events = decoder.missing_events();
  return st;
}

}  // namespace cstool
