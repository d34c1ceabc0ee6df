// DecodeTraceTo with the per-CPU work spread over threads (report -j N, on a file whose
// CPUs can be read at once; pipeline/analyze_trace says when): each decoding thread
// reads, merges and decodes a share of the CPUs (ShareCpus: about equal bytes; the first
// share also takes the unfiltered run-time buffer) into batches of its own, and the caller's thread
// merges the shares' batches in time order and replays them into `sink`. Reading, decompressing,
// decoding and most of the merge of a 64-CPU file thus scale with the threads; the merge of G
// shares and the sink are the serial part.
//
//   decoding thread 0:  share 0's cpus -> merge -> decode -> batch ->|queue 0|--.
//   decoding thread 1:  share 1's cpus -> merge -> decode -> batch ->|queue 1|--+-> merge
//   ...                                                                          |  -> replay
//   decoding thread G-1                                          ->|queue G-1|---'  -> sink
//
// The sink sees the same calls in the same order as with DecodeTraceTo: each share is in
// (ts, cpu) order and the shares' CPUs are disjoint, so merging them by (ts, cpu) gives
// the one order; an unfiltered record goes before the first record of a later time, that
// is after every record of its own time (EntryOrder's rank). The counts are the same, and
// an error of the file reaches the caller after the same events: a share's queue holds
// everything decoded before its error, and the error is rethrown as soon as the merge
// needs that share's next entry, which is where DecodeTraceTo's merge met it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "base/cpu_list.h"
#include "decode/cpu_shares.h"
#include "decode/decode_trace_inl.h"

namespace cstool {

// Where an entry of a batch goes in the merge of the shares: every event struct starts
// with the record's time and CPU (EventCommon, or LostEvents' own two fields).
struct EntryOrder {
  int64_t ts = 0;
  int32_t rank = 0;  // 1 for the unfiltered buffer's records: after the others of their time
  int32_t cpu = 0;

  static EntryOrder Of(const std::byte* entry) {
    static_assert(offsetof(EventCommon, ts) == 0 && offsetof(EventCommon, cpu) == 8);
    static_assert(offsetof(LostEvents, ts) == 0 && offsetof(LostEvents, cpu) == 8);
    EventBatch::Header h;
    std::memcpy(&h, entry, sizeof h);
    const std::byte* body = entry + sizeof h;
    EntryOrder o;
    std::memcpy(&o.ts, body, sizeof o.ts);
    std::memcpy(&o.cpu, body + 8, sizeof o.cpu);
    o.rank = h.tag == EventTag::kUnfilteredRuntime || h.tag == EventTag::kUnfilteredLost ||
                     h.tag == EventTag::kUnfilteredWakelistFlush
                 ? 1
                 : 0;
    return o;
  }
  bool operator<(const EntryOrder& b) const {
    return std::tie(ts, rank, cpu) < std::tie(b.ts, b.rank, b.cpu);
  }
};

// One share's batches as they arrive, an entry at a time.
class ShareCursor {
 public:
  // `evict`: EvictReplayed each batch before it goes back (see EventBatchQueue's `spin`).
  ShareCursor(EventBatchQueue& queue, bool evict) : queue_(&queue), evict_(evict) {}
  // Moves to the next batch once the current one is replayed; false when the share is
  // done. Rethrows the share's error once its last batch is replayed.
  bool Refill() {
    if (evict_ && batch_.size() != 0) EvictReplayed(batch_);
    if (!queue_->Pop(batch_)) {
      if (std::exception_ptr error = queue_->error()) std::rethrow_exception(error);
      return false;
    }
    at_ = batch_.data();
    end_ = at_ + batch_.size();
    return true;
  }
  EntryOrder order() const { return EntryOrder::Of(at_); }
  // Replays entries while they come before `limit`; false when the share is done. The
  // hot loop of the merge: the time alone decides but at a tie.
  template <typename Sink>
  bool ReplayBefore(const EntryOrder& limit, Sink& sink) {
    for (;;) {
      const std::byte* at = at_;
      const std::byte* const end = end_;
      while (at != end) {
        int64_t ts;
        std::memcpy(&ts, at + sizeof(EventBatch::Header), sizeof ts);
        if (ts > limit.ts || (ts == limit.ts && !(EntryOrder::Of(at) < limit))) {
          at_ = at;
          return true;
        }
        at = ReplayEntry(at, sink);
      }
      at_ = at;
      if (!Refill()) return false;
    }
  }
  // Replays the rest of the share.
  template <typename Sink>
  void ReplayAll(Sink& sink) {
    do {
      for (const std::byte* at = at_; at != end_;) at = ReplayEntry(at, sink);
      at_ = end_;
    } while (Refill());
  }

