#include "format/compression.h"

#include <fmt/format.h>
#include <zlib.h>
#include <zstd.h>

#include "base/errors.h"

namespace cstool {
namespace {

struct ZstdDCtxFree {
  void operator()(ZSTD_DCtx* c) const { ZSTD_freeDCtx(c); }
};
struct ZstdCCtxFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};

class ZstdDecompressor final : public Decompressor {
 public:
  ZstdDecompressor() : ctx_(ZSTD_createDCtx()) {
    if (!ctx_) throw Error("out of memory allocating a zstd decompression context");
  }
  void Decompress(std::span<const uint8_t> in, std::span<uint8_t> out,
                  std::string_view what) override {
    const size_t got =
        ZSTD_decompressDCtx(ctx_.get(), out.data(), out.size(), in.data(), in.size());
    if (ZSTD_isError(got)) throw Error(fmt::format("{}: zstd: {}", what, ZSTD_getErrorName(got)));
    if (got != out.size())
      throw Error(
          fmt::format("{}: zstd block holds {} bytes, the file says {}", what, got, out.size()));
  }

 private:
  std::unique_ptr<ZSTD_DCtx, ZstdDCtxFree> ctx_;  // reused: one per stream
};

class ZlibDecompressor final : public Decompressor {
 public:
  void Decompress(std::span<const uint8_t> in, std::span<uint8_t> out,
                  std::string_view what) override {
    uLongf got = out.size();
    const int rc = ::uncompress(out.data(), &got, in.data(), in.size());
    if (rc != Z_OK) throw Error(fmt::format("{}: zlib: {}", what, zError(rc)));
    if (got != out.size())
      throw Error(
          fmt::format("{}: zlib block holds {} bytes, the file says {}", what, got, out.size()));
  }
};

class ZstdCompressor final : public Compressor {
 public:
  ZstdCompressor() : ctx_(ZSTD_createCCtx()) {
    if (!ctx_) throw Error("out of memory allocating a zstd compression context");
    // Level 1: ring-buffer pages compress about as well at 1 as at the default 3, and
    // the recorder must keep up with the kernel.
    ZSTD_CCtx_setParameter(ctx_.get(), ZSTD_c_compressionLevel, 1);
    // A frame checksum, which every zstd reader (libtracecmd's too) verifies: without it a
    // flipped bit in stored data decompresses silently into other events.
    ZSTD_CCtx_setParameter(ctx_.get(), ZSTD_c_checksumFlag, 1);
  }
  size_t Bound(size_t size) const override { return ZSTD_compressBound(size); }
  size_t Compress(std::span<const uint8_t> in, std::span<uint8_t> out) override {
    const size_t n = ZSTD_compress2(ctx_.get(), out.data(), out.size(), in.data(), in.size());
    if (ZSTD_isError(n)) throw Error(fmt::format("zstd: {}", ZSTD_getErrorName(n)));
    return n;
  }
  const char* name() const override { return "zstd"; }
  std::string version() const override { return ZSTD_versionString(); }

 private:
  std::unique_ptr<ZSTD_CCtx, ZstdCCtxFree> ctx_;
};

class ZlibCompressor final : public Compressor {
 public:
  size_t Bound(size_t size) const override { return ::compressBound(size); }
  size_t Compress(std::span<const uint8_t> in, std::span<uint8_t> out) override {
    uLongf n = out.size();
    // Level 1 for the same reason as zstd's.
    const int rc = ::compress2(out.data(), &n, in.data(), in.size(), 1);
    if (rc != Z_OK) throw Error(fmt::format("zlib: {}", zError(rc)));
    return n;
  }
  const char* name() const override { return "zlib"; }
  std::string version() const override { return zlibVersion(); }
};

}  // namespace

bool IsKnownCompression(std::string_view name) { return name == "zstd" || name == "zlib"; }

std::unique_ptr<Decompressor> MakeDecompressor(std::string_view name) {
  if (name == "zstd") return std::make_unique<ZstdDecompressor>();
  if (name == "zlib") return std::make_unique<ZlibDecompressor>();
  throw Error(fmt::format("unknown compression \"{}\" (cstool knows zstd and zlib)", name));
}

std::unique_ptr<Compressor> MakeCompressor(std::string_view name) {
  if (name == "zstd") return std::make_unique<ZstdCompressor>();
  if (name == "zlib") return std::make_unique<ZlibCompressor>();
  throw Error(fmt::format("unknown compression \"{}\" (cstool knows zstd and zlib)", name));
}

}  // namespace cstool
