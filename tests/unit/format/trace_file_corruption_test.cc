// Damaged files must fail with a cstool::Error naming the file and an offset, or decode;
// never crash (build with -fsanitize=address to check for memory errors too).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/errors.h"
#include "decode/decode_trace.h"
#include "format/ring_page.h"
#include "format/trace_file_reader.h"
#include "format/v6_trace_file.h"
#include "tests/support/files.h"
#include "tests/support/sweep.h"

namespace cstool {
namespace {

using testing::ReadWholeFile;
const std::string kFixture = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/small_v6.dat";

class Corruption : public ::testing::Test {
 protected:
  void SetUp() override {
    original_ = ReadWholeFile(kFixture);
    ASSERT_GT(original_.size(), 100000u);
    path_ = (std::filesystem::temp_directory_path() /
             ("cstool_corrupt_" + std::to_string(::getpid()) + ".dat"))
                .string();
  }
  void TearDown() override { std::filesystem::remove(path_); }

  // Returns "ok" or the error text; fails the test on a malformed error.
  std::string Try(const std::string& image) {
    {
      std::ofstream out(path_, std::ios::binary | std::ios::trunc);
      out.write(image.data(), static_cast<std::streamsize>(image.size()));
    }
    try {
      auto reader = OpenTraceFile(path_);
      EventSink sink;
      DecodeTrace(*reader, sink);
      return "ok";
    } catch (const Error& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find(path_), std::string::npos) << msg;
      EXPECT_NE(msg.find("offset"), std::string::npos) << msg;
      return msg;
    }
  }

  std::string original_;
  std::string path_;
};

TEST_F(Corruption, TruncatedAnywhereGivesErrorWithOffset) {
  size_t errors = 0;
  const size_t stride = testing::SweepStride();
  for (size_t len = 0; len < original_.size(); len += 97 * stride) {
    SCOPED_TRACE(len);
    if (Try(original_.substr(0, len)) != "ok") ++errors;
  }
  EXPECT_GT(errors, 1000u / stride);
  // The message names what is missing, e.g. a CPU's data.
  std::string msg = Try(original_.substr(0, original_.size() - 4096));
  EXPECT_NE(msg.find("truncated at offset"), std::string::npos) << msg;
  EXPECT_NE(msg.find("CPU 1 data"), std::string::npos) << msg;
}

TEST_F(Corruption, BadMagicSaysNotATraceFile) {
  std::string img = original_;
  img[1] = 'x';
  std::string msg = Try(img);
  EXPECT_NE(msg.find("not a trace.dat file"), std::string::npos) << msg;
}

TEST_F(Corruption, FlippedHeaderBytesNeverCrash) {
  // Header: everything before the first CPU data page.
  V6TraceFile f(kFixture, {});
  size_t header_end = original_.size();
  for (const auto& d : f.cpu_data())
    if (d.size) header_end = std::min<size_t>(header_end, d.offset);
  for (size_t at = 0; at < header_end; at += 61 * testing::SweepStride()) {
    SCOPED_TRACE(at);
    std::string img = original_;
    img[at] = static_cast<char>(img[at] ^ 0xff);
    Try(img);
  }
}

TEST_F(Corruption, FlippedPageBytesNeverCrash) {
  V6TraceFile f(kFixture, {});
  size_t errors = 0, cases = 0;
  const size_t stride = testing::SweepStride();
  for (const auto& d : f.cpu_data()) {
    for (uint64_t at = d.offset; at < d.offset + d.size; at += 97 * stride) {
      SCOPED_TRACE(at);
      std::string img = original_;
      img[at] = static_cast<char>(img[at] ^ 0x5a);
      if (Try(img) != "ok") ++errors;
      ++cases;
    }
  }
  EXPECT_GT(cases, 700u / stride);
  EXPECT_GT(errors, 0u);
}

// Pages that hold no records (commit 0) must not end a CPU's stream: the records of
// the pages after them are still read.
TEST_F(Corruption, EmptyPagesDoNotEndTheStream) {
  V6TraceFile f(kFixture, {});
  const uint32_t page = f.page_size();
  const RingPageDecoder decoder(f.long_size(), page, kFixture);
  std::vector<RawRecord> recs(decoder.max_records());
  for (size_t cpu = 0; cpu < f.cpu_data().size(); ++cpu) {
    const auto& d = f.cpu_data()[cpu];
    if (d.size / page < 7) continue;
    SCOPED_TRACE(cpu);
    // Empty the first five pages (more than one batch), remembering what they held.
    std::string img = original_;
    uint64_t emptied = 0;
    for (uint64_t at = d.offset; at < d.offset + 5 * page; at += page) {
      int64_t lost = 0;
      emptied += decoder.Decode(reinterpret_cast<const uint8_t*>(original_.data()) + at, at,
                                static_cast<int32_t>(cpu), recs.data(), &lost);
      std::memset(img.data() + at + 8, 0, static_cast<size_t>(f.long_size()));
    }
    ASSERT_GT(emptied, 0u);
    auto count = [&](const std::string& image) {
      std::ofstream(path_, std::ios::binary | std::ios::trunc)
          .write(image.data(), static_cast<std::streamsize>(image.size()));
      auto reader = OpenTraceFile(path_);
      EventSink sink;
      return DecodeTrace(*reader, sink).events_per_cpu.at(cpu);
    };
    const uint64_t all = count(original_);
    ASSERT_GT(all, emptied) << "the pages after the emptied ones must hold records";
    EXPECT_EQ(count(img), all - emptied);
    return;
  }
  FAIL() << "the fixture has no CPU with 7 pages";
}

}  // namespace
}  // namespace cstool
