#include "core/trace_file_options.h"

#include <fmt/core.h>

#include <cstring>
#include <fstream>

#include "core/errors.h"
#include "core/trace_file_format.h"

namespace cstool {
namespace {

class HeaderReader {
 public:
  explicit HeaderReader(const std::filesystem::path& path)
      : path_(path), in_(path, std::ios::binary) {
    if (!in_) throw Error(fmt::format("cannot open '{}': {}", path.string(), std::strerror(errno)));
  }
  std::string Bytes(uint64_t n) {
    if (n > (uint64_t{1} << 32)) Corrupt("section too large");
    std::string s(n, '\0');
    if (!in_.read(s.data(), static_cast<std::streamsize>(n))) Corrupt("truncated header");
    return s;
  }
  std::string CString() {
    std::string s;
    if (!std::getline(in_, s, '\0')) Corrupt("truncated header");
    return s;
  }
  template <typename T>
  T Number() {
    T v{};
    std::string b = Bytes(sizeof(T));
    std::memcpy(&v, b.data(), sizeof(T));
    return v;
  }
  void Skip(uint64_t n) {
    in_.seekg(static_cast<std::streamoff>(n), std::ios::cur);
    if (!in_) Corrupt("truncated header");
  }
  [[noreturn]] void Corrupt(const char* why) {
    throw Error(fmt::format("'{}' is not a readable trace.dat v6 file ({})", path_.string(), why));
  }

 private:
  std::filesystem::path path_;
  std::ifstream in_;
};

}  // namespace

std::vector<TraceFileOption> ReadTraceFileOptions(const std::filesystem::path& path) {
  HeaderReader r(path);
  if (r.Bytes(3) != tracefile::kMagic || r.Bytes(7) != tracefile::kTracing) r.Corrupt("bad magic");
  if (r.CString() != tracefile::kVersion) r.Corrupt("not version 6");
  if (r.Number<uint8_t>() != 0) r.Corrupt("big endian");
  r.Number<uint8_t>();   // long size
  r.Number<uint32_t>();  // page size
  if (r.CString() != tracefile::kHeaderPage) r.Corrupt("no header_page");
  r.Skip(r.Number<uint64_t>());
  if (r.CString() != tracefile::kHeaderEvent) r.Corrupt("no header_event");
  r.Skip(r.Number<uint64_t>());
  for (uint32_t n = r.Number<uint32_t>(); n > 0; --n) r.Skip(r.Number<uint64_t>());
  for (uint32_t systems = r.Number<uint32_t>(); systems > 0; --systems) {
    r.CString();
    for (uint32_t n = r.Number<uint32_t>(); n > 0; --n) r.Skip(r.Number<uint64_t>());
  }
  r.Skip(r.Number<uint32_t>());  // kallsyms
  r.Skip(r.Number<uint32_t>());  // printk formats
  r.Skip(r.Number<uint64_t>());  // saved cmdlines
  r.Number<uint32_t>();          // cpus
  std::vector<TraceFileOption> options;
  if (r.Bytes(10) != tracefile::kOptionsTag) return options;
  for (;;) {
    auto id = r.Number<uint16_t>();
    if (id == tracefile::kOptionDone) break;
    auto size = r.Number<uint32_t>();
    options.push_back({id, r.Bytes(size)});
  }
  return options;
}

std::optional<std::string> ReadCstoolInfoJson(const std::filesystem::path& path) {
  for (auto& o : ReadTraceFileOptions(path))
    if (o.id == tracefile::kOptionCstoolInfo) return std::move(o.payload);
  return std::nullopt;
}

}  // namespace cstool
