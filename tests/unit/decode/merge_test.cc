#include "decode/merge.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>

namespace cstool {
namespace {

// A stream over fixed records, handed out `batch` at a time.
class VectorStream : public CpuRecordStream {
 public:
  VectorStream(int cpu, std::vector<RawRecord> recs, size_t batch)
      : cpu_(cpu), recs_(std::move(recs)), batch_(batch) {}
  int cpu() const override { return cpu_; }
  std::span<const RawRecord> NextBatch() override {
    const size_t n = std::min(batch_, recs_.size() - pos_);
    std::span<const RawRecord> out(recs_.data() + pos_, n);
    pos_ += n;
    return out;
  }

 private:
  int cpu_;
  std::vector<RawRecord> recs_;
  size_t batch_;
  size_t pos_ = 0;
};

const uint8_t kData[1] = {0};

RawRecord Rec(int cpu, int64_t ts, uint32_t tag) { return RawRecord{ts, kData, tag, cpu, 0}; }
RawRecord Loss(int cpu, int64_t ts, int64_t n) { return RawRecord{ts, nullptr, 0, cpu, n}; }

std::vector<std::string> Merge(std::vector<std::vector<RawRecord>> per_cpu, size_t batch) {
  std::vector<std::unique_ptr<CpuRecordStream>> streams;
  for (size_t i = 0; i < per_cpu.size(); ++i)
    streams.push_back(std::make_unique<VectorStream>(static_cast<int>(i), per_cpu[i], batch));
  RecordMerger m(std::move(streams));
  std::vector<std::string> out;
  m.Run([&](const RawRecord& r) {
    out.push_back(r.is_loss() ? "L" + std::to_string(r.cpu) + "@" + std::to_string(r.ts)
                              : std::to_string(r.cpu) + "@" + std::to_string(r.ts) + "#" +
                                    std::to_string(r.size));
  });
  return out;
}

TEST(RecordMerger, OrdersByTimestampThenCpu) {
  for (size_t batch : {1, 2, 100}) {
    auto out = Merge({{Rec(0, 1, 0), Rec(0, 3, 1), Rec(0, 5, 2), Rec(0, 5, 3)},
                      {Rec(1, 2, 0), Rec(1, 3, 1), Rec(1, 5, 2), Rec(1, 6, 3)}},
                     batch);
    EXPECT_EQ(out, (std::vector<std::string>{"0@1#0", "1@2#0", "0@3#1", "1@3#1", "0@5#2", "0@5#3",
                                             "1@5#2", "1@6#3"}))
        << "batch " << batch;
  }
}

TEST(RecordMerger, LossMarkerPrecedesFirstRecordAfterGap) {
  auto out = Merge({{Rec(0, 3, 0), Rec(0, 9, 1)}, {Rec(1, 1, 0), Loss(1, 3, 5), Rec(1, 3, 1)}}, 1);
  EXPECT_EQ(out, (std::vector<std::string>{"1@1#0", "0@3#0", "L1@3", "1@3#1", "0@9#1"}));
  // A loss at the same ts on a lower CPU comes before a higher CPU's record.
  out = Merge({{Loss(0, 4, -1), Rec(0, 4, 0)}, {Rec(1, 4, 0)}}, 1);
  EXPECT_EQ(out, (std::vector<std::string>{"L0@4", "0@4#0", "1@4#0"}));
}

TEST(RecordMerger, EmptyAndSingleStreams) {
  EXPECT_TRUE(Merge({}, 4).empty());
  EXPECT_TRUE(Merge({{}, {}}, 4).empty());
  EXPECT_EQ(Merge({{}, {Rec(1, 2, 0)}, {}}, 4), (std::vector<std::string>{"1@2#0"}));
}

TEST(RecordMerger, KeepsPerCpuOrderWhenTimeGoesBackwards) {
  auto out = Merge({{Rec(0, 10, 0), Rec(0, 5, 1), Rec(0, 20, 2)}, {Rec(1, 7, 0)}}, 1);
  EXPECT_EQ(out, (std::vector<std::string>{"1@7#0", "0@10#0", "0@5#1", "0@20#2"}));
}

// What a merge of in-order streams must give: all records by (ts, cpu), each CPU's in its
// own order (a stable sort), in Merge's text.
std::vector<std::string> SortedOrder(const std::vector<std::vector<RawRecord>>& per_cpu) {
  std::vector<RawRecord> all;
  for (const auto& records : per_cpu) all.insert(all.end(), records.begin(), records.end());
  std::stable_sort(all.begin(), all.end(), [](const RawRecord& a, const RawRecord& b) {
    return a.ts < b.ts || (a.ts == b.ts && a.cpu < b.cpu);
  });
  std::vector<std::string> out;
  for (const auto& r : all)
    out.push_back(std::to_string(r.cpu) + "@" + std::to_string(r.ts) + "#" +
                  std::to_string(r.size));
  return out;
}

// Three or more CPUs take the tournament tree (a power of two or not); every path must
// produce the sorted, stable order.
TEST(RecordMerger, ManyStreamsMatchSortedOrder) {
  for (int ncpu : {3, 8, 9, 17, 64, 65}) {
    std::mt19937_64 rng(static_cast<uint64_t>(ncpu));
    std::vector<std::vector<RawRecord>> per_cpu(static_cast<size_t>(ncpu));
    for (int cpu = 0; cpu < ncpu; ++cpu) {
      int64_t ts = 0;
      for (uint32_t i = 0; i < 500; ++i) {
        ts += static_cast<int64_t>(rng() % 4);  // many ties
        per_cpu[static_cast<size_t>(cpu)].push_back(Rec(cpu, ts, i));
      }
    }
    EXPECT_EQ(Merge(per_cpu, 7), SortedOrder(per_cpu)) << ncpu << " CPUs";
  }
}

// Streams that end at different times, some at once: the tree's leaves empty one by one
// (and the padding leaves never play).
TEST(RecordMerger, StreamsOfDifferentLengthsMatchSortedOrder) {
  for (int ncpu : {3, 5, 12, 33}) {
    std::mt19937_64 rng(static_cast<uint64_t>(ncpu) * 13);
    std::vector<std::vector<RawRecord>> per_cpu(static_cast<size_t>(ncpu));
    for (int cpu = 0; cpu < ncpu; ++cpu) {
      const uint32_t n = cpu % 4 == 1 ? 0 : static_cast<uint32_t>(rng() % 300);
      int64_t ts = static_cast<int64_t>(rng() % 1000);
      for (uint32_t i = 0; i < n; ++i) {
        ts += static_cast<int64_t>(rng() % 50);  // runs of one CPU, and ties
        per_cpu[static_cast<size_t>(cpu)].push_back(Rec(cpu, ts, i));
      }
    }
    for (size_t batch : {1, 16})
      EXPECT_EQ(Merge(per_cpu, batch), SortedOrder(per_cpu)) << ncpu << " CPUs, batch " << batch;
  }
}

// Times of either sign and at the extremes (a damaged file's): the tree's keys order them
// as numbers (its unsigned keys flip the sign bit).
TEST(RecordMerger, NegativeAndExtremeTimestampsMergeInOrder) {
  const std::vector<int64_t> times = {
      INT64_MIN, INT64_MIN + 1, -1'000'000'000'000'000'000, -5, 0, 7, INT64_MAX - 1, INT64_MAX};
  for (int ncpu : {3, 5}) {
    std::mt19937_64 rng(static_cast<uint64_t>(ncpu) * 31);
    std::vector<std::vector<RawRecord>> per_cpu(static_cast<size_t>(ncpu));
    for (int cpu = 0; cpu < ncpu; ++cpu) {
      std::vector<int64_t> ts;
      for (int i = 0; i < 12; ++i) ts.push_back(times[rng() % times.size()]);
      std::sort(ts.begin(), ts.end());
      for (uint32_t i = 0; i < ts.size(); ++i)
        per_cpu[static_cast<size_t>(cpu)].push_back(Rec(cpu, ts[i], i));
    }
    EXPECT_EQ(Merge(per_cpu, 3), SortedOrder(per_cpu)) << ncpu << " CPUs";
  }
}

// A damaged file's stream may go back in time: every path still emits the smallest head
// at each step (per-CPU order kept), as a plain scan of the heads does.
TEST(RecordMerger, TimeGoingBackwardsMergesAsTheSmallestHeadFirst) {
  for (int ncpu : {2, 5, 9, 64}) {
    std::mt19937_64 rng(static_cast<uint64_t>(ncpu) * 7);
    std::vector<std::vector<RawRecord>> per_cpu(static_cast<size_t>(ncpu));
    for (int cpu = 0; cpu < ncpu; ++cpu)
      for (uint32_t i = 0; i < 200; ++i)
        per_cpu[static_cast<size_t>(cpu)].push_back(
            Rec(cpu, static_cast<int64_t>(rng() % 1000), i));  // any order
    std::vector<size_t> pos(per_cpu.size(), 0);
    std::vector<std::string> want;
    for (;;) {
      int best = -1;
      for (size_t c = 0; c < per_cpu.size(); ++c) {
        if (pos[c] == per_cpu[c].size()) continue;
        const RawRecord& r = per_cpu[c][pos[c]];
        if (best < 0 ||
            r.ts < per_cpu[static_cast<size_t>(best)][pos[static_cast<size_t>(best)]].ts)
          best = static_cast<int>(c);
      }
      if (best < 0) break;
      const RawRecord& r = per_cpu[static_cast<size_t>(best)][pos[static_cast<size_t>(best)]++];
      want.push_back(std::to_string(r.cpu) + "@" + std::to_string(r.ts) + "#" +
                     std::to_string(r.size));
    }
    EXPECT_EQ(Merge(per_cpu, 3), want) << ncpu << " CPUs";
  }
}

}  // namespace
}  // namespace cstool
