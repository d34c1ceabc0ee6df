// DecodeTraceTo with the per-CPU work spread over threads (report -j N, on a file whose
// CPUs can be read at once; pipeline/job_plan says when): each decoding thread reads,
// merges and decodes a share of the CPUs (ShareCpus: about equal bytes; the lightest
// share also takes the unfiltered run-time buffer) into batches of its own, and the
// caller's thread merges the shares' batches in time order and replays them into
// `sink`. Reading, decompressing, decoding and most of the merge of a 64-CPU file thus
// scale with the threads; the merge of the shares and the sink are the serial part.
//
//   decoding thread 0:  share 0's cpus -> merge -> decode -> batch ->|queue 0|--.
//   decoding thread 1:  share 1's cpus -> merge -> decode -> batch ->|queue 1|--+-> merge
//   ...                                                                          |  -> replay
//   decoding thread G-1                                          ->|queue G-1|---'  -> sink
//
// Why the sink sees the calls of DecodeTraceTo, in the same order. One merge of all CPUs
// (RecordMerger) takes the smallest (ts, cpu) among the CPUs' next records each time;
// the merge here takes the smallest among the shares' next entries, each share having
// taken the smallest among its own CPUs: the same record every time, even where a CPU's
// clock goes backwards, as long as every record leaves an entry (a record that makes no
// call leaves a kNoCall one). An unfiltered record goes before the first record of a
// later time, that is after every record of its own time (EntryOrder's rank). The
// shares never tie: their CPUs differ, and one share has the unfiltered records.
// An error of the file: one merge meets it when a CPU's next batch is needed, right
// after that CPU's last record; a share meets it at the same record, and its entries
// end there, so the error is rethrown as soon as the merge here needs that share's next
// entry. An error before any record (a CPU's first batch) is rethrown only once every
// share has begun, the one of the lowest CPU, as one merge would (it reads the CPUs'
// first batches in order; the unfiltered buffer's before them).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <span>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "base/cpu_list.h"
#include "decode/cpu_shares.h"
#include "decode/decode_trace_inl.h"

namespace cstool {

// Where an entry of a batch goes in the merge of the shares: every event struct starts
// with the record's time and CPU (EventCommon, or LostEvents' and RecordPlace's own).
struct EntryOrder {
  int64_t ts = 0;
  int32_t rank = 0;  // 1 for the unfiltered buffer's records: after the others of their time
  int32_t cpu = 0;

  static EntryOrder Of(const std::byte* entry) {
    static_assert(offsetof(EventCommon, ts) == 0 && offsetof(EventCommon, cpu) == 8);
    static_assert(offsetof(LostEvents, ts) == 0 && offsetof(LostEvents, cpu) == 8);
    static_assert(offsetof(RecordPlace, ts) == 0 && offsetof(RecordPlace, cpu) == 8);
    EventBatch::Header h;
    std::memcpy(&h, entry, sizeof h);
    const std::byte* body = entry + sizeof h;
    EntryOrder o;
    std::memcpy(&o.ts, body, sizeof o.ts);
    std::memcpy(&o.cpu, body + 8, sizeof o.cpu);
    o.rank = h.tag == EventTag::kUnfilteredRuntime || h.tag == EventTag::kUnfilteredLost ||
                     h.tag == EventTag::kUnfilteredWakelistFlush ||
                     h.tag == EventTag::kUnfilteredMigrateTask ||
                     h.tag == EventTag::kNoCallUnfiltered
                 ? 1
                 : 0;
    return o;
  }
  bool operator<(const EntryOrder& b) const {
    return std::tie(ts, rank, cpu) < std::tie(b.ts, b.rank, b.cpu);
  }
};

// A CPU's stream that notes its CPU when reading its next batch fails: which CPU's first
// batch failed decides which error one merge would have met first.
class FailureNotingStream final : public CpuRecordStream {
 public:
  FailureNotingStream(std::unique_ptr<CpuRecordStream> inner, int* failed_cpu)
      : inner_(std::move(inner)), failed_cpu_(failed_cpu) {}
  int cpu() const override { return inner_->cpu(); }
  std::span<const RawRecord> NextBatch() override {
    try {
      return inner_->NextBatch();
    } catch (...) {
      if (*failed_cpu_ < 0) *failed_cpu_ = inner_->cpu();
      throw;
    }
  }

 private:
  std::unique_ptr<CpuRecordStream> inner_;
  int* failed_cpu_;
};

// One share's batches as they arrive, an entry at a time.
class ShareCursor {
 public:
  explicit ShareCursor(EventBatchQueue& queue) : queue_(&queue) {}

