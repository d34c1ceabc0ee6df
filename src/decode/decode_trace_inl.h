// DecodeTrace's loop as a template over the sink type (for callers that have a concrete
// sink); include only where it is instantiated.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "decode/decode_trace.h"
#include "decode/event_decoder.h"
#include "decode/event_decoder_inl.h"
#include "decode/merge.h"
#include "model/anomalies.h"

namespace cstool {

// The records of another buffer's CPU stream, numbered `offset` CPUs above the top
// buffer's so that the merge keeps them apart (copied: that buffer is small).
class OffsetCpuStream final : public CpuRecordStream {
 public:
  OffsetCpuStream(std::unique_ptr<CpuRecordStream> inner, int32_t offset)
      : inner_(std::move(inner)), offset_(offset) {}
  int cpu() const override { return inner_->cpu() + offset_; }
  std::span<const RawRecord> NextBatch() override {
    const std::span<const RawRecord> batch = inner_->NextBatch();
    records_.assign(batch.begin(), batch.end());
    for (RawRecord& r : records_) r.cpu += offset_;
    return records_;
  }

 private:
  std::unique_ptr<CpuRecordStream> inner_;
  int32_t offset_;
  std::vector<RawRecord> records_;
};

// Hands the unfiltered run-time buffer's increments on as such; its other records (none
// when cstool recorded it) are dropped.
template <typename Sink>
class UnfilteredRuntimeSink final : public EventSink {
 public:
  explicit UnfilteredRuntimeSink(Sink& sink) : sink_(sink) {}
  void PushSchedStatRuntime(const SchedStatRuntime& e) override { sink_.PushUnfilteredRuntime(e); }

 private:
  Sink& sink_;
};

// DecodeTrace for a sink whose type is known here: its Push calls are direct (inlined
// when final), which the state machine's hot loop needs; EventSink calls are virtual.
template <typename Sink>
inline DecodeStats DecodeTraceTo(TraceFileReader& reader, EventDecoder& decoder, Sink& sink,
                                 const DecodeOptions& options) {
  const int cpus = reader.cpus();
  std::vector<std::unique_ptr<CpuRecordStream>> streams;
  streams.reserve(static_cast<size_t>(cpus));
  for (int cpu = 0; cpu < cpus; ++cpu) streams.push_back(reader.OpenCpu(cpu));
  if (TraceFileReader* other = options.unfiltered_runtime)
    for (int cpu = 0; cpu < other->cpus(); ++cpu)
      streams.push_back(std::make_unique<OffsetCpuStream>(other->OpenCpu(cpu), cpus));
  RecordMerger merger(std::move(streams));
  UnfilteredRuntimeSink<Sink> unfiltered_sink(sink);

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
    if (r.cpu >= cpus) [[unlikely]] {  // the unfiltered run-time buffer's
      RawRecord own = r;
      own.cpu -= cpus;
      if (own.is_loss()) {
        st.unfiltered_runtime_lost += own.lost > 0 ? static_cast<uint64_t>(own.lost) : 1;
      } else {
        ++st.unfiltered_runtime_events;
        if (decode) decoder.DecodeTo(own, unfiltered_sink);
      }
      return;
    }
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
