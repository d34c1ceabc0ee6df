// DecodeTrace's loop as a template over the sink type (for callers that have a concrete
// sink); include only where it is instantiated.
#pragma once

#include <exception>
#include <memory>
#include <span>
#include <thread>
#include <type_traits>
#include <vector>

#include "decode/decode_trace.h"
#include "decode/event_batch.h"
#include "decode/event_batch_queue.h"
#include "decode/event_decoder.h"
#include "decode/event_decoder_inl.h"
#include "decode/merge.h"
#include "model/anomalies.h"

namespace cstool {

// The unfiltered run-time buffer's records in time order, handed out between the top
// buffer's records: a pull merge of its own, so that the top buffer's merge keeps its
// fast path and the buffer costs a compare per record of the top one.
class UnfilteredRuntimeFeed {
 public:
  explicit UnfilteredRuntimeFeed(TraceFileReader* reader) {
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
  // Moves `c` to its next record, if any; false when the stream is done.
  bool Settle(Cursor& c) {
    for (;;) {
      if (c.at < c.batch.size()) return true;
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

  std::vector<Cursor> cursors_;
  int64_t next_ts_ = INT64_MAX;
  size_t next_ = 0;
};

// Hands the unfiltered run-time buffer's increments, wakelist flushes and moves on as such;
// its other records (none when cstool recorded it) are dropped.
template <typename Sink>
class UnfilteredRuntimeSink final : public EventSink {
 public:
  explicit UnfilteredRuntimeSink(Sink& sink) : sink_(sink) {}
  void PushSchedStatRuntime(const SchedStatRuntime& e) override { sink_.PushUnfilteredRuntime(e); }
  void PushCsdFunctionEntry(const CsdFunctionEntry& e, int /*type_id*/) override {
    sink_.PushUnfilteredWakelistFlush(e);
  }
  void PushSchedMigrateTask(const SchedMigrateTask& e) override {
    sink_.PushUnfilteredMigrateTask(e);
  }

 private:
  Sink& sink_;
};

// Decodes the records of `streams` (some or all of the file's CPUs), merged in (ts, cpu)
// order, into `sink`, with the unfiltered run-time buffer's records between them when
// `unfiltered_runtime` is set; counts into `tally` (made for the file's CPUs).
// Direct Push calls for a sink whose type is known here (inlined when final), which the
// state machine's hot loop needs; EventSink calls are virtual.
template <typename Sink>
void DecodeStreamsTo(std::vector<std::unique_ptr<CpuRecordStream>> streams,
                     TraceFileReader* unfiltered_runtime, EventDecoder& decoder, Sink& sink,
                     bool decode, DecodeTally& tally) {
  RecordMerger merger(std::move(streams));
  UnfilteredRuntimeFeed unfiltered(unfiltered_runtime);
  UnfilteredRuntimeSink<Sink> unfiltered_sink(sink);
  DecodeStats& st = tally.stats;
  // Batches keep the place of a record that made no call, for a merge of batches to put
  // the others where one merge of the records would (decode/decode_in_groups_inl.h).
  constexpr bool kKeepsPlaces = std::is_same_v<Sink, EventBatchWriter>;

  // Hot loop: raw pointers and locals only.
  uint64_t* events_per_cpu = st.events_per_cpu.data();
  uint64_t* type_counts = tally.per_type.data();
  const size_t ntypes = tally.per_type.size();
  // The span of the data records' times: the earliest and latest, which are the first and
  // last merged unless a CPU's clock went backwards (then the same however many threads
  // decoded).
  int64_t first_ts = INT64_MAX, final_ts = INT64_MIN;
  auto push_unfiltered = [&](const RawRecord& r) {
    if (r.is_loss()) {
      st.unfiltered_runtime_lost += r.lost > 0 ? static_cast<uint64_t>(r.lost) : 1;
      if (decode) sink.PushUnfilteredLost(LostEvents{r.ts, r.cpu, r.lost});
    } else {
      // (Its own increments of an unfollowed task tell only what ran: not counted among
      // those done for another.)
      if (decoder.KindOf(decoder.TypeOf(r)) != EventKind::kSchedStatRuntime)
        ++st.unfiltered_other_events;
      else if (!decoder.IsSelfAccountedRuntime(r))
        ++st.unfiltered_runtime_events;
      if (!decode) return;
      if constexpr (kKeepsPlaces) {
        const uint64_t before = sink.entries();
        decoder.Decode(r, unfiltered_sink);
        if (sink.entries() == before) sink.PutNoCall({r.ts, r.cpu}, true);
      } else {
        decoder.Decode(r, unfiltered_sink);  // (no second DecodeTo inlined here)
      }
    }
  };
  // A type id beyond the formats, or none (too short: no call was made). Out of line,
  // as the unfiltered buffer's records: the merge loop stays as it was measured.
  auto other_type = [&](const RawRecord& r, int type) __attribute__((noinline)) {
    ++tally.per_type_other;
    if constexpr (kKeepsPlaces)
      if (type < 0 && decode) sink.PutNoCall({r.ts, r.cpu}, false);
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
    if (r.ts < first_ts) [[unlikely]]
      first_ts = r.ts;
    if (r.ts > final_ts) final_ts = r.ts;
    ++events_per_cpu[cpu];
    const int type = decode ? decoder.DecodeTo(r, sink) : decoder.TypeOf(r);
    if (static_cast<size_t>(type) < ntypes) [[likely]]
      ++type_counts[type];
    else
      other_type(r, type);
  });
  unfiltered.DrainBefore(INT64_MAX, push_unfiltered);
  if (first_ts <= final_ts) tally.NoteSpan(first_ts, final_ts);
}

// DecodeTrace for a sink whose type is known here: its Push calls are direct.
template <typename Sink>
inline DecodeStats DecodeTraceTo(TraceFileReader& reader, EventDecoder& decoder, Sink& sink,
                                 const DecodeOptions& options) {
  const int cpus = reader.cpus();
  std::vector<std::unique_ptr<CpuRecordStream>> streams;
  streams.reserve(static_cast<size_t>(cpus));
  for (int cpu = 0; cpu < cpus; ++cpu) streams.push_back(reader.OpenCpu(cpu));
  DecodeTally tally(cpus, decoder);
  DecodeStreamsTo(std::move(streams), options.unfiltered_runtime, decoder, sink, options.decode,
                  tally);
  return FinishDecodeStats(std::move(tally), decoder);
}

// Batches of about a thousand events, a few ahead: measured on a 4.3M-event ping-pong
// recording, 8-16 KiB batches cost a third more (hand-overs), and 128 KiB ones with 8 or
// more ahead outgrow the caches.
inline constexpr size_t kDecodedBatchBytes = 64 * 1024;
inline constexpr size_t kDecodedBatchesAhead = 4;

// The body of a decoding thread: `decode(writer)` decodes into batches that go to `queue`;
// the events decoded before an error go first, then the error, which the consumer rethrows
// after them. A consumer that cancelled ends it quietly.
template <typename Decode>
void DecodeIntoQueue(EventBatchQueue& queue, Decode&& decode) {
  std::exception_ptr error;
  try {
    EventBatchWriter writer(kDecodedBatchBytes,
                            [&](EventBatch&& full) { return queue.Push(std::move(full)); });
    try {
      decode(writer);
    } catch (const EventBatchQueueCancelled&) {
      throw;
    } catch (...) {
      error = std::current_exception();
    }
    writer.Flush();
  } catch (const EventBatchQueueCancelled&) {
  } catch (...) {
    error = std::current_exception();
  }
  queue.Close(error);
}

// DecodeTraceTo with the decoding on a thread of its own: that thread reads, merges and
// decodes into batches (EventBatchWriter) and the caller's thread replays them into
// `sink`, so the two halves of the work overlap. `sink` sees the same calls in the same
// order as with DecodeTraceTo, and an error of the file reaches the caller after the
// events decoded before it, as there.
//
//   decoding thread:  read -> merge -> decode -> batch ->|queue|
//   caller's thread:                                              |queue|-> replay -> sink
//                     (and, while nothing waits in the queue, reader.ReadAheadOnce())
template <typename Sink>
DecodeStats DecodeTraceOnThread(TraceFileReader& reader, EventDecoder& decoder, Sink& sink,
                                const DecodeOptions& options) {
  EventBatchQueue queue(kDecodedBatchesAhead);
  DecodeStats stats;
  std::thread decoding([&] {
    DecodeIntoQueue(queue, [&](EventBatchWriter& writer) {
      stats = DecodeTraceTo(reader, decoder, writer, options);
    });
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
  for (;;) {
    // Rather than wait, read ahead what the decoding thread will need (compressed data's
    // decompression, when the reader was asked to: ReadAheadOnCallers).
    while (queue.PopWouldWait() && reader.ReadAheadOnce()) {
    }
    if (!queue.Pop(batch)) break;
    ReplayEvents(batch, sink);
  }
  if (std::exception_ptr error = queue.error()) std::rethrow_exception(error);
  return stats;
}

}  // namespace cstool
