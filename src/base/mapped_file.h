// Read-only memory map of a whole file, followed by a zero-filled guard area so that
// a bounded over-read (e.g. a 4-byte event header at the very end of the file) touches
// mapped memory instead of faulting. Parsers still bounds-check against size().
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace cstool {

class MappedFile {
 public:
  // Throws cstool::Error if the file cannot be opened or mapped.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }
  // Drops the system pages up to the last one ending by offset + size from the resident
  // set, from a little before `offset` (what fault-around mapped again since the last
  // call): a sequential reader is done with them; the bytes stay readable.
  void Release(uint64_t offset, uint64_t size) const;

  // Files up to this size are pre-faulted when mapped (fast); larger ones fault in as
  // they are read, so RSS stays bounded for any file size.
  static constexpr size_t kPopulateLimit = size_t{1} << 20;

 private:
  std::string path_;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_ = 0;  // size of the whole reservation (file + guard)
};

}  // namespace cstool
