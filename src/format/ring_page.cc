#include "format/ring_page.h"

#include <fmt/format.h>

#include <cstring>

#include "base/errors.h"
#include "format/trace_file_format.h"

namespace cstool {
namespace {

inline uint32_t Load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Upper timestamp bits an absolute time-stamp event does not carry (kernel TS_MSB).
constexpr uint64_t kTsMsbMask = ~((uint64_t{1} << 59) - 1);

}  // namespace

RingPageDecoder::RingPageDecoder(int long_size, uint32_t page_size, std::string file)
    : long_size_(long_size),
      page_size_(page_size),
      header_size_(8 + static_cast<uint32_t>(long_size)),
      file_(std::move(file)) {}

void RingPageDecoder::Corrupt(uint64_t offset, int32_t cpu, const std::string& what) const {
  throw DamagedDataError(fmt::format("{}: corrupt ring-buffer page at offset {} (CPU {}): {}",
                                     file_, offset, cpu, what));
}

uint64_t RingPageDecoder::PageTime(const uint8_t* page) { return Load64(page); }

uint32_t RingPageDecoder::CommitOf(const uint8_t* page) const {
  // The commit field is a long; its upper bits (past the page size) carry nothing here.
  return long_size_ == 8 ? static_cast<uint32_t>(Load64(page + 8)) : Load32(page + 8);
}

bool RingPageDecoder::HoldsData(const uint8_t* page) const {
  return (CommitOf(page) & ~(tracefile::kPageMissedEvents | tracefile::kPageMissedStored)) != 0;
}

uint32_t RingPageDecoder::Decode(const uint8_t* page, uint64_t file_offset, int32_t cpu,
                                 RawRecord* out, int64_t* lost_out) const {
  uint64_t ts = Load64(page);
  const uint32_t commit_lo = CommitOf(page);
  const uint32_t flags = commit_lo & (tracefile::kPageMissedEvents | tracefile::kPageMissedStored);
  const uint32_t commit = commit_lo & ~flags;
  const uint32_t capacity = page_size_ - header_size_;
  const uint8_t* data = page + header_size_;
  const uint64_t data_offset = file_offset + header_size_;
  if (commit > capacity)
    Corrupt(file_offset + 8, cpu,
            fmt::format("commit {} exceeds the page's {} data bytes", commit, capacity));

  int64_t& lost = *lost_out;
  lost = 0;
  uint32_t n = 0;
  if (flags & tracefile::kPageMissedEvents) {
    lost = -1;
    if (flags & tracefile::kPageMissedStored) {
      if (commit + static_cast<uint32_t>(long_size_) > capacity)
        Corrupt(data_offset + commit, cpu, "missed-events count lies beyond the page");
      lost = long_size_ == 8 ? static_cast<int64_t>(Load64(data + commit))
                             : static_cast<int64_t>(Load32(data + commit));
      if (lost <= 0) lost = -1;
    }
  }

  uint32_t idx = 0;
  while (idx < commit) {
    if (commit - idx < 4) Corrupt(data_offset + idx, cpu, "event header crosses the commit end");
    const uint32_t hdr = Load32(data + idx);
    const uint32_t type_len = hdr & 31;
    const uint32_t delta = hdr >> 5;
    if (type_len >= 1 && type_len <= tracefile::kRbTypeDataMax) {
      const uint32_t len = type_len * 4;
      if (len > commit - idx - 4)
        Corrupt(data_offset + idx, cpu,
                fmt::format("event of {} bytes crosses the commit end", len));
      ts += delta;
      out[n++] = RawRecord{static_cast<int64_t>(ts), data + idx + 4, len, cpu, 0};
      idx += 4 + len;
      continue;
    }
    if (commit - idx < 8)
      Corrupt(data_offset + idx, cpu, "extended event header crosses the commit end");
    const uint32_t array0 = Load32(data + idx + 4);
    switch (type_len) {
      case 0: {
        if (array0 < 4) Corrupt(data_offset + idx, cpu, "event length below 4");
        const uint32_t len = array0 - 4;
        const uint32_t span = (len + 3) & ~3u;
        if (span < len || span > commit - idx - 8)
          Corrupt(data_offset + idx, cpu,
                  fmt::format("event of {} bytes crosses the commit end", len));
        ts += delta;
        out[n++] = RawRecord{static_cast<int64_t>(ts), data + idx + 8, len, cpu, 0};
        idx += 8 + span;
        break;
      }
      case tracefile::kRbTypePadding:
        if (delta == 0) return n;  // the rest of the page is unused
        if (array0 > commit - idx - 4)
          Corrupt(data_offset + idx, cpu, "padding crosses the commit end");
        idx += 4 + ((array0 + 3) & ~3u);
        break;
      case tracefile::kRbTypeTimeExtend:
        ts += (uint64_t{array0} << tracefile::kRbTsShift) + delta;
        idx += 8;
        break;
      case tracefile::kRbTypeTimeStamp: {
        const uint64_t abs = (uint64_t{array0} << tracefile::kRbTsShift) + delta;
        ts = (ts & kTsMsbMask) | abs;
        idx += 8;
        break;
      }
      default:
        Corrupt(data_offset + idx, cpu, fmt::format("unknown event type_len {}", type_len));
    }
  }
  return n;
}

}  // namespace cstool
