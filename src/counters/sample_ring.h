// The perf mmap ring buffer of a sampling event (perf_event_open(2), "MMAP layout"): one
// metadata page (struct perf_event_mmap_page) followed by 2^k data pages the kernel fills
// with records. The kernel advances data_head after writing a record; the reader loads it
// with acquire ordering (the record bytes are then visible), consumes the records up to it
// and publishes data_tail with release ordering (the kernel may then reuse that space).
// When the reader falls behind, the kernel drops samples and later writes one
// PERF_RECORD_LOST saying how many.
//
// cstool opens every sampling event with the sample_type and read_format below, so a
// sample record has one fixed layout: ip, pid/tid, time, cpu, then the group read (every
// member's value, leader first, with the group's enabled and running times).
// PERF_SAMPLE_PERIOD is deliberately absent: with it, the kernel reports every software
// event as an overflow of its own (perf_swevent_event() takes `nr` as the period).
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace cstool {

inline constexpr uint64_t kSampleType =
    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_READ;
inline constexpr uint64_t kGroupReadFormat =
    PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;

// One PERF_RECORD_SAMPLE of that layout.
struct RingSample {
  uint64_t ip = 0;
  int32_t pid = 0;
  int32_t tid = 0;
  uint64_t time = 0;  // the event's clock (cstool: CLOCK_MONOTONIC)
  uint32_t cpu = 0;
  uint64_t enabled_ns = 0;
  uint64_t running_ns = 0;
  std::vector<uint64_t> values;  // per group member, in opening order (leader first)
};

// What a ring has delivered so far.
struct RingStats {
  uint64_t samples = 0;
  uint64_t lost = 0;         // samples the kernel dropped, the buffer being full
  uint64_t throttles = 0;    // PERF_RECORD_THROTTLE: over perf_event_max_sample_rate
  uint64_t unthrottles = 0;  // PERF_RECORD_UNTHROTTLE
  uint64_t malformed = 0;    // records too short for their type, skipped
};

// A sample record (header included) of the layout above; nullopt when it is not a
// PERF_RECORD_SAMPLE or is too short for its group read.
std::optional<RingSample> ParseSampleRecord(std::span<const uint8_t> record);

// Reads the records of a ring mapped at `base`: the metadata page, then the data area
// the metadata page describes (data_offset/data_size; before Linux 4.1, the rest of the
// mapping after one page). Does not own the memory.
class SampleRingReader {
 public:
  SampleRingReader(void* base, size_t mapping_size, size_t page_size);

  // Consumes every record the kernel has published: samples are appended to `out`, the
  // other records counted. Records that wrap around the end of the data area are
  // reassembled.
  void Drain(std::vector<RingSample>* out);
  const RingStats& stats() const { return stats_; }

 private:
  // Copies `n` bytes at ring position `pos` (any 64-bit position; wraps) into `dst`.
  void CopyOut(uint64_t pos, size_t n, uint8_t* dst) const;

  perf_event_mmap_page* meta_;
  const uint8_t* data_;
  uint64_t size_;  // a power of two
  RingStats stats_;
  std::vector<uint8_t> record_;  // the record being parsed
};

// An owned mapping of a perf event's ring: 1 + data_pages pages (data_pages a power of
// two), unmapped on destruction.
class MappedRing {
 public:
  // nullopt with `*error` = errno when mmap(2) fails.
  static std::optional<MappedRing> Map(int fd, size_t data_pages, int* error);
  ~MappedRing();
  MappedRing(MappedRing&& other) noexcept;
  MappedRing& operator=(MappedRing&& other) noexcept;
  MappedRing(const MappedRing&) = delete;
  MappedRing& operator=(const MappedRing&) = delete;

  void Drain(std::vector<RingSample>* out) { reader_.Drain(out); }
  const RingStats& stats() const { return reader_.stats(); }

 private:
  MappedRing(void* base, size_t size, size_t page_size)
      : base_(base), size_(size), reader_(base, size, page_size) {}
  void* base_ = nullptr;
  size_t size_ = 0;
  SampleRingReader reader_;
};

}  // namespace cstool
