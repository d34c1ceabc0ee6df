// K-way merge of per-CPU record streams into one stream ordered by (ts, cpu).
// Records of one CPU keep their buffer order; a loss marker precedes the first record
// after its gap because it carries that record's timestamp and comes first in its
// stream. The merge emits runs: once the smallest head is found, its stream is drained
// until another stream's head would come first, so the common case costs one compare
// per record. Heads are picked by a linear scan for few CPUs and a heap for many.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/trace_file_reader.h"

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
    std::vector<RawRecord> batch;
    CpuRecordStream* stream = nullptr;
  };
  static bool Before(const RawRecord& a, const RawRecord& b) {
    return a.ts < b.ts || (a.ts == b.ts && a.cpu < b.cpu);
  }
  // Loads the next batch; false when the stream is exhausted.
  static bool Refill(Cursor& c) {
    if (!c.stream->NextBatch(c.batch)) {
      c.cur = c.end = nullptr;
      return false;
    }
    c.cur = c.batch.data();
    c.end = c.cur + c.batch.size();
    return true;
  }

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
  cursors_.reserve(streams_.size());
  for (auto& s : streams_) {
    Cursor c;
    c.stream = s.get();
    cursors_.push_back(std::move(c));
  }
  std::vector<Cursor> live;
  for (auto& c : cursors_)
    if (Refill(c)) live.push_back(std::move(c));
  cursors_ = std::move(live);
  if (cursors_.size() <= kLinearMax)
    RunLinear(fn);
  else
    RunHeap(fn);
}

template <typename Fn>
void RecordMerger::RunLinear(Fn& fn) {
  std::vector<Cursor*> live;
  for (auto& c : cursors_) live.push_back(&c);
  while (!live.empty()) {
    if (live.size() == 1) {  // no competitor: drain
      Cursor& c = *live[0];
      do {
        for (; c.cur != c.end; ++c.cur) fn(*c.cur);
      } while (Refill(c));
      return;
    }
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
    const int64_t bts = bound->ts;
    const int32_t bcpu = bound->cpu;
    bool exhausted = false;
    for (;;) {
      const RawRecord& r = *c.cur;
      if (r.ts > bts || (r.ts == bts && r.cpu > bcpu)) break;
      fn(r);
      if (++c.cur == c.end && !Refill(c)) {
        exhausted = true;
        break;
      }
    }
    if (exhausted) live.erase(live.begin() + static_cast<ptrdiff_t>(best));
  }
}

template <typename Fn>
void RecordMerger::RunHeap(Fn& fn) {
  // Min-heap of cursors by head record.
  std::vector<Cursor*> heap;
  for (auto& c : cursors_) heap.push_back(&c);
  auto later = [](const Cursor* a, const Cursor* b) { return Before(*b->cur, *a->cur); };
  std::make_heap(heap.begin(), heap.end(), later);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    Cursor& c = *heap.back();
    heap.pop_back();
    const RawRecord* bound = heap.empty() ? nullptr : heap.front()->cur;
    bool exhausted = false;
    for (;;) {
      const RawRecord& r = *c.cur;
      if (bound != nullptr && (r.ts > bound->ts || (r.ts == bound->ts && r.cpu > bound->cpu)))
        break;
      fn(r);
      if (++c.cur == c.end && !Refill(c)) {
        exhausted = true;
        break;
      }
    }
    if (!exhausted) {
      heap.push_back(&c);
      std::push_heap(heap.begin(), heap.end(), later);
    }
  }
}

}  // namespace cstool