 private:
  EventBatchQueue* queue_;
  bool evict_;
  EventBatch batch_;
  const std::byte* at_ = nullptr;
  const std::byte* end_ = nullptr;
};

template <typename Sink>
DecodeStats DecodeTraceInGroups(TraceFileReader& reader, EventDecoder& decoder, Sink& sink,
                                const DecodeOptions& options, int threads) {
  const int cpus = reader.cpus();
  const CpuShares plan = ShareCpus(reader, threads);
  const size_t shares = plan.cpus.size();
  // The streams are opened here, on one thread; each is then read by its share's alone.
  std::vector<std::vector<std::unique_ptr<CpuRecordStream>>> streams(shares);
  for (size_t s = 0; s < shares; ++s)
    for (int cpu : plan.cpus[s]) streams[s].push_back(reader.OpenCpu(cpu));
  // A decoder counts what it meets: one per share, the caller's for the first. Built here:
  // building one looks formats up in the file's tep, which is not for two threads at once.
  std::vector<std::unique_ptr<EventDecoder>> own_decoders;
  std::vector<EventDecoder*> decoders{&decoder};
  for (size_t s = 1; s < shares; ++s) {
    own_decoders.push_back(std::make_unique<EventDecoder>(reader.tep()));
    decoders.push_back(own_decoders.back().get());
  }
  std::vector<DecodeTally> tallies;
  for (size_t s = 0; s < shares; ++s) tallies.emplace_back(cpus, decoder);
  // Waiting without sleeping, and evicting the batches replayed, pay when every thread has
  // a core of its own (as for DecodeTraceOnThread); with more threads than cores they
  // take the time of the thread waited for (decode_bench, 64 CPUs, 2 shares on 2 vCPUs:
  // 11.4 M events/s with both, 13.4 without spinning, 14.4 with neither).
  const bool own_cores = static_cast<int>(shares) + 1 <= UsableCpuCount();
  std::vector<std::unique_ptr<EventBatchQueue>> queues;
  for (size_t s = 0; s < shares; ++s)
    queues.push_back(std::make_unique<EventBatchQueue>(kDecodedBatchesAhead, own_cores));

  // Whatever the sink (or starting a thread) throws, every decoding thread is stopped and
  // joined before the reader, decoders and queues it uses go.
  struct Joiner {
    std::vector<std::unique_ptr<EventBatchQueue>>& queues;
    std::vector<std::thread> threads;
    void Join() {
      for (auto& q : queues) q->Cancel();
      for (std::thread& t : threads) t.join();
      threads.clear();
    }
    ~Joiner() { Join(); }
  } joiner{queues, {}};
  for (size_t s = 0; s < shares; ++s) {
    joiner.threads.emplace_back([&, s] {
      DecodeIntoQueue(*queues[s], [&](EventBatchWriter& writer) {
        DecodeStreamsTo(std::move(streams[s]), s == 0 ? options.unfiltered_runtime : nullptr,
                        *decoders[s], writer, options.decode, tallies[s]);
      });
    });
  }

  std::vector<ShareCursor> cursors;
  for (auto& q : queues) cursors.emplace_back(*q, own_cores);
  std::vector<ShareCursor*> live;
  for (ShareCursor& c : cursors)
    if (c.Refill()) live.push_back(&c);
  // The share with the earliest entry replays until another share's entry comes first
  // (shares never tie: their CPUs differ, and only the first has unfiltered records).
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
    if (!live[best]->ReplayBefore(limit, sink))
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(best));
  }
  // Two shares (the common case, and where more end) take turns with one order computed
  // per turn: the other's head has not moved.
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
      if (!first->ReplayBefore(second_order, sink)) {
        live = {second};
        break;
      }
      first_order = first->order();
    }
  }
  if (!live.empty()) live[0]->ReplayAll(sink);
  joiner.Join();

  for (size_t s = 1; s < shares; ++s) {
    decoder.AddCounters(decoders[s]->counters());
    tallies[0].Add(tallies[s]);
  }
  return FinishDecodeStats(std::move(tallies[0]), decoder);
}

}  // namespace cstool
