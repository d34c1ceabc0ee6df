// Bounds-checked sequential reader over a byte span in host byte order. Every failure
// throws cstool::Error naming the file and the byte offset of the problem.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "base/errors.h"

namespace cstool {

class ByteCursor {
 public:
  // What the bytes are: the whole file (running past their end is the file's truncation)
  // or a part of it that says its own size (a section, an option's body: running past
  // that is a corrupt size, and the end is not where the file ends).
  enum class Extent { kWholeFile, kPart };
  ByteCursor(std::span<const uint8_t> bytes, std::string_view file, size_t pos = 0,
             Extent extent = Extent::kWholeFile)
      : bytes_(bytes), file_(file), pos_(pos), extent_(extent) {}
  ByteCursor(std::span<const uint8_t> bytes, std::string_view file, Extent extent)
      : ByteCursor(bytes, file, 0, extent) {}

  size_t pos() const { return pos_; }
  size_t size() const { return bytes_.size(); }
  size_t remaining() const { return pos_ <= bytes_.size() ? bytes_.size() - pos_ : 0; }
  void Seek(size_t pos, std::string_view what) {
    if (pos > bytes_.size() && extent_ == Extent::kPart)
      throw Error(fmt::format("{}: corrupt file: {} at offset {}, beyond its section's end at {}",
                              file_, what, pos, bytes_.size()));
    if (pos > bytes_.size())
      throw Error(fmt::format("{}: truncated at offset {} ({}: offset {} is beyond the end)", file_,
                              bytes_.size(), what, pos));
    pos_ = pos;
  }

  void Need(uint64_t n, std::string_view what) const {
    // Sizes beyond any real trace file (4 GiB header sections) can only be corrupt.
    if (n > remaining() && n > (uint64_t{1} << 32))
      throw Error(fmt::format("{}: corrupt file at offset {}: implausible {} size {}", file_, pos_,
                              what, n));
    if (n > remaining() && extent_ == Extent::kPart)
      throw Error(
          fmt::format("{}: corrupt file at offset {}: {} needs {} bytes, its section "
                      "has {} left",
                      file_, pos_, what, n, remaining()));
    // The offset first is where the file ends, as in every other "truncated" message.
    if (n > remaining())
      throw Error(
          fmt::format("{}: truncated at offset {} ({}: expected {} bytes at offset {}, "
                      "file ends)",
                      file_, bytes_.size(), what, n, pos_));
  }

  template <typename T>
  T Read(std::string_view what) {
    Need(sizeof(T), what);
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  uint8_t U8(std::string_view what) { return Read<uint8_t>(what); }
  uint16_t U16(std::string_view what) { return Read<uint16_t>(what); }
  uint32_t U32(std::string_view what) { return Read<uint32_t>(what); }
  uint64_t U64(std::string_view what) { return Read<uint64_t>(what); }

  std::string_view Bytes(uint64_t n, std::string_view what) {
    Need(n, what);
    std::string_view v(reinterpret_cast<const char*>(bytes_.data() + pos_), n);
    pos_ += n;
    return v;
  }

  // A NUL-terminated string of at most `max` characters (the NUL is consumed).
  std::string_view CString(size_t max, std::string_view what) {
    const size_t start = pos_;
    const size_t limit = std::min(remaining(), max + 1);
    const void* nul = std::memchr(bytes_.data() + pos_, 0, limit);
    if (nul == nullptr) {
      if (limit < max + 1 && extent_ == Extent::kPart)
        throw Error(fmt::format("{}: corrupt file at offset {}: {} runs past its section's end",
                                file_, start, what));
      if (limit < max + 1)
        throw Error(fmt::format("{}: truncated at offset {} ({}: unterminated string)", file_,
                                bytes_.size(), what));
      throw Error(fmt::format("{}: corrupt {} at offset {}: string longer than {} bytes", file_,
                              what, start, max));
    }
    const size_t len = static_cast<const uint8_t*>(nul) - (bytes_.data() + pos_);
    pos_ += len + 1;
    return {reinterpret_cast<const char*>(bytes_.data() + start), len};
  }

  // Consumes `literal` (including any embedded NUL) or throws.
  void Expect(std::string_view literal, std::string_view what) {
    const size_t start = pos_;
    std::string_view got = Bytes(literal.size(), what);
    if (got != literal)
      throw Error(
          fmt::format("{}: corrupt file at offset {}: expected {} marker", file_, start, what));
  }

  // The name errors give the bytes: the file's path, or the section's label.
  std::string_view file() const { return file_; }

  [[noreturn]] void Fail(size_t at, std::string_view msg) const {
    throw Error(fmt::format("{}: corrupt file at offset {}: {}", file_, at, msg));
  }

 private:
  std::span<const uint8_t> bytes_;
  std::string_view file_;
  size_t pos_;
  Extent extent_;
};

}  // namespace cstool
