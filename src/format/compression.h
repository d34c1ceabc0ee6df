// The block compressors of trace-cmd's v7 files, by the name the file header gives:
// "zstd" (one zstd frame per block) and "zlib" (one zlib stream per block, as zlib's
// compress2/uncompress write and read it). A block is a metadata section or one chunk of
// a CPU's ring-buffer pages; each is compressed on its own, so chunks can be read (and
// written) independently.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace cstool {

class Decompressor {
 public:
  virtual ~Decompressor() = default;
  // Decompresses one block into `out`, which must hold exactly the block's
  // uncompressed size (the file states it). Throws cstool::Error naming `what` if the
  // block is damaged or does not fill `out`.
  virtual void Decompress(std::span<const uint8_t> in, std::span<uint8_t> out,
                          std::string_view what) = 0;
};

class Compressor {
 public:
  virtual ~Compressor() = default;
  // Most bytes Compress can write for `size` input bytes.
  virtual size_t Bound(size_t size) const = 0;
  // Compresses `in` into `out` (at least Bound(in.size()) bytes); returns the bytes
  // written. Throws cstool::Error on failure.
  virtual size_t Compress(std::span<const uint8_t> in, std::span<uint8_t> out) = 0;
  // The name and version the file header gives ("zstd", "1.5.4").
  virtual const char* name() const = 0;
  virtual std::string version() const = 0;
};

// True for the algorithms cstool reads and writes ("zstd", "zlib").
bool IsKnownCompression(std::string_view name);

// A decompressor for `name`; throws cstool::Error for an algorithm cstool does not know.
std::unique_ptr<Decompressor> MakeDecompressor(std::string_view name);

// A compressor for `name`; throws cstool::Error for an algorithm cstool does not know.
std::unique_ptr<Compressor> MakeCompressor(std::string_view name);

}  // namespace cstool