  enum class State { kEntries, kDone, kFailed };
  // Moves to the next batch once the current one is replayed.
  State Refill() {
    if (!queue_->Pop(batch_)) return queue_->error() ? State::kFailed : State::kDone;
    at_ = batch_.data();
    end_ = at_ + batch_.size();
    return State::kEntries;
  }
  std::exception_ptr error() const { return queue_->error(); }
  EntryOrder order() const { return EntryOrder::Of(at_); }

  // Replays the next entry (the smallest of all shares': the caller chose this share),
  // then the entries that come before `limit`; the hot loop of the merge, where the time
  // alone decides but at a tie. Returns the share's state after them.
  template <typename Sink>
  State ReplayBefore(const EntryOrder& limit, Sink& sink) {
    at_ = ReplayEntry(at_, sink);
    for (;;) {
      const std::byte* at = at_;
      const std::byte* const end = end_;
      while (at != end) {
        int64_t ts;
        std::memcpy(&ts, at + sizeof(EventBatch::Header), sizeof ts);
        if (ts > limit.ts || (ts == limit.ts && !(EntryOrder::Of(at) < limit))) {
          at_ = at;
          return State::kEntries;
        }
        at = ReplayEntry(at, sink);
      }
      at_ = at;
      if (State s = Refill(); s != State::kEntries) return s;
    }
  }
  // Replays the rest of the share.
  template <typename Sink>
  State ReplayAll(Sink& sink) {
    for (;;) {
      for (const std::byte* at = at_; at != end_;) at = ReplayEntry(at, sink);
      at_ = end_;
      if (State s = Refill(); s != State::kEntries) return s;
    }
  }

 private:
  EventBatchQueue* queue_;
  EventBatch batch_;
  const std::byte* at_ = nullptr;
  const std::byte* end_ = nullptr;
};

// What one decoding thread owns: its CPUs' streams, a decoder and tally of its own, and
// the queue it fills.
struct DecodingShare {
  std::vector<std::unique_ptr<CpuRecordStream>> streams;
  int failed_cpu = -1;  // the CPU whose batch failed to read, as its stream noted
  std::unique_ptr<EventDecoder> own_decoder;
  EventDecoder* decoder = nullptr;
  DecodeTally tally;
  std::unique_ptr<EventBatchQueue> queue;

  DecodingShare(int cpus, const EventDecoder& counting) : tally(cpus, counting) {}
};

// The shares are built here, on one thread; each is then used by its decoding thread
// alone. The first share decodes with the caller's decoder; each other builds its own
// here, as building one looks formats up in the file's tep, which is not for two
// threads at once.
inline std::vector<std::unique_ptr<DecodingShare>> OpenShares(TraceFileReader& reader,
                                                              EventDecoder& decoder,
                                                              const CpuShares& plan,
                                                              bool own_cores) {
  std::vector<std::unique_ptr<DecodingShare>> shares;
  for (const std::vector<int>& cpus : plan.cpus) {
    auto share = std::make_unique<DecodingShare>(reader.cpus(), decoder);
    for (int cpu : cpus)
      share->streams.push_back(
          std::make_unique<FailureNotingStream>(reader.OpenCpu(cpu), &share->failed_cpu));
    if (shares.empty()) {
      share->decoder = &decoder;
    } else {
      share->own_decoder = std::make_unique<EventDecoder>(reader.tep());
      share->decoder = share->own_decoder.get();
    }
    share->queue = std::make_unique<EventBatchQueue>(kDecodedBatchesAhead, own_cores);
    shares.push_back(std::move(share));
  }
  return shares;
}

// Every share's first batch, or its error: of the errors met before any record, the one
// that one merge would have met first is rethrown. Returns the shares with entries.
inline std::vector<ShareCursor*> BeginShares(
    const std::vector<std::unique_ptr<DecodingShare>>& shares, std::vector<ShareCursor>& cursors) {
  std::vector<ShareCursor*> live;
  std::exception_ptr first_error;
  EntryOrder first_error_order;
  for (size_t s = 0; s < shares.size(); ++s) {
    const ShareCursor::State state = cursors[s].Refill();
    if (state == ShareCursor::State::kEntries) live.push_back(&cursors[s]);
    if (state != ShareCursor::State::kFailed) continue;
    const int cpu = shares[s]->failed_cpu;
    const EntryOrder o =
        cpu >= 0 ? EntryOrder{INT64_MIN, 0, cpu} : EntryOrder{INT64_MIN, INT32_MIN, INT32_MIN};
    if (!first_error || o < first_error_order) {
      first_error = cursors[s].error();
      first_error_order = o;
    }
  }
  if (first_error) std::rethrow_exception(first_error);
  return live;
}

// Replays the live shares' entries into `sink` in merge order, to the end of every
// share; a share's error is rethrown where its entries end.
template <typename Sink>
void MergeShares(std::vector<ShareCursor*> live, Sink& sink) {
  auto ended = [&](ShareCursor& c, ShareCursor::State state) {
    if (state == ShareCursor::State::kFailed) std::rethrow_exception(c.error());
    return state == ShareCursor::State::kDone;
  };
  // The share with the smallest entry replays until another share's entry comes first.
  while (live.size() > 2) {
    size_t best = 0;
    EntryOrder best_order = live[0]->order();
    EntryOrder limit{INT64_MAX, INT32_MAX, INT32_MAX};
    for (size_t i = 1; i < live.size(); ++i) {
      const EntryOrder o = live[i]->order();
      if (o < best_order) {
        limit = best_order;
        best_order = o;
        best = i;
      } else if (o < limit) {
        limit = o;
      }
    }
    if (ended(*live[best], live[best]->ReplayBefore(limit, sink)))
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(best));
  }
  // Two shares (the common case, and where more end) take turns with one order computed
  // per turn: the other's next entry has not moved.
  if (live.size() == 2) {
    ShareCursor* first = live[0];
    ShareCursor* second = live[1];
    EntryOrder first_order = first->order();
    EntryOrder second_order = second->order();
    for (;;) {
      if (second_order < first_order) {
        std::swap(first, second);
        std::swap(first_order, second_order);
      }
      if (ended(*first, first->ReplayBefore(second_order, sink))) {
        live = {second};
        break;
      }
      first_order = first->order();
    }
  }
  if (!live.empty()) ended(*live[0], live[0]->ReplayAll(sink));
}

