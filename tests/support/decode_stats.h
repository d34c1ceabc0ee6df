// Two decodings of one file (two readers, one thread or more) must make the same calls
// and count alike.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "base/errors.h"
#include "decode/decode_trace.h"
#include "decode/event_decoder.h"
#include "format/trace_file_reader.h"
#include "tests/support/call_log.h"

namespace cstool::testing {

// What one decoding of a file made: the sink's calls, the counts, and what the file's
// damage threw (empty if nothing).
struct Decoded {
  std::vector<std::string> lines;
  DecodeStats stats;
  std::string error;
};

// Opens `path` with `options` and decodes it with `decode(reader, decoder, sink)`.
template <typename Decode>
Decoded DecodeLogged(const std::string& path, const ReaderOptions& options, Decode&& decode) {
  Decoded d;
  auto reader = OpenTraceFile(path, options);
  EventDecoder decoder(reader->tep());
  CallLog log;
  try {
    d.stats = decode(*reader, decoder, log);
  } catch (const Error& e) {
    d.error = e.what();
  }
  d.lines = std::move(log.lines);
  return d;
}

inline void ExpectSameDecodeStats(const DecodeStats& a, const DecodeStats& b) {
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.events_per_cpu, b.events_per_cpu);
  EXPECT_EQ(a.events_per_type, b.events_per_type);
  EXPECT_EQ(a.first_ts, b.first_ts);
  EXPECT_EQ(a.last_ts, b.last_ts);
  EXPECT_EQ(a.lost_per_cpu, b.lost_per_cpu);
  EXPECT_EQ(a.lost_gaps_per_cpu, b.lost_gaps_per_cpu);
  EXPECT_EQ(a.lost_events, b.lost_events);
  EXPECT_EQ(a.lost_gaps_unknown, b.lost_gaps_unknown);
  EXPECT_EQ(a.unfiltered_runtime_events, b.unfiltered_runtime_events);
  EXPECT_EQ(a.unfiltered_other_events, b.unfiltered_other_events);
  EXPECT_EQ(a.unfiltered_runtime_lost, b.unfiltered_runtime_lost);
  EXPECT_EQ(a.anomalies, b.anomalies);
  EXPECT_EQ(a.missing_events, b.missing_events);
}

}  // namespace cstool::testing
