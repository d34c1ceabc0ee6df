// Damaged v7 files on the own parser: every error names the file and an offset (a chunk
// of compressed CPU data by its CPU and index), nothing crashes, and --salvage skips a
// damaged chunk as a gap or reads up to a cut.
#include "format/v7_trace_file.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/errors.h"
#include "decode/decode_trace.h"
#include "format/compression.h"
#include "format/trace_file_format.h"
#include "tests/support/files.h"
#include "tests/support/read_ahead_helper.h"
#include "tests/support/sweep.h"

namespace cstool {
namespace {

using testing::ReadWholeFile;
const std::string kFixtures = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/";

struct Outcome {
  std::string error;  // empty: read to the end
  DecodeStats stats;
  std::vector<std::string> damage;
};

class V7Damage : public ::testing::Test {
 protected:
  void SetUp() override {
    original_ = ReadWholeFile(kFixtures + "small_v7_zstd.dat");
    ASSERT_GT(original_.size(), 20000u);
    path_ = (std::filesystem::temp_directory_path() /
             ("cstool_v7_" + std::to_string(::getpid()) + ".dat"))
                .string();
    V7TraceFile f(kFixtures + "small_v7_zstd.dat", {});
    ASSERT_EQ(f.compression(), "zstd");
    for (const auto& d : f.cpu_data()) data_.push_back(d);
    ASSERT_EQ(data_.size(), 2u);
  }
  void TearDown() override { std::filesystem::remove(path_); }

  // `helped`: a second thread reads ahead (ReadAheadOnce) all the while, as report -j 2's
  // analysing thread does.
  Outcome Read(const std::string& image, bool salvage = false, int jobs = 1, bool helped = false) {
    {
      std::ofstream out(path_, std::ios::binary | std::ios::trunc);
      out.write(image.data(), static_cast<std::streamsize>(image.size()));
    }
    Outcome o;
    try {
      V7TraceFile reader(path_, {ReaderBackend::kFast, "", salvage, jobs});
      testing::ReadAheadHelper helper(helped ? &reader : nullptr);
      EventSink sink;
      o.stats = DecodeTrace(reader, sink);
      o.damage = reader.salvage_log().entries();
    } catch (const Error& e) {
      o.error = e.what();
      EXPECT_NE(o.error.find(path_), std::string::npos) << o.error;
      EXPECT_NE(o.error.find("offset"), std::string::npos) << o.error;
    }
    return o;
  }

