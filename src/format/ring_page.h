// Decoding of one raw ftrace ring-buffer page (the unit stored in trace.dat flyrecord
// data) in host byte order, with every length checked against the page.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format/trace_file_reader.h"

namespace cstool {

class RingPageDecoder {
 public:
  // `long_size` is the kernel's long (size of the page header's commit field).
  RingPageDecoder(int long_size, uint32_t page_size, std::string file);

  uint32_t page_size() const { return page_size_; }
  uint32_t header_size() const { return header_size_; }

  // Most records one page can hold (each takes at least 8 bytes).
  uint32_t max_records() const { return (page_size_ - header_size_) / 8 + 1; }

  // Writes the data records of `page` (page_size() readable bytes) to out[0...] with
  // cpu = `cpu` (out must have room for max_records()) and returns how many. *lost is
  // set to the events lost before this page: 0 none, -1 unknown count, else the count.
  // `file_offset` (of the page) is used in error messages. Throws cstool::Error if the
  // page is corrupt.
  uint32_t Decode(const uint8_t* page, uint64_t file_offset, int32_t cpu, RawRecord* out,
                  int64_t* lost) const;

  // The time stamp in `page`'s header (its first record's time, before any delta).
  static uint64_t PageTime(const uint8_t* page);
  // Whether `page`'s header says it holds data (a commit above zero).
  bool HoldsData(const uint8_t* page) const;

  // Throws the cstool::Error of a corrupt page: `what` is wrong at `offset`.
  [[noreturn]] void Corrupt(uint64_t offset, int32_t cpu, const std::string& what) const;

 private:
  uint32_t CommitOf(const uint8_t* page) const;

  int long_size_;
  uint32_t page_size_;
  uint32_t header_size_;
  std::string file_;
};

}  // namespace cstool
