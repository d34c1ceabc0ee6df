// The chunk compressors of v7 files: a flipped byte in stored data is an error on reading,
// never other data (zstd frames carry a checksum; zlib's stream its Adler-32).
#include "format/compression.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "base/errors.h"

namespace cstool {
namespace {

std::vector<uint8_t> Compressed(Compressor& c, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> out(c.Bound(data.size()));
  out.resize(c.Compress(data, out));
  return out;
}

class CompressionTest : public ::testing::TestWithParam<const char*> {};

TEST_P(CompressionTest, AFlippedByteInTheDataIsAnError) {
  // Half incompressible bytes (stored as they are: a flip there changes the data alone),
  // half a repeated pattern.
  std::vector<uint8_t> data(64 * 1024);
  std::mt19937 random(7);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = i < data.size() / 2 ? static_cast<uint8_t>(random()) : static_cast<uint8_t>(i % 7);
  auto compressor = MakeCompressor(GetParam());
  auto decompressor = MakeDecompressor(GetParam());
  const std::vector<uint8_t> good = Compressed(*compressor, data);
  std::vector<uint8_t> back(data.size());
  decompressor->Decompress(good, back, "chunk");
  ASSERT_EQ(back, data);

  // In the middle of the incompressible half, past any header.
  std::vector<uint8_t> bad = good;
  bad[bad.size() / 4] ^= 0x10;
  EXPECT_THROW(decompressor->Decompress(bad, back, "chunk"), Error);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, CompressionTest, ::testing::Values("zstd", "zlib"));

}  // namespace
}  // namespace cstool