  std::string original_;
  std::string path_;
  std::vector<FastTraceFile::CpuData> data_;
};

// The fixture's last section (offset 24344, to the end) holds the strings that describe
// sections, which cstool does not need; every cut before it loses a section or chunk
// the file still points to.
constexpr size_t kStringsSection = 24344;

TEST_F(V7Damage, TruncatedAnywhereGivesErrorWithOffset) {
  ASSERT_EQ(original_.compare(kStringsSection, 2, std::string("\x0f\x00", 2)), 0)
      << "fixture layout changed";
  for (size_t len = 0; len < original_.size(); len += 37) {
    SCOPED_TRACE(len);
    const Outcome o = Read(original_.substr(0, len));
    EXPECT_EQ(o.error.empty(), len >= kStringsSection) << o.error;
  }
}

TEST_F(V7Damage, DamagedChunkNamesCpuAndChunk) {
  // CPU 0's data: u32 chunk count (2), then per chunk u32 compressed size, u32 size and
  // the zstd frame. Damage the second chunk (the first holds the overrun's lost flag).
  uint32_t count = 0, zsize0 = 0;
  std::memcpy(&count, original_.data() + data_[0].offset, 4);
  std::memcpy(&zsize0, original_.data() + data_[0].offset + 4, 4);
  ASSERT_EQ(count, 2u);
  const size_t chunk1 = data_[0].offset + 4 + 8 + zsize0;
  std::string img = original_;
  for (size_t i = chunk1 + 8 + 8; i < chunk1 + 8 + 40; ++i) img[i] = static_cast<char>(~img[i]);
  Outcome strict = Read(img);
  EXPECT_NE(strict.error.find(fmt::format("corrupt file at offset {} (CPU 0 chunk 1)", chunk1)),
            std::string::npos)
      << strict.error;
  EXPECT_NE(strict.error.find("zstd"), std::string::npos) << strict.error;

  Outcome full = Read(original_);
  ASSERT_TRUE(full.error.empty()) << full.error;
  Outcome salvaged = Read(img, /*salvage=*/true);
  ASSERT_TRUE(salvaged.error.empty()) << salvaged.error;
  ASSERT_EQ(salvaged.damage.size(), 1u);
  EXPECT_NE(salvaged.damage[0].find("chunk skipped, counted as lost events"), std::string::npos)
      << salvaged.damage[0];
  // CPU 0 lost its second chunk (a gap of unknown size); CPU 1 is whole.
  EXPECT_LT(salvaged.stats.events_per_cpu[0], full.stats.events_per_cpu[0]);
  EXPECT_GT(salvaged.stats.events_per_cpu[0], 0u);
  EXPECT_EQ(salvaged.stats.events_per_cpu[1], full.stats.events_per_cpu[1]);
  EXPECT_EQ(salvaged.stats.lost_gaps_per_cpu[0], full.stats.lost_gaps_per_cpu[0] + 1);
}

// Reading ahead on workers (report -j) meets damage where the reader would: the same
// error, the same salvage notes in the same order, the same records and gaps.
TEST_F(V7Damage, WorkersMeetDamageAsTheReaderWould) {
  uint32_t zsize0 = 0;
  std::memcpy(&zsize0, original_.data() + data_[0].offset + 4, 4);
  const size_t chunk1 = data_[0].offset + 4 + 8 + zsize0;
  std::vector<std::string> images;
  std::string broken = original_;  // CPU 0's second chunk damaged
  for (size_t i = chunk1 + 16; i < chunk1 + 48; ++i) broken[i] = static_cast<char>(~broken[i]);
  images.push_back(broken);
  std::string both = broken;  // and CPU 1's first
  for (size_t i = data_[1].offset + 20; i < data_[1].offset + 52; ++i)
    both[i] = static_cast<char>(~both[i]);
  images.push_back(both);
  for (size_t cut = data_[0].offset + 10; cut < kStringsSection; cut += 997)
    images.push_back(original_.substr(0, cut));
  for (size_t i = 0; i < images.size(); ++i) {
    for (bool salvage : {false, true}) {
      SCOPED_TRACE(fmt::format("image {} salvage {}", i, salvage));
      const Outcome serial = Read(images[i], salvage, 1);
      // A worker reading ahead; a helper thread reading ahead beside the reader (report
      // -j 2); both, so that three threads may decompress chunks of one CPU at once.
      for (const auto& [jobs, helped] : {std::pair{3, false}, {1, true}, {3, true}}) {
        SCOPED_TRACE(fmt::format("jobs {} helped {}", jobs, helped));
        const Outcome ahead = Read(images[i], salvage, jobs, helped);
        EXPECT_EQ(ahead.error, serial.error);
        EXPECT_EQ(ahead.damage, serial.damage);
        EXPECT_EQ(ahead.stats.events_per_cpu, serial.stats.events_per_cpu);
        EXPECT_EQ(ahead.stats.lost_gaps_per_cpu, serial.stats.lost_gaps_per_cpu);
        EXPECT_EQ(ahead.stats.first_ts, serial.stats.first_ts);
        EXPECT_EQ(ahead.stats.last_ts, serial.stats.last_ts);
      }
    }
  }
}

TEST_F(V7Damage, ImplausibleChunkSizeIsAnError) {
  std::string img = original_;
  const uint32_t odd = 4096 * 3 + 1;  // not a whole number of pages
  std::memcpy(img.data() + data_[1].offset + 8, &odd, 4);
  Outcome strict = Read(img);
  EXPECT_NE(strict.error.find("CPU 1 chunk 0 claims 12289 uncompressed bytes"), std::string::npos)
      << strict.error;
}

// A chunk whose compressed bytes are more than zlib or zstd could have made of its stated
// size (at most size + size/128 + 128): damage, said before its bytes are read.
TEST_F(V7Damage, ImplausibleCompressedSizeIsAnError) {
  uint32_t zsize = 0, size = 0;
  std::memcpy(&zsize, original_.data() + data_[0].offset + 4, 4);
  std::memcpy(&size, original_.data() + data_[0].offset + 8, 4);
  ASSERT_EQ(zsize, 5687u) << "fixture layout changed";
  ASSERT_EQ(size, 40960u) << "fixture layout changed";
  std::string img = original_;
  const uint32_t one_page = 4096;  // at most 4 256 compressed bytes
  std::memcpy(img.data() + data_[0].offset + 8, &one_page, 4);
  Outcome strict = Read(img);
  EXPECT_NE(strict.error.find(fmt::format("corrupt file at offset {}: CPU 0 chunk 0 claims 5687 "
                                          "compressed bytes for 4096 uncompressed",
                                          data_[0].offset + 4)),
            std::string::npos)
      << strict.error;
  // Two pages may take up to 8 384 bytes: then the zstd frame itself is what fails.
  const uint32_t two_pages = 8192;
  std::memcpy(img.data() + data_[0].offset + 8, &two_pages, 4);
  strict = Read(img);
  EXPECT_EQ(strict.error.find("compressed bytes for"), std::string::npos) << strict.error;
  EXPECT_NE(strict.error.find("(CPU 0 chunk 0)"), std::string::npos) << strict.error;
}

TEST_F(V7Damage, SalvageReadsChunksUpToTheCut) {
  // CPU 1's only chunk claims more bytes than the file has, as if the file had been cut
  // there (a real cut would also lose the options section stored after the data):
  // nothing of CPU 1, all of CPU 0.
  std::string img = original_;
  const uint32_t huge = 1u << 30;
  std::memcpy(img.data() + data_[1].offset + 4, &huge, 4);
  Outcome strict = Read(img);
  EXPECT_NE(strict.error.find("truncated at offset"), std::string::npos) << strict.error;
  Outcome full = Read(original_);
  Outcome part = Read(img, /*salvage=*/true);
  ASSERT_TRUE(part.error.empty()) << part.error;
  ASSERT_EQ(part.damage.size(), 1u);
  EXPECT_NE(part.damage[0].find("read CPU 1 up to chunk 0"), std::string::npos) << part.damage[0];
  EXPECT_EQ(part.stats.events_per_cpu[0], full.stats.events_per_cpu[0]);
  EXPECT_EQ(part.stats.events_per_cpu[1], 0u);
}

TEST_F(V7Damage, FlippedBytesNeverCrash) {
  // Every 61st byte (each read of a damaged header parses the formats in a child
  // process first, so a dense sweep would take minutes); salvage only in the CPU data.
  for (size_t at = 0; at < original_.size(); at += 61 * testing::SweepStride()) {
    std::string img = original_;
    img[at] = static_cast<char>(img[at] ^ 0x5a);
    SCOPED_TRACE(at);
    Read(img);
    if (at >= data_[0].offset) Read(img, /*salvage=*/true);
  }
}

// The uncompressed options section at `at`: the offset of the first option with `id`.
size_t OptionAt(const std::string& image, size_t at, uint16_t id) {
  for (size_t p = at + 16;;) {
    uint16_t got = 0;
    uint32_t size = 0;
    std::memcpy(&got, image.data() + p, 2);
    std::memcpy(&size, image.data() + p + 2, 4);
    if (got == id) return p;
    if (got == 0) return std::string::npos;
    p += 6 + size;
  }
}

// The fixture's first options section (uncompressed, at 8021) and the last one (at
// 24226), as trace-cmd dump --sections lists them.
constexpr size_t kFirstOptions = 8021;
constexpr size_t kLastOptions = 24226;

TEST_F(V7Damage, OptionsSectionPointingAtItselfIsALoop) {
  std::string img = original_;
  const size_t done = OptionAt(img, kLastOptions, 0);
  ASSERT_NE(done, std::string::npos);
  const uint64_t self = kLastOptions;
  std::memcpy(img.data() + done + 6, &self, 8);
  Outcome o = Read(img);
  EXPECT_NE(o.error.find("options sections form a loop"), std::string::npos) << o.error;
}

TEST_F(V7Damage, HugeCpuNumberIsAnError) {
  std::string img = original_;
  const size_t buffer = OptionAt(img, kLastOptions, 3);
  ASSERT_NE(buffer, std::string::npos);
  // BUFFER payload: u64 offset, name, clock, u32 page size, u32 count, then the CPUs.
  size_t p = buffer + 6 + 8;
  p = img.find('\0', p) + 1;
  p = img.find('\0', p) + 1;
  p += 8;
  const uint32_t cpu = 0xffffffff;
  std::memcpy(img.data() + p, &cpu, 4);
  Outcome o = Read(img);
  EXPECT_NE(o.error.find("implausible CPU number 4294967295"), std::string::npos) << o.error;
}

// A file whose timestamps libtracecmd would shift (here an OFFSET option, as
// `trace-cmd record --ts-offset` writes) is left to libtracecmd.
TEST_F(V7Damage, TimestampOptionGoesToLibtracecmd) {
  std::string img = original_;
  const size_t uname = OptionAt(img, kFirstOptions, tracefile::kOptionUname);
  ASSERT_NE(uname, std::string::npos);
  const uint16_t offset_id = tracefile::kOptionOffset;
  std::memcpy(img.data() + uname, &offset_id, 2);  // its text reads as offset 0
  Outcome fast = Read(img);
  EXPECT_NE(fast.error.find("only libtracecmd applies"), std::string::npos) << fast.error;
  EXPECT_STREQ(OpenTraceFile(path_)->backend_name(), "libtracecmd");
  EXPECT_THROW(OpenTraceFile(path_, {ReaderBackend::kFast, ""}), FastPathUnsupported);
}

TEST(Compression, RoundTripsAndRejectsDamage) {
  std::vector<uint8_t> in(3 * 4096);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>((i * 7) % 13);
  for (const char* name : {"zstd", "zlib"}) {
    SCOPED_TRACE(name);
    auto c = MakeCompressor(name);
    EXPECT_STREQ(c->name(), name);
    EXPECT_FALSE(c->version().empty());
    std::vector<uint8_t> z(c->Bound(in.size()));
    z.resize(c->Compress(in, z));
    EXPECT_LT(z.size(), in.size() / 4);
    std::vector<uint8_t> out(in.size());
    MakeDecompressor(name)->Decompress(z, out, "block");
    EXPECT_EQ(out, in);
    // A block shorter than the file says, and a damaged block, are errors naming it.
    std::vector<uint8_t> bigger(in.size() + 4096);
    EXPECT_THROW(MakeDecompressor(name)->Decompress(z, bigger, "block"), Error);
    std::vector<uint8_t> bad = z;
    for (size_t i = bad.size() / 2; i < bad.size(); ++i) bad[i] = static_cast<uint8_t>(~bad[i]);
    try {
      MakeDecompressor(name)->Decompress(bad, out, "block at offset 7");
      ADD_FAILURE() << "damage not noticed";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("block at offset 7: ", 0), 0u) << e.what();
    }
  }
  EXPECT_THROW(MakeDecompressor("lzo"), Error);
  EXPECT_FALSE(IsKnownCompression("none"));
}

}  // namespace
}  // namespace cstool
