// report -j N (N > 2) decodes the CPUs in shares on N - 1 threads and merges the shares:
// the sink must see exactly the calls, in the same order, and the same counts as when one
// thread does everything, on every fixture and on a file of many CPUs whose records tie
// in time across CPUs and lose events; an error of the file must come after the same
// events, and a sink's error must stop every decoding thread.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "base/errors.h"
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

struct Decoded {
  std::vector<std::string> lines;
  DecodeStats stats;
  std::string error;  // what the file's damage threw, if anything
};

// shares 1: DecodeTraceTo on this thread.
Decoded Decode(const std::string& path, int shares) {
  Decoded d;
  auto reader = OpenTraceFile(path);
  EventDecoder decoder(reader->tep());
  CallLog log;
  try {
    d.stats = shares > 1 ? DecodeTraceInGroups(*reader, decoder, log, {}, shares)
                         : DecodeTraceTo(*reader, decoder, log, {});
  } catch (const Error& e) {
    d.error = e.what();
  }
  d.lines = std::move(log.lines);
  return d;
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

// Five CPUs whose records often share a timestamp (the merge breaks those ties by CPU,
// across shares too), with losses of known and unknown size, as v6 and as trace-cmd's
// v7 with zstd chunks (each share then decompresses its own CPUs).
TEST(DecodeInGroups, ManyCpusWithTiesAndLosses) {
  const fs::path dir = fs::temp_directory_path() / ("cstool-groups-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  constexpr int kCpus = 5;
  SyntheticTrace t(kFixtures + "formats/events", kCpus);
  const int sw = t.AddEvent("sched", "sched_switch");
  const int wk = t.AddEvent("sched", "sched_wakeup");
  const int se = t.AddEvent("raw_syscalls", "sys_enter");
  for (int i = 0; i < 4000; ++i) {
    const int cpu = (i * 7) % kCpus;
    const uint64_t ts = 1000 + static_cast<uint64_t>(i / 3) * 10;  // three records per time
    const int32_t pid = 100 + cpu;
    if (i % 500 == 250) t.MarkLost(cpu, i % 1000 == 250 ? 17 : -1);
    if (i % 3 == 0) {
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
  const fs::path v6 = dir / "many.dat";
  t.Write(v6.string());
  ExpectSameAsOneThread(v6.string(), {2, 3, 5, 8});

  const fs::path v7 = dir / "many.v7.dat";
  const std::string convert = "trace-cmd convert -i '" + v6.string() + "' -o '" + v7.string() +
                              "' --file-version 7 --compression zstd >/dev/null 2>&1";
  ASSERT_EQ(std::system(convert.c_str()), 0) << convert << ": install trace-cmd (make deps)";
  ExpectSameAsOneThread(v7.string(), {2, 3});
  const Decoded lost = Decode(v6.string(), 3);
  EXPECT_EQ(lost.stats.lost_gaps_unknown, 4u);
  EXPECT_EQ(lost.stats.lost_events, 4u * 17);
  fs::remove_all(dir);
}

// A damaged page in the middle of a CPU's data: the same events, then the same error.
TEST(DecodeInGroups, AnErrorOfTheFileComesAfterTheSameEvents) {
  const std::string fixture = kFixtures + "small_v6.dat";
  const std::string original = testing::ReadWholeFile(fixture);
  const std::string path =
      (fs::temp_directory_path() / ("cstool_decode_groups_" + std::to_string(::getpid()) + ".dat"))
          .string();
  V6TraceFile f(fixture, {});
  int damaged = 0;
  for (const auto& d : f.cpu_data()) {
    // A commit size past the page, in a page half-way through the CPU's data.
    const uint64_t page = d.offset + d.size / f.page_size() / 2 * f.page_size();
    for (uint64_t at = page + 8 + 1; at < page + 16 && damaged < 3; ++at) {
      std::string img = original;
      img[at] = static_cast<char>(img[at] ^ 0x5a);
      std::ofstream(path, std::ios::binary | std::ios::trunc) << img;
      const Decoded one = Decode(path, 1);
      if (one.error.empty()) continue;
      SCOPED_TRACE(at);
      ++damaged;
      const Decoded grouped = Decode(path, 2);
      EXPECT_GT(one.lines.size(), 100u) << "the error should come after some events";
      EXPECT_EQ(grouped.error, one.error);
      EXPECT_EQ(grouped.lines, one.lines);
    }
  }
  fs::remove(path);
  EXPECT_EQ(damaged, 3) << "no flipped byte made the fixture fail";
}

// A sink that throws mid-way: the error reaches the caller, and every decoding thread
// (waiting for room in its queue, or done) is stopped and joined: the test would hang or
// crash otherwise.
TEST(DecodeInGroups, ASinksErrorStopsEveryDecodingThread) {
  struct Failing : CallLog {
    void PushSchedSwitch(const SchedSwitch& e) override {
      if (++switches == 50) throw std::runtime_error("sink failed");
      CallLog::PushSchedSwitch(e);
    }
    int switches = 0;
  };
  auto reader = OpenTraceFile(kFixtures + "small_v6.dat");
  EventDecoder decoder(reader->tep());
  Failing sink;
  EXPECT_THROW(DecodeTraceInGroups(*reader, decoder, sink, {}, 2), std::runtime_error);
  EXPECT_EQ(sink.switches, 50);
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
