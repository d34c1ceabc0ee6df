// K-way merge of per-CPU record streams into one stream ordered by (ts, cpu).
// Records of one CPU keep their buffer order; a loss marker precedes the first record
// after its gap because it carries that record's timestamp and comes first in its
// stream. Two streams (the common case) use a plain two-way merge; up to kLinearMax
// streams find the smallest head by a linear scan and then drain that stream until
// another head would come first (one compare per record); more streams use a heap.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "format/trace_file_reader.h"

namespace cstool {

class RecordMerger {
 public:
  explicit RecordMerger(std::vector<std::unique_ptr<CpuRecordStream>> streams);

  // Calls fn(const RawRecord&) for every record of every stream in (ts, cpu) order.
  template <typename Fn>
  void Run(Fn&& fn);

 private:
  struct Cursor {
    const RawRecord* cur = nullptr;
    const RawRecord* end = nullptr;
    CpuRecordStream* stream = nullptr;
  };
  static bool Before(const RawRecord& a, const RawRecord& b) {
    return a.ts < b.ts || (a.ts == b.ts && a.cpu < b.cpu);
  }
  // Loads the next batch; false when the stream is exhausted.
  static bool Refill(Cursor& c) {
    std::span<const RawRecord> b = c.stream->NextBatch();
    c.cur = b.data();
    c.end = b.data() + b.size();
    return !b.empty();
  }
  template <typename Fn>
  static void Drain(Cursor& c, Fn& fn) {
    do {
      for (; c.cur != c.end; ++c.cur) fn(*c.cur);
    } while (Refill(c));
  }

  template <typename Fn>
  void RunTwo(Fn& fn);
  template <typename Fn>
  void RunLinear(Fn& fn);
  template <typename Fn>
  void RunHeap(Fn& fn);

  std::vector<std::unique_ptr<CpuRecordStream>> streams_;
  std::vector<Cursor> cursors_;
  static constexpr size_t kLinearMax = 8;
};

template <typename Fn>
void RecordMerger::Run(Fn&& fn) {
  cursors_.clear();
  for (auto& s : streams_) {
    Cursor c;
    c.stream = s.get();
    if (Refill(c)) cursors_.push_back(c);
  }
  if (cursors_.empty()) return;
  if (cursors_.size() == 1)
    Drain(cursors_[0], fn);
  else if (cursors_.size() == 2)
    RunTwo(fn);
  else if (cursors_.size() <= kLinearMax)
    RunLinear(fn);
  else
    RunHeap(fn);
}

template <typename Fn>
void RecordMerger::RunTwo(Fn& fn) {
  Cursor a = cursors_[0];
  Cursor b = cursors_[1];
  for (;;) {
    if (Before(*b.cur, *a.cur)) {
      fn(*b.cur);
      if (++b.cur == b.end && !Refill(b)) return Drain(a, fn);
    } else {
      fn(*a.cur);
      if (++a.cur == a.end && !Refill(a)) return Drain(b, fn);
    }
  }
}

template <typename Fn>
void RecordMerger::RunLinear(Fn& fn) {
  std::vector<Cursor*> live;
  for (auto& c : cursors_) live.push_back(&c);
  while (live.size() > 1) {
    // Smallest head and the runner-up.
    size_t best = 0;
    for (size_t i = 1; i < live.size(); ++i)
      if (Before(*live[i]->cur, *live[best]->cur)) best = i;
    const RawRecord* bound = nullptr;
    for (size_t i = 0; i < live.size(); ++i) {
      if (i == best) continue;
      if (bound == nullptr || Before(*live[i]->cur, *bound)) bound = live[i]->cur;
    }
    Cursor& c = *live[best];
    if (bound == nullptr) break;  // cannot happen with two or more live streams
    const int64_t bts = bound->ts;
    const int32_t bcpu = bound->cpu;
    for (;;) {
      const RawRecord& r = *c.cur;
      if (r.ts > bts || (r.ts == bts && r.cpu > bcpu)) break;
      fn(r);
      if (++c.cur == c.end && !Refill(c)) {
        live.erase(live.begin() + static_cast<ptrdiff_t>(best));
        break;
      }
    }
  }
  if (live.size() == 1) Drain(*live[0], fn);
}

template <typename Fn>
void RecordMerger::RunHeap(Fn& fn) {
  // Min-heap of the streams by head record, each entry carrying its head's key (no
  // pointer chase per compare). The smallest stays at the root while it drains up to its
  // children's heads, and then sinks once: one sift-down per change of CPU, not a pop and
  // a push (with many CPUs interleaved, a change comes at about every record).
  struct Entry {
    int64_t ts;
    int32_t cpu;
    Cursor* cursor;
    bool operator<(const Entry& o) const { return ts < o.ts || (ts == o.ts && cpu < o.cpu); }
  };
  std::vector<Entry> heap;
  for (auto& c : cursors_) heap.push_back({c.cur->ts, c.cur->cpu, &c});
  std::make_heap(heap.begin(), heap.end(), [](const Entry& a, const Entry& b) { return b < a; });
  size_t n = heap.size();
  while (n > 0) {
    Cursor& c = *heap[0].cursor;
    Entry bound{INT64_MAX, INT32_MAX, nullptr};
    if (n > 1) bound = heap[1];
    if (n > 2 && heap[2] < bound) bound = heap[2];
    for (;;) {
      const RawRecord& r = *c.cur;
      if (r.ts > bound.ts || (r.ts == bound.ts && r.cpu > bound.cpu)) {
        heap[0].ts = r.ts;
        heap[0].cpu = r.cpu;
        break;
      }
      fn(r);
      if (++c.cur == c.end && !Refill(c)) {
        heap[0] = heap[--n];
        break;
      }
    }
    // Sift the root down.
    const Entry top = heap[0];
    size_t i = 0;
    for (;;) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && heap[child + 1] < heap[child]) ++child;
      if (!(heap[child] < top)) break;
      heap[i] = heap[child];
      i = child;
    }
    if (n > 0) heap[i] = top;
  }
}

}  // namespace cstool
