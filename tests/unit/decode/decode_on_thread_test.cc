// report -j decodes on a thread of its own: the sink must see exactly the calls, in the
// same order, and the same counts as when one thread does everything, an error of the
// file must come after the same events, and a sink's error must stop the decoding thread.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "base/errors.h"
#include "decode/decode_trace_inl.h"
#include "decode/event_decoder.h"
#include "format/trace_file_reader.h"
#include "format/v6_trace_file.h"
#include "tests/support/call_log.h"
#include "tests/support/decode_stats.h"
#include "tests/support/files.h"

namespace cstool {
namespace {

using ::cstool::testing::CallLog;

const std::string kFixtures = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/";

using ::cstool::testing::Decoded;

Decoded Decode(const std::string& path, bool on_thread, int jobs = 1) {
  return testing::DecodeLogged(path, {.jobs = jobs}, [&](auto& reader, auto& decoder, auto& log) {
    return on_thread ? DecodeTraceOnThread(reader, decoder, log, {})
                     : DecodeTraceTo(reader, decoder, log, {});
  });
}

TEST(DecodeOnThread, TheSinkSeesTheSameCallsAndTheCountsAreTheSame) {
  for (const char* fixture : {"golden_mutex.dat", "small_v6.dat", "small_v7_zstd.dat"}) {
    for (int jobs : {1, 3}) {
      SCOPED_TRACE(std::string(fixture) + " jobs " + std::to_string(jobs));
      const Decoded one = Decode(kFixtures + fixture, false);
      const Decoded threaded = Decode(kFixtures + fixture, true, jobs);
      EXPECT_TRUE(one.error.empty()) << one.error;
      EXPECT_GT(one.lines.size(), 300u);
      EXPECT_EQ(threaded.lines, one.lines);
      EXPECT_EQ(threaded.error, one.error);
      testing::ExpectSameDecodeStats(threaded.stats, one.stats);
    }
  }
}

// A damaged page in the middle of a CPU's data: the same events, then the same error.
TEST(DecodeOnThread, AnErrorOfTheFileComesAfterTheSameEvents) {
  const std::string fixture = kFixtures + "small_v6.dat";
  const std::string original = testing::ReadWholeFile(fixture);
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("cstool_decode_thread_" + std::to_string(::getpid()) + ".dat"))
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
      const Decoded one = Decode(path, false);
      if (one.error.empty()) continue;
      SCOPED_TRACE(at);
      ++damaged;
      const Decoded threaded = Decode(path, true);
      EXPECT_GT(one.lines.size(), 100u) << "the error should come after some events";
      EXPECT_EQ(threaded.error, one.error);
      EXPECT_EQ(threaded.lines, one.lines);
    }
  }
  std::filesystem::remove(path);
  EXPECT_EQ(damaged, 3) << "no flipped byte made the fixture fail";
}

// A sink that throws mid-way: the error reaches the caller, and the decoding thread
// (waiting for room in the queue, or done) is stopped and joined: the test would hang or
// crash otherwise.
TEST(DecodeOnThread, ASinksErrorStopsTheDecodingThread) {
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
  EXPECT_THROW(DecodeTraceOnThread(*reader, decoder, sink, {}), std::runtime_error);
  EXPECT_EQ(sink.switches, 50);
}

}  // namespace
}  // namespace cstool
