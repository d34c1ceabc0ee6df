#include "export/trace_id.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "base/mapped_file.h"

namespace cstool {
namespace {

// 64-bit multiply-rotate over 8-byte words (not cryptographic: it tells recordings
// apart, it does not defend against forged ones), at memory speed.
class Fingerprint {
 public:
  explicit Fingerprint(size_t size) : h_(0xcbf29ce484222325ull ^ (size * kMul)) {}
  // Pieces before the last one must be multiples of 8 bytes long.
  void Add(const uint8_t* data, size_t size) {
    size_t i = 0;
    for (; i + 8 <= size; i += 8) {
      uint64_t w;
      std::memcpy(&w, data + i, 8);
      h_ = (h_ ^ w) * kMul;
      h_ ^= h_ >> 29;
    }
    for (; i < size; ++i) h_ = (h_ ^ data[i]) * kMul;
  }
  uint64_t Value() const {
    uint64_t h = (h_ ^ (h_ >> 32)) * kMul;
    return h ^ (h >> 29);
  }

 private:
  static constexpr uint64_t kMul = 0x9e3779b97f4a7c15ull;
  uint64_t h_;
};

}  // namespace

std::string TraceIdOf(const std::string& path) {
  MappedFile file(path);
  // In pieces, each dropped from memory once read: RSS stays small for any file size.
  constexpr size_t kPiece = size_t{16} << 20;
  Fingerprint fp(file.size());
  for (size_t offset = 0; offset < file.size(); offset += kPiece) {
    const size_t n = std::min(kPiece, file.size() - offset);
    fp.Add(file.data() + offset, n);
    file.Release(offset, n);
  }
  return fmt::format("{:016x}", fp.Value());
}

std::string LocalHostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "unknown";
  return name;
}

}  // namespace cstool
