// A CPU's records read from whole ring-buffer pages, wherever the pages come from: read
// from the file as they are (v6, and v7 without compression) or decompressed chunk by
// chunk (compressed v7). Memory stays bounded by a batch, one run or chunk (and the
// compressed bytes read for it) and at most 64 pages set aside per CPU (a few runs more
// with report -j, format/page_prefetch).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/uninitialized_array.h"
#include "format/compression.h"
#include "format/ring_page.h"
#include "format/trace_file_reader.h"

namespace cstool {

// Memory for a run of pages. Decompressed chunks charge what they hold to their file's
// budget (ChunkBudget), and give it back when the buffer goes.
class PageBuffer {
 public:
  PageBuffer() = default;
  ~PageBuffer() { Uncharge(); }
  PageBuffer(PageBuffer&& o) noexcept
      : bytes_(std::move(o.bytes_)), budget_(o.budget_), charged_(o.charged_) {
    o.budget_ = nullptr;
    o.charged_ = 0;
  }
  PageBuffer& operator=(PageBuffer&& o) noexcept {
    if (this != &o) {
      Uncharge();
      bytes_ = std::move(o.bytes_);
      budget_ = o.budget_;
      charged_ = o.charged_;
      o.budget_ = nullptr;
      o.charged_ = 0;
    }
    return *this;
  }
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;

  std::vector<uint8_t>& bytes() { return bytes_; }
  // Before growing bytes() past its capacity: charges the growth to `budget`, which may
  // hold at most `limit` bytes; false (nothing charged) if that would exceed it.
  bool Charge(std::atomic<uint64_t>* budget, uint64_t limit, uint64_t new_capacity);

 private:
  void Uncharge() {
    if (budget_ != nullptr) *budget_ -= charged_;
    budget_ = nullptr;
    charged_ = 0;
  }

  std::vector<uint8_t> bytes_;
  std::atomic<uint64_t>* budget_ = nullptr;
  uint64_t charged_ = 0;
};

// A run of whole pages, in the PageBuffer it was read into (or in nothing: `pages` empty).
struct PageRun {
  std::span<const uint8_t> pages;  // empty: the source is exhausted
  uint64_t file_offset = 0;        // of the first page, or of its compressed chunk
  int64_t lost_before = 0;         // -1: data before this run was skipped (salvage)
  bool in_place = false;           // pages lie at file_offset in the file (not decompressed)
};

class PageSource {
 public:
  virtual ~PageSource() = default;
  // Reads the next run into `buffer`, which holds the previous run, if any, until then.
  // (A prefetching source swaps in a buffer it filled ahead.)
  virtual PageRun NextRun(PageBuffer& buffer) = 0;
};

// Pages read from the file (`fd`, not owned), `run_bytes` (a multiple of the page size) at
// a time with pread: no page faults and no page-table churn, which walking a large file in
// its mapping costs. A buffer is made no larger than the data.
class ReadPageSource final : public PageSource {
 public:
  ReadPageSource(int fd, const std::string& path, uint64_t offset, uint64_t size,
                 uint64_t run_bytes);
  PageRun NextRun(PageBuffer& buffer) override;

 private:
  int fd_;
  std::string path_;
  uint64_t offset_;
  uint64_t end_;
  uint64_t run_bytes_;
};

// What the chunk buffers of one file may hold decompressed at once, together (prefetching
// workers charge it concurrently).
struct ChunkBudget {
  std::atomic<uint64_t>* held;
  uint64_t limit;
};

// One chunk as ChunkPageSource::ClaimChunk read it, for MakeRun to decompress.
struct ChunkClaim {
  std::span<const uint8_t> in;      // its compressed bytes
  std::vector<uint8_t> compressed;  // where `in` lies, when copied
  uint64_t at = 0;                  // the offset of its header
  uint32_t size = 0;                // the uncompressed bytes it states
  uint32_t index = 0;               // among its CPU's chunks
  std::string damage;               // found in its header already: nothing was read
  bool end = false;                 // no chunk: all were claimed, or the table was cut
};

// One CPU's compressed chunks (u32 count, then per chunk: u32 compressed size, u32
// uncompressed size, the compressed bytes), decompressed one at a time. With a salvage
// log, a damaged chunk is skipped (a gap of unknown size) and a chunk table cut short
// by the end of the file is read up to the cut; without one, both throw.
// The compressed bytes are read with pread, `read_bytes` or one chunk at a time, into a
// window of the source's own: read in the file's mapping instead, they had to be dropped
// from it behind the reader (memory would grow with the file), and those drops took 8 %
// of a report (madvise, about 0.3 ms each on a VM, where page-table changes are dear).
// Reading a chunk comes in two steps, so that several threads can decompress chunks of
// one CPU at once (format/page_prefetch): ClaimChunk, in order, and MakeRun, on any
// thread; NextRun does both.
class ChunkPageSource final : public PageSource {
 public:
  // `fd` (not owned) reads the file of `file_size` bytes; `label` names the data in
  // messages (the file, and its buffer if not the top one); `compression` names the
  // chunks' compressor ("zstd", "zlib").
  ChunkPageSource(int fd, uint64_t file_size, std::string label, uint64_t offset,
                  uint32_t page_size, std::string compression, int cpu, SalvageLog* salvage,
                  ChunkBudget budget, uint64_t read_bytes);
  PageRun NextRun(PageBuffer& buffer) override;