template <typename Sink>
DecodeStats DecodeTraceInGroups(TraceFileReader& reader, EventDecoder& decoder, Sink& sink,
                                const DecodeOptions& options, int threads) {
  const CpuShares plan = ShareCpus(reader, threads);
  const size_t feed_share = static_cast<size_t>(
      std::min_element(plan.bytes.begin(), plan.bytes.end()) - plan.bytes.begin());
  // Waiting without sleeping pays when every thread has a core of its own (as for
  // DecodeTraceOnThread); with more threads than cores it takes the time of the thread waited
  // for (decode_bench, 64 CPUs, 2 shares on 2 vCPUs, over 1 thread in the same run: 0.99x
  // spinning, 1.18x without; measured when batches were evicted where that paid).
  const bool own_cores = static_cast<int>(plan.cpus.size()) + 1 <= UsableCpuCount();
  std::vector<std::unique_ptr<DecodingShare>> shares = OpenShares(reader, decoder, plan, own_cores);

  // Whatever the sink (or starting a thread) throws, every decoding thread is stopped and
  // joined before the reader, decoders and queues it uses go.
  struct Joiner {
    const std::vector<std::unique_ptr<DecodingShare>>& shares;
    std::vector<std::thread> threads;
    void Join() {
      for (auto& share : shares) share->queue->Cancel();
      for (std::thread& t : threads) t.join();
      threads.clear();
    }
    ~Joiner() { Join(); }
  } joiner{shares, {}};
  for (size_t s = 0; s < shares.size(); ++s) {
    DecodingShare& share = *shares[s];
    TraceFileReader* feed = s == feed_share ? options.unfiltered_runtime : nullptr;
    joiner.threads.emplace_back([&share, feed, &options] {
      DecodeIntoQueue(*share.queue, [&](EventBatchWriter& writer) {
        DecodeStreamsTo(std::move(share.streams), feed, *share.decoder, writer, options.decode,
                        share.tally);
      });
    });
  }

  std::vector<ShareCursor> cursors;
  for (auto& share : shares) cursors.emplace_back(*share->queue);
  MergeShares(BeginShares(shares, cursors), sink);
  joiner.Join();

  for (size_t s = 1; s < shares.size(); ++s) {
    decoder.AddCounters(shares[s]->decoder->counters());
    shares[0]->tally.Add(shares[s]->tally);
  }
  return FinishDecodeStats(std::move(shares[0]->tally), decoder);
}

}  // namespace cstool
