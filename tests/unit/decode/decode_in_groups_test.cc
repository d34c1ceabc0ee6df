// report -j N can decode the CPUs in shares on threads of their own and merge the shares
// (pipeline/job_plan says when): the sink must see exactly the calls, in the same order,
// and the same counts as when one thread does everything, on every fixture and on a
// file of many CPUs whose records tie in time across CPUs, lose events and include
// records too short to decode; an error of the file must come after the same events (the
// same error when two CPUs are damaged), and a sink's error must stop every decoding
// thread, also one waiting for room in its queue.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/errors.h"
#include "decode/cpu_shares.h"
#include "decode/decode_in_groups_inl.h"
#include "decode/decode_trace_inl.h"
#include "decode/event_decoder.h"
#include "format/trace_file_reader.h"
#include "format/v6_trace_file.h"
#include "tests/support/call_log.h"
#include "tests/support/decode_stats.h"
#include "tests/support/files.h"
#include "tests/support/synthetic_trace.h"

namespace cstool {
namespace {

namespace fs = std::filesystem;
using ::cstool::testing::CallLog;

const std::string kFixtures = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/";

using ::cstool::testing::Decoded;

// shares 1: DecodeTraceTo on this thread.
Decoded Decode(const std::string& path, int shares) {
  return testing::DecodeLogged(path, {}, [&](auto& reader, auto& decoder, auto& log) {
    return shares > 1 ? DecodeTraceInGroups(reader, decoder, log, {}, shares)
                      : DecodeTraceTo(reader, decoder, log, {});
  });
}

void ExpectSameAsOneThread(const std::string& path, std::initializer_list<int> shares) {
  const Decoded one = Decode(path, 1);
  EXPECT_TRUE(one.error.empty()) << one.error;
  EXPECT_GT(one.lines.size(), 300u);
  for (int n : shares) {
    SCOPED_TRACE(path + " shares " + std::to_string(n));
    const Decoded grouped = Decode(path, n);
    EXPECT_EQ(grouped.error, one.error);
    ASSERT_EQ(grouped.lines.size(), one.lines.size());
    EXPECT_EQ(grouped.lines, one.lines);
    testing::ExpectSameDecodeStats(grouped.stats, one.stats);
  }
}

TEST(DecodeInGroups, TheSinkSeesTheSameCallsAndTheCountsAreTheSame) {
  for (const char* fixture :
       {"golden_mutex.dat", "small_v6.dat", "small_v7_none.dat", "small_v7_zstd.dat"})
    ExpectSameAsOneThread(kFixtures + fixture, {2, 3});
}

// `cpus` CPUs whose records often share a timestamp (the merge breaks those ties by
// CPU, across shares too), with losses of known and unknown size and records too short
// to decode (they make no call but keep their place in the order).
std::string WriteManyCpus(const fs::path& path, int cpus, int records) {
  SyntheticTrace t(kFixtures + "formats/events", cpus);
  const int sw = t.AddEvent("sched", "sched_switch");
  const int wk = t.AddEvent("sched", "sched_wakeup");
  const int se = t.AddEvent("raw_syscalls", "sys_enter");
  const std::vector<uint8_t> too_short = {1, 0};
  for (int i = 0; i < records; ++i) {
    const int cpu = (i * 7) % cpus;
    const uint64_t ts = 1000 + static_cast<uint64_t>(i / 3) * 10;  // three records per time
    const int32_t pid = 100 + cpu;
    if (i % 500 == 250) t.MarkLost(cpu, i % 1000 == 250 ? 17 : -1);
    if (i % 97 == 5) {
      t.Append(cpu, ts, too_short);
    } else if (i % 3 == 0) {
      t.Append(cpu, ts,
               t.NewRecord(sw, pid)
                   .SetString("prev_comm", "a")
                   .Set("prev_pid", pid)
                   .Set("prev_state", 1)
                   .SetString("next_comm", "b")
                   .Set("next_pid", pid + 100));
    } else if (i % 3 == 1) {
      t.Append(cpu, ts,
               t.NewRecord(wk, pid).SetString("comm", "c").Set("pid", i).Set("target_cpu", 0));
    } else {
      t.Append(cpu, ts, t.NewRecord(se, pid).Set("id", i % 300));
    }
  }
  t.Write(path.string());
  return path.string();
}

TEST(DecodeInGroups, ManyCpusWithTiesLossesAndShortRecords) {
  const fs::path dir = fs::temp_directory_path() / ("cstool-groups-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string v6 = WriteManyCpus(dir / "many.dat", 5, 4000);
  ExpectSameAsOneThread(v6, {2, 3, 5, 8});
  const Decoded lost = Decode(v6, 3);
  EXPECT_EQ(lost.stats.lost_gaps_unknown, 4u);
  EXPECT_EQ(lost.stats.lost_events, 4u * 17);
  EXPECT_EQ(lost.stats.anomalies.at("short_record"), 42u);

  // trace-cmd's v7 with zstd chunks: each share then decompresses its own CPUs.
  const fs::path v7 = dir / "many.v7.dat";
  ASSERT_TRUE(ConvertToV7Zstd(v6, v7.string())) << v6 << ": install trace-cmd (make deps)";
  ExpectSameAsOneThread(v7.string(), {2, 3});
  fs::remove_all(dir);
}

// A damaged page in the middle of either CPU's data: the same events, then the same
// error (CPU 1's few pages are read in its first batch: an error before any event).
TEST(DecodeInGroups, AnErrorOfTheFileComesAfterTheSameEvents) {
  const std::string fixture = kFixtures + "small_v6.dat";
  const std::string original = testing::ReadWholeFile(fixture);
  const std::string path =
      (fs::temp_directory_path() / ("cstool_decode_groups_" + std::to_string(::getpid()) + ".dat"))
          .string();
  V6TraceFile f(fixture, {});
  int damaged = 0, after_events = 0;
  for (const auto& d : f.cpu_data()) {
    // A commit size past the page, in a page half-way through the CPU's data.
    const uint64_t page = d.offset + d.size / f.page_size() / 2 * f.page_size();
    int here = 0;
    for (uint64_t at = page + 8 + 1; at < page + 16 && here < 2; ++at) {
      std::string img = original;
      img[at] = static_cast<char>(img[at] ^ 0x5a);
      std::ofstream(path, std::ios::binary | std::ios::trunc) << img;
      const Decoded one = Decode(path, 1);
      if (one.error.empty()) continue;
      SCOPED_TRACE(at);
      ++here;
      if (one.lines.size() > 100) ++after_events;
      const Decoded grouped = Decode(path, 2);
      EXPECT_EQ(grouped.error, one.error);
      EXPECT_EQ(grouped.lines, one.lines);
    }
    damaged += here;
  }
  fs::remove(path);
  EXPECT_EQ(damaged, 4) << "no flipped byte made the fixture fail on each CPU";
  EXPECT_EQ(after_events, 2) << "CPU 0's damage should come after some events";
}

// Both CPUs' first pages damaged: one merge reads CPU 0's first page first, so its error
// is the one reported, though CPU 1, with more data, is the first share's and whichever
// share meets its damage first.
TEST(DecodeInGroups, TwoCpusDamagedFromTheStartGiveTheFirstCpusError) {
  const fs::path dir =
      fs::temp_directory_path() / ("cstool-groups-damage-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  SyntheticTrace t(kFixtures + "formats/events", 2);
  const int se = t.AddEvent("raw_syscalls", "sys_enter");
  for (int i = 0; i < 4000; ++i)
    t.Append(i % 4 == 0 ? 0 : 1, 1000 + static_cast<uint64_t>(i),
             t.NewRecord(se, 100).Set("id", 1));
  const std::string clean = (dir / "clean.dat").string();
  t.Write(clean);
  ASSERT_EQ(ShareCpus(*OpenTraceFile(clean), 2).cpus, (std::vector<std::vector<int>>{{1}, {0}}));
  std::string img = testing::ReadWholeFile(clean);
  V6TraceFile f(clean, {});
  // A commit size far past the page, in each CPU's first page.
  for (const auto& d : f.cpu_data()) img[d.offset + 8 + 2] = static_cast<char>(0x7f);
  const std::string path = (dir / "damaged.dat").string();
  std::ofstream(path, std::ios::binary | std::ios::trunc) << img;
  const Decoded one = Decode(path, 1);
  ASSERT_FALSE(one.error.empty());
  EXPECT_NE(one.error.find("(CPU 0)"), std::string::npos) << one.error;
  EXPECT_TRUE(one.lines.empty());
  for (int run = 0; run < 20; ++run) {
    const Decoded grouped = Decode(path, 2);
    EXPECT_EQ(grouped.error, one.error);
    EXPECT_TRUE(grouped.lines.empty());
  }
  fs::remove_all(dir);
}

// A record too short to decode makes no call but is where one merge meets the next
// page's damage: CPU 1's record between the two must come before the error, as there.
//   CPU 0: | enter@1, short@10 | damaged page |     CPU 1: | enter@5, enter@20 |
TEST(DecodeInGroups, AnErrorAfterARecordWithoutACallComesWhereOneMergeMeetsIt) {
  const fs::path dir =
      fs::temp_directory_path() / ("cstool-groups-short-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  SyntheticTrace t(kFixtures + "formats/events", 2, 16384);  // one page per batch
  const int se = t.AddEvent("raw_syscalls", "sys_enter");
  t.Append(0, 1, t.NewRecord(se, 100).Set("id", 1));
  t.Append(0, 10, std::vector<uint8_t>{1, 0});
  t.MarkLost(0, 3);  // ends the page
  t.Append(0, 30, t.NewRecord(se, 100).Set("id", 3));
  t.Append(1, 5, t.NewRecord(se, 101).Set("id", 2));
  t.Append(1, 20, t.NewRecord(se, 101).Set("id", 4));
  const std::string clean = (dir / "clean.dat").string();
  t.Write(clean);
  std::string img = testing::ReadWholeFile(clean);
  V6TraceFile f(clean, {});
  ASSERT_EQ(f.cpu_data()[0].size, 2u * 16384);
  img[f.cpu_data()[0].offset + 16384 + 8 + 2] = static_cast<char>(0x7f);  // the commit
  const std::string path = (dir / "damaged.dat").string();
  std::ofstream(path, std::ios::binary | std::ios::trunc) << img;
  const Decoded one = Decode(path, 1);
  ASSERT_FALSE(one.error.empty());
  ASSERT_EQ(one.lines.size(), 2u);  // enter@1 (CPU 0), enter@5 (CPU 1)
  const Decoded grouped = Decode(path, 2);
  EXPECT_EQ(grouped.error, one.error);
  EXPECT_EQ(grouped.lines, one.lines);
  fs::remove_all(dir);
}

// A sink that throws mid-way: the error reaches the caller, and every decoding thread
// (waiting for room in its queue: the file holds far more than the queues, or done) is
// stopped and joined: the test would hang or crash otherwise.
TEST(DecodeInGroups, ASinksErrorStopsEveryDecodingThread) {
  struct Failing : EventSink {
    void PushSchedSwitch(const SchedSwitch&) override {
      if (++switches == 50) throw std::runtime_error("sink failed");
    }
    int switches = 0;
  };
  const fs::path dir =
      fs::temp_directory_path() / ("cstool-groups-sink-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // Some 200 000 entries of 64-100 bytes: many times the queues' 4 x 64 KiB per share.
  auto reader = OpenTraceFile(WriteManyCpus(dir / "big.dat", 4, 200000));
  for (int shares : {2, 3}) {
    EventDecoder decoder(reader->tep());
    Failing sink;
    EXPECT_THROW(DecodeTraceInGroups(*reader, decoder, sink, {}, shares), std::runtime_error);
    EXPECT_EQ(sink.switches, 50);
  }
  fs::remove_all(dir);
}

// DecodeTrace uses the shares only where the reader's CPUs can be read at once: not when
// salvaging, whose notes come in reading order.
TEST(DecodeInGroups, OnlyForReadersWhoseCpusCanBeReadAtOnce) {
  EXPECT_TRUE(OpenTraceFile(kFixtures + "small_v6.dat")->ReadsCpusInParallel());
  EXPECT_TRUE(OpenTraceFile(kFixtures + "small_v7_zstd.dat")->ReadsCpusInParallel());
  EXPECT_FALSE(OpenTraceFile(kFixtures + "small_v6.dat", {.salvage = true})->ReadsCpusInParallel());
  EXPECT_FALSE(OpenTraceFile(kFixtures + "small_v6.dat", {.backend = ReaderBackend::kLibTracecmd})
                   ->ReadsCpusInParallel());
  auto reader = OpenTraceFile(kFixtures + "small_v6.dat");
  CallLog one, grouped;
  const DecodeStats a = DecodeTrace(*reader, one);
  const DecodeStats b = DecodeTrace(*reader, grouped, {.decoding_threads = 2});
  EXPECT_EQ(grouped.lines, one.lines);
  testing::ExpectSameDecodeStats(b, a);
}

}  // namespace
}  // namespace cstool
