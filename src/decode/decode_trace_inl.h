// DecodeTrace's loop as a template over the sink type (for callers that have a concrete
// sink); include only where it is instantiated.
#pragma once

#include <exception>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "base/cache_lines.h"
#include "decode/decode_trace.h"
#include "decode/event_batch.h"
#include "decode/event_batch_queue.h"
#include "decode/event_decoder.h"
#include "decode/event_decoder_inl.h"
#include "decode/merge.h"
#include "model/anomalies.h"

namespace cstool {

// The unfiltered run-time buffer's records in time order, less those a task accounted in
// its own context (nearly all of them, and of no use), handed out between the top
// buffer's records: a pull merge of its own, so that the top buffer's merge keeps its
// fast path and the buffer costs a compare per record of the top one.
class UnfilteredRuntimeFeed {
 public:
  UnfilteredRuntimeFeed(TraceFileReader* reader, const EventDecoder& decoder) : decoder_(decoder) {
    if (reader == nullptr) return;
    for (int cpu = 0; cpu < reader->cpus(); ++cpu) {
      Cursor c{reader->OpenCpu(cpu), {}, 0};
      if (Settle(c)) cursors_.push_back(std::move(c));
    }
    Pick();
  }
  // The time of the next record; INT64_MAX when there is none.
  int64_t next_ts() const { return next_ts_; }
  // Calls fn(record) for each record before `ts`, in time order. Out of line: the top
  // buffer's loop stays small enough to be inlined into the merge.
  template <typename Fn>
  [[gnu::noinline]] void DrainBefore(int64_t ts, Fn&& fn) {
    while (next_ts_ < ts) {
      Cursor& c = cursors_[next_];
      fn(c.batch[c.at]);
      ++c.at;
      if (!Settle(c)) cursors_.erase(cursors_.begin() + static_cast<std::ptrdiff_t>(next_));
      Pick();
    }
  }

 private:
  struct Cursor {
    std::unique_ptr<CpuRecordStream> stream;
    std::span<const RawRecord> batch;
    size_t at = 0;
  };
  // Moves `c` to its next record worth handing out; false when the stream is done.
  bool Settle(Cursor& c) {
    for (;;) {
      for (; c.at < c.batch.size(); ++c.at)
        if (c.batch[c.at].is_loss() || !decoder_.IsSelfAccountedRuntime(c.batch[c.at])) return true;
      c.batch = c.stream->NextBatch();
      c.at = 0;
      if (c.batch.empty()) return false;
    }
  }
  void Pick() {
    next_ts_ = INT64_MAX;
    for (size_t i = 0; i < cursors_.size(); ++i)
      if (const int64_t ts = cursors_[i].batch[cursors_[i].at].ts; ts < next_ts_) {
        next_ts_ = ts;
        next_ = i;
      }
  }

  const EventDecoder& decoder_;
  std::vector<Cursor> cursors_;
  int64_t next_ts_ = INT64_MAX;
  size_t next_ = 0;
};

// Hands the unfiltered run-time buffer's increments and wakelist flushes on as such; its
// other records (none when cstool recorded it) are dropped.
template <typename Sink>
class UnfilteredRuntimeSink final : public EventSink {
 public:
  explicit UnfilteredRuntimeSink(Sink& sink) : sink_(sink) {}
  void PushSchedStatRuntime(const SchedStatRuntime& e) override { sink_.PushUnfilteredRuntime(e); }
  void PushCsdFunctionEntry(const CsdFunctionEntry& e, int /*type_id*/) override {
    sink_.PushUnfilteredWakelistFlush(e);
  }

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
  RecordMerger merger(std::move(streams));
  UnfilteredRuntimeFeed unfiltered(options.unfiltered_runtime, decoder);
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
  auto push_unfiltered = [&](const RawRecord& r) {
    if (r.is_loss()) {
      st.unfiltered_runtime_lost += r.lost > 0 ? static_cast<uint64_t>(r.lost) : 1;
      if (decode) sink.PushUnfilteredLost(LostEvents{r.ts, r.cpu, r.lost});
    } else {
      ++(decoder.KindOf(decoder.TypeOf(r)) == EventKind::kSchedStatRuntime
             ? st.unfiltered_runtime_events
             : st.unfiltered_other_events);
      if (decode) decoder.Decode(r, unfiltered_sink);  // (no second DecodeTo inlined here)
    }
  };
  // Inlined into the merge (GCC would not, with the unfiltered buffer's branch in it).
  merger.Run([&](const RawRecord& r) __attribute__((always_inline)) {
    if (unfiltered.next_ts() < r.ts) [[unlikely]]
      unfiltered.DrainBefore(r.ts, push_unfiltered);
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
  unfiltered.DrainBefore(INT64_MAX, push_unfiltered);
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

// DecodeTraceTo with the decoding on a thread of its own: that thread reads, merges and
// decodes into batches (EventBatchWriter) and the caller's thread replays them into
// `sink`, so the two halves of the work overlap. `sink` sees the same calls in the same
// order as with DecodeTraceTo, and an error of the file reaches the caller after the
// events decoded before it, as there.
//
//   decoding thread:  read -> merge -> decode -> batch ->|queue|
//   caller's thread:                                    |queue|-> replay -> sink -> evict
template <typename Sink>
DecodeStats DecodeTraceOnThread(TraceFileReader& reader, EventDecoder& decoder, Sink& sink,
                                const DecodeOptions& options) {
  // Batches of about a thousand events, a few ahead: measured on a 4.3M-event ping-pong
  // recording, 8-16 KiB batches cost a third more (hand-overs), and 128 KiB ones with 8
  // or more ahead outgrow the caches.
  constexpr size_t kBatchBytes = 64 * 1024;
  constexpr size_t kBatchesAhead = 4;
  EventBatchQueue queue(kBatchesAhead);
  DecodeStats stats;
  std::thread decoding([&] {
    std::exception_ptr error;
    try {
      EventBatchWriter writer(kBatchBytes,
                              [&queue](EventBatch&& full) { return queue.Push(std::move(full)); });
      try {
        stats = DecodeTraceTo(reader, decoder, writer, options);
      } catch (const EventBatchQueueCancelled&) {
        throw;
      } catch (...) {
        error = std::current_exception();
      }
      writer.Flush();  // the events decoded before an error go first
    } catch (const EventBatchQueueCancelled&) {
    } catch (...) {
      error = std::current_exception();
    }
    queue.Close(error);
  });
  // Whatever the sink throws, the decoding thread is stopped and joined before the
  // reader, decoder and queue it uses go.
  struct Joiner {
    EventBatchQueue& queue;
    std::thread& thread;
    ~Joiner() {
      queue.Cancel();
      thread.join();
    }
  } joiner{queue, decoding};
  EventBatch batch;
  while (queue.Pop(batch)) {
    ReplayEvents(batch, sink);
    // Before the batch goes back to be refilled: see base/cache_lines.h (without this,
    // the two threads took 0.30 s where one alone took 0.19 s).
    EvictCacheLines(batch.data(), batch.size());
  }
  if (std::exception_ptr error = queue.error()) std::rethrow_exception(error);
  return stats;
}

}  // namespace cstool