  // Reads the next chunk's header and bytes into `claim` (its bytes copied into it with
  // `copy`, else valid until the next call); one thread at a time. A cut table is a
  // salvage note and `claim.end`, or without salvage a DamagedDataError.
  void ClaimChunk(ChunkClaim& claim, bool copy);
  // Decompresses a claimed chunk into `buffer` with `decompressor`; any thread, any
  // order. Returns the chunk's damage (empty: none), for the caller to skip it under
  // salvage (SkippedChunkNote) or throw as a DamagedDataError.
  std::string MakeRun(const ChunkClaim& claim, PageBuffer& buffer,
                      Decompressor& decompressor) const;
  static std::string SkippedChunkNote(const std::string& damage);
  // A decompressor of the chunks' kind, for another thread's MakeRun.
  std::unique_ptr<Decompressor> NewDecompressor() const;
  bool salvages() const { return salvage_ != nullptr; }

 private:
  // The file's bytes [at, at + n) (within the file), read into the window unless there.
  const uint8_t* Bytes(uint64_t at, uint64_t n);

  int fd_;
  std::string label_;
  uint64_t pos_;  // next chunk header
  uint64_t end_;
  uint64_t read_bytes_;
  std::unique_ptr<uint8_t[]> window_;  // uninitialised: only what is read is touched
  uint64_t window_capacity_ = 0;
  uint64_t window_at_ = 0;  // the file offset of window_[0]
  uint64_t window_size_ = 0;
  uint32_t page_size_;
  std::string compression_;
  std::unique_ptr<Decompressor> decompressor_;  // NextRun's
  int cpu_;
  SalvageLog* salvage_;
  ChunkBudget budget_;
  uint64_t max_chunk_bytes_;
  uint32_t chunks_left_ = 0;
  uint32_t chunk_index_ = 0;
  bool loaded_ = false;
  ChunkClaim claim_;  // NextRun's
};

// The CpuRecordStream over a PageSource: decodes up to `pages_per_batch` pages per batch
// (from one run, and the pages of the run before that were set aside) and puts a loss
// marker before the first record after each gap.
//
// A page's header time is checked against its neighbours' before its records are given
// out (one flipped bit of a header time moves a whole page by up to centuries, which no
// later check can undo): a page 10 ms or more earlier than the page before it, or
// later than the two pages after it, is damage; so is one later than the single page after it at a
// CPU's end, where it is that or the last page going back and the forward jump is the likelier (a
// flipped high bit). Damage is an error, or under salvage a skipped page counted as a loss. To see
// two pages ahead across a run's end, the run's last pages are copied aside before the next run is
// read. A page whose neighbour is damaged too may go unnoticed.
class PageRecordStream final : public CpuRecordStream {
 public:
  PageRecordStream(std::unique_ptr<PageSource> source, int cpu, int long_size, uint32_t page_size,
                   uint32_t pages_per_batch, const std::string& path, SalvageLog* salvage);
  int cpu() const override { return cpu_; }
  std::span<const RawRecord> NextBatch() override;
  // The CPU's data was lost before its first page (damage): a gap of unknown size first.
  void LoseTheStart() { pending_lost_ = -1; }

 private:
  RawRecord* Buffer();
  // A page to decode, where it is and the gap before it.
  struct NextPage {
    const uint8_t* page;
    uint64_t offset;
    int64_t lost_before;
  };
  // A page of a run copied aside while the next run is read.
  struct CarriedPage {
    uint64_t offset;
    int64_t lost_before;
  };
  // Replaces run_ with the next run that holds pages, adding the gaps before it to
  // run_lost_; false once the source is exhausted.
  bool FetchRun();
  // Calls visit(page) on the pages not yet decoded that are in memory, the carried ones
  // and then run_'s, until it returns false.
  template <typename Visit>
  void ForVisiblePages(Visit visit) const;
  // The header times of the next two pages with records in memory; how many there are.
  int NextPageTimes(uint64_t times[2]) const;
  // Whether the next page can be judged: it holds no records, or two pages with records
  // follow it in memory.
  bool LookaheadComplete() const;
  // Copies what is left of run_ aside and reads runs until LookaheadComplete() or the
  // end; only while no record handed out points into run_.
  void ReadAhead();
  // Where run_'s page at run_pos_ is, as messages name it.
  uint64_t RunPageOffset() const;
  NextPage TakePage();
  // Throws (through pages_) if the next page, taken as `page`, is out of order with the
  // pages before and after it.
  void CheckPageTime(const uint8_t* page, uint64_t page_offset) const;

  std::unique_ptr<PageSource> source_;
  int cpu_;
  RingPageDecoder pages_;
  uint32_t pages_per_batch_;
  SalvageLog* salvage_;
  PageBuffer buffer_;
  PageRun run_;
  uint64_t run_pos_ = 0;  // bytes of run_ decoded
  int64_t pending_lost_ = 0;
  int64_t last_ts_ = 0;  // of the latest record returned
  bool have_last_ts_ = false;
  bool source_done_ = false;
  int64_t run_lost_ = 0;         // the gap before run_'s first page, until that page is taken
  uint64_t prev_page_time_ = 0;  // header time of the latest page whose records were kept
  bool have_prev_page_ = false;
  std::vector<uint8_t> carried_bytes_;  // whole pages
  std::vector<CarriedPage> carried_;
  size_t carried_next_ = 0;            // carried pages before it were taken
  UninitializedArray<RawRecord> buf_;  // allocated when the first page is decoded
};

// Pages per batch for a page size: about 16 KiB (four 4 KiB pages; one for larger
// pages), so the records buffer stays small whatever page size a damaged file claims.
uint32_t PagesPerBatch(uint32_t page_size);

}  // namespace cstool
