// Reading ahead on worker threads (ReaderOptions::jobs, report -j) changes nothing that is
// read: on a synthetic 64-CPU file as trace-cmd's zstd chunks (v7, decompressed ahead by
// the workers) and in place (v6, which the decoding thread reads itself whatever the
// jobs), every record comes in the same order with the same bytes, losses included,
// whatever the number of workers; a reader that stops early leaves no worker behind.
#include "format/page_prefetch.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "decode/merge.h"
#include "format/trace_file_reader.h"
#include "tests/support/read_ahead_helper.h"
#include "tests/support/synthetic_trace.h"

namespace cstool {
namespace {

const std::string kEvents = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/formats/events";

// Every record as read: time, CPU, loss count and a hash of its bytes.
struct Seen {
  int64_t ts;
  int32_t cpu;
  int64_t lost;
  uint64_t hash;
  bool operator==(const Seen&) const = default;
};

// `helped`: a second thread reads ahead (ReadAheadOnce) all the while, as report -j 2's
// analysing thread does.
std::vector<Seen> ReadAll(const std::string& path, int jobs, bool helped = false) {
  auto reader = OpenTraceFile(path, {ReaderBackend::kFast, "", false, jobs});
  testing::ReadAheadHelper helper(helped ? reader.get() : nullptr);
  std::vector<std::unique_ptr<CpuRecordStream>> streams;
  streams.reserve(static_cast<size_t>(reader->cpus()));
  for (int cpu = 0; cpu < reader->cpus(); ++cpu) streams.push_back(reader->OpenCpu(cpu));
  RecordMerger merger(std::move(streams));
  std::vector<Seen> seen;
  merger.Run([&](const RawRecord& r) {
    uint64_t h = 1469598103934665603ull;
    for (uint32_t i = 0; i < r.size; ++i) h = (h ^ r.data[i]) * 1099511628211ull;
    seen.push_back({r.ts, r.cpu, r.lost, h});
  });
  return seen;
}

class PagePrefetch : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string base =
        (std::filesystem::temp_directory_path() / ("cstool_prefetch_" + std::to_string(::getpid())))
            .string();
    v6_ = base + ".dat";
    v7_ = base + ".v7.dat";
    // 64 CPUs, each with its own rhythm; CPU 5 loses events twice.
    SyntheticTrace t(kEvents, 64);
    const int sw = t.AddEvent("sched", "sched_switch");
    const int se = t.AddEvent("raw_syscalls", "sys_enter");
    for (int i = 0; i < 3000; ++i) {
      for (int cpu = 0; cpu < 64; ++cpu) {
        const uint64_t ts = 1'000'000 + uint64_t(i) * 1000 + uint64_t(cpu) * (7 + cpu % 5);
        if (cpu == 5 && (i == 700 || i == 2100)) t.MarkLost(cpu, i == 700 ? 12 : -1);
        if ((i + cpu) % 3 == 0)
          t.Append(cpu, ts,
                   t.NewRecord(sw, 100 + cpu)
                       .SetString("prev_comm", "a")
                       .Set("prev_pid", 100 + cpu)
                       .Set("prev_state", 1)
                       .SetString("next_comm", "b")
                       .Set("next_pid", 1000 + i));
        else
          t.Append(cpu, ts, t.NewRecord(se, 100 + cpu).Set("id", i % 300));
      }
    }
    t.Write(v6_);
    if (!ConvertToV7Zstd(v6_, v7_)) v7_.clear();
    // Nearly all on one CPU (a ping-pong pinned to it): many chunks in one CPU's queue,
    // which the reader, a worker and a helper may decompress at once.
    SyntheticTrace busy(kEvents, 2);
    const int busy_se = busy.AddEvent("raw_syscalls", "sys_enter");
    for (int i = 0; i < 100000; ++i) {
      const int cpu = i % 1000 == 0 ? 1 : 0;
      if (cpu == 0 && i == 50001) busy.MarkLost(0, 7);
      busy.Append(cpu, 1'000'000 + uint64_t(i) * 100,
                  busy.NewRecord(busy_se, 200 + cpu).Set("id", i % 300));
    }
    const std::string busy_v6 = base + ".busy.dat";
    one_busy_v7_ = base + ".busy.v7.dat";
    busy.Write(busy_v6);
    if (!ConvertToV7Zstd(busy_v6, one_busy_v7_)) one_busy_v7_.clear();
    std::filesystem::remove(busy_v6);
  }
  static void TearDownTestSuite() {
    std::filesystem::remove(v6_);
    if (!v7_.empty()) std::filesystem::remove(v7_);
    if (!one_busy_v7_.empty()) std::filesystem::remove(one_busy_v7_);
  }
  static inline std::string v6_;
  static inline std::string v7_;
  static inline std::string one_busy_v7_;
};

TEST_F(PagePrefetch, SameRecordsInTheSameOrderWithAnyNumberOfWorkers) {
  for (const std::string* path : {&v6_, &v7_}) {
    if (path->empty()) {
      ADD_FAILURE() << "trace-cmd convert failed: install trace-cmd (make deps)";
      continue;
    }
    SCOPED_TRACE(*path);
    const std::vector<Seen> serial = ReadAll(*path, 1);
    ASSERT_EQ(serial.size(), 64u * 3000u + 2u);  // and two loss markers
    size_t losses = 0;
    for (const Seen& s : serial) losses += s.hash == 1469598103934665603ull;
    EXPECT_EQ(losses, 2u);
    for (int jobs : {2, 3, 9, 65}) {
      SCOPED_TRACE(jobs);
      EXPECT_TRUE(ReadAll(*path, jobs) == serial);
    }
    for (int jobs : {1, 2}) {
      SCOPED_TRACE(fmt::format("{} and a helper", jobs));
      EXPECT_TRUE(ReadAll(*path, jobs, /*helped=*/true) == serial);
    }
  }
}

TEST_F(PagePrefetch, ChunksOfOneCpuDecompressedAtOnceComeInOrder) {
  ASSERT_FALSE(one_busy_v7_.empty()) << "trace-cmd convert failed: install trace-cmd (make deps)";
  const std::vector<Seen> serial = ReadAll(one_busy_v7_, 1);
  ASSERT_EQ(serial.size(), 100000u + 1u);  // and a loss marker
  std::vector<int64_t> losses;
  for (const Seen& s : serial)
    if (s.lost != 0) losses.push_back(s.lost);
  EXPECT_EQ(losses, std::vector<int64_t>{7});
  for (const auto& [jobs, helped] : {std::pair{2, false}, {1, true}, {2, true}, {3, true}}) {
    SCOPED_TRACE(fmt::format("jobs {} helped {}", jobs, helped));
    for (int round = 0; round < 5; ++round)  // the threads meet differently each time
      EXPECT_TRUE(ReadAll(one_busy_v7_, jobs, helped) == serial);
  }
}

TEST_F(PagePrefetch, AReaderThatStopsEarlyLeavesNoWorkerBehind) {
  for (const std::string* path : {&v6_, &v7_}) {
    if (path->empty()) continue;
    auto reader = OpenTraceFile(*path, {ReaderBackend::kFast, "", false, 3});
    // Take one batch of a few CPUs, then drop everything while the workers read ahead.
    for (int cpu : {0, 17, 63}) {
      auto stream = reader->OpenCpu(cpu);
      EXPECT_FALSE(stream->NextBatch().empty());
    }
    auto kept = reader->OpenCpu(1);
    EXPECT_FALSE(kept->NextBatch().empty());
    kept.reset();
    reader.reset();  // joins the workers
  }
}

}  // namespace
}  // namespace cstool
