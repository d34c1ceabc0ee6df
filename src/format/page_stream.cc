#include "format/page_stream.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "base/duration_text.h"
#include "base/errors.h"

namespace cstool {
namespace {

constexpr uint32_t kBatchBytes = 16 * 1024;
// trace-cmd writes chunks of a few pages and cstool of up to 64; larger ones can only
// come from damage.
constexpr uint64_t kMaxChunkPages = 256;
constexpr uint64_t kMaxChunkBytes = 4u << 20;

uint32_t Load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// The most compressed bytes zlib or zstd make of `size` bytes, with room to spare: zstd's
// bound is size + size/256 + up to 64 (ZSTD_COMPRESSBOUND), zlib's size + size/4096 +
// size/16384 + 13 (compressBound).
uint64_t MaxCompressedBytes(uint64_t size) { return size + size / 128 + 128; }

// Reads the file's bytes [offset, offset + n) into `out`.
void ReadAt(int fd, const std::string& path, uint64_t offset, uint8_t* out, uint64_t n) {
  uint64_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, out + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0)
      throw Error(fmt::format("{}: cannot read at offset {}: {}", path, offset + got,
                              r == 0 ? "file ends" : std::strerror(errno)));
    got += static_cast<uint64_t>(r);
  }
}

// Combines two loss counts (-1 = unknown).
int64_t AddLost(int64_t a, int64_t b) {
  if (a == 0) return b;
  if (b == 0) return a;
  if (a < 0 || b < 0) return -1;
  return a + b;
}

}  // namespace

uint32_t PagesPerBatch(uint32_t page_size) {
  return std::clamp<uint32_t>(kBatchBytes / page_size, 1, 4);
}

// ---- PageBuffer --------------------------------------------------------------------

bool PageBuffer::Charge(std::atomic<uint64_t>* budget, uint64_t limit, uint64_t new_capacity) {
  if (new_capacity <= bytes_.capacity()) return true;
  const uint64_t grow = new_capacity - bytes_.capacity();
  if (budget->fetch_add(grow) + grow > limit) {
    *budget -= grow;
    return false;
  }
  budget_ = budget;  // a buffer serves one file: always the same budget
  charged_ += grow;
  return true;
}

// ---- ReadPageSource --------------------------------------------------------------

ReadPageSource::ReadPageSource(int fd, const std::string& path, uint64_t offset, uint64_t size,
                               uint64_t run_bytes)
    : fd_(fd), path_(path), offset_(offset), end_(offset + size), run_bytes_(run_bytes) {
  if (size > 0)
    ::posix_fadvise(fd_, static_cast<off_t>(offset), static_cast<off_t>(size),
                    POSIX_FADV_SEQUENTIAL);
}

PageRun ReadPageSource::NextRun(PageBuffer& buffer) {
  if (offset_ >= end_) return {};
  std::vector<uint8_t>& bytes = buffer.bytes();
  if (bytes.empty()) bytes.resize(std::min(run_bytes_, end_ - offset_));
  const uint64_t n = std::min<uint64_t>(bytes.size(), end_ - offset_);
  ReadAt(fd_, path_, offset_, bytes.data(), n);
  PageRun run{{bytes.data(), n}, offset_, 0, true};
  offset_ += n;
  return run;
}

// ---- ChunkPageSource -------------------------------------------------------------

ChunkPageSource::ChunkPageSource(int fd, uint64_t file_size, std::string label, uint64_t offset,
                                 uint32_t page_size, std::string compression, int cpu,
                                 SalvageLog* salvage, ChunkBudget budget, uint64_t read_bytes)
    : fd_(fd),
      label_(std::move(label)),
      pos_(offset),
      // trace-cmd 3.1's stated size leaves out the 4-byte chunk count, so the chunk table
      // itself says where the data ends; the file's end bounds it.
      end_(file_size),
      read_bytes_(read_bytes),
      page_size_(page_size),
      compression_(std::move(compression)),
      decompressor_(MakeDecompressor(compression_)),
      cpu_(cpu),
      salvage_(salvage),
      budget_(budget),
      max_chunk_bytes_(std::max(kMaxChunkBytes, kMaxChunkPages * page_size)) {}

const uint8_t* ChunkPageSource::Bytes(uint64_t at, uint64_t n) {
  if (at >= window_at_ && at - window_at_ + n <= window_size_)
    return window_.get() + (at - window_at_);
  // Read on from `at`: the chunks are read in file order, so what the window held before
  // is done with.
  const uint64_t size = std::min(std::max(n, read_bytes_), end_ - at);
  if (size > window_capacity_) {
    window_ = std::make_unique_for_overwrite<uint8_t[]>(size);
    window_capacity_ = size;
  }
  window_at_ = at;
  window_size_ = 0;  // until the read is whole
  ReadAt(fd_, label_, at, window_.get(), size);
  window_size_ = size;
  return window_.get();
}

void ChunkPageSource::ClaimChunk(ChunkClaim& claim, bool copy) {
  const std::string& path = label_;
  claim.end = false;
  claim.damage.clear();
  claim.at = pos_;
  auto cut_short = [&](const std::string& what) {
    if (salvage_ == nullptr) throw DamagedDataError(what);
    salvage_->AddCut(cpu_, fmt::format("{}; read CPU {} up to chunk {}", what, cpu_, chunk_index_));
    chunks_left_ = 0;
    claim.end = true;
  };
  if (!loaded_) {
    loaded_ = true;
    if (end_ - pos_ < 4)
      return cut_short(
          fmt::format("{}: truncated at offset {} (CPU {} chunk count)", path, end_, cpu_));
    chunks_left_ = Load32(Bytes(pos_, 4));
    pos_ += 4;
  }
  if (chunks_left_ == 0) {
    claim.end = true;
    return;
  }
  claim.at = pos_;
  if (end_ - pos_ < 8)
    return cut_short(fmt::format("{}: truncated at offset {} (CPU {} chunk {} header at offset {})",
                                 path, end_, cpu_, chunk_index_, pos_));
  const uint8_t* header = Bytes(pos_, 8);
  const uint32_t zsize = Load32(header);
  const uint32_t size = Load32(header + 4);
  if (end_ - pos_ - 8 < zsize)
    return cut_short(fmt::format(
        "{}: truncated at offset {} (CPU {} chunk {} at offset {}: {} compressed bytes)", path,
        end_, cpu_, chunk_index_, pos_, zsize));
  const uint64_t in_at = pos_ + 8;
  pos_ = in_at + zsize;
  --chunks_left_;
  claim.index = chunk_index_++;
  claim.size = size;
  claim.in = {};
  if (size == 0 || size % page_size_ != 0 || size > max_chunk_bytes_) {
    claim.damage = fmt::format(
        "{}: corrupt file at offset {}: CPU {} chunk {} claims {} uncompressed bytes (not a "
        "multiple of the page size {} up to {})",
        path, claim.at, cpu_, claim.index, size, page_size_, max_chunk_bytes_);
  } else if (zsize > MaxCompressedBytes(size)) {
    // Checked before the bytes are read: a damaged size would otherwise make the window
    // as large as the rest of the file.
    claim.damage = fmt::format(
        "{}: corrupt file at offset {}: CPU {} chunk {} claims {} compressed bytes for {} "
        "uncompressed (more than zlib or zstd can make of them)",
        path, claim.at, cpu_, claim.index, zsize, size);
  } else {
    const uint8_t* in = Bytes(in_at, zsize);
    if (copy) {
      claim.compressed.assign(in, in + zsize);
      in = claim.compressed.data();
    }
    claim.in = {in, zsize};
  }
}

std::string ChunkPageSource::MakeRun(const ChunkClaim& claim, PageBuffer& buffer,
                                     Decompressor& decompressor) const {
  if (!claim.damage.empty()) return claim.damage;
  // Every CPU holds a chunk or a few while the merge runs: together they stay bounded.
  if (!buffer.Charge(budget_.held, budget_.limit, claim.size))
    throw Error(fmt::format(
        "{}: corrupt file at offset {}: CPU {} chunk {} of {} bytes would make the CPUs' "
        "chunks hold more than {} bytes at once",
        label_, claim.at, cpu_, claim.index, claim.size, budget_.limit));
  std::vector<uint8_t>& bytes = buffer.bytes();
  if (claim.size > bytes.capacity()) bytes.reserve(claim.size);
  bytes.resize(claim.size);
  try {
    decompressor.Decompress(claim.in, bytes,
                            fmt::format("{}: corrupt file at offset {} (CPU {} chunk {})", label_,
                                        claim.at, cpu_, claim.index));
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

std::string ChunkPageSource::SkippedChunkNote(const std::string& damage) {
  return fmt::format("{}; chunk skipped, counted as lost events", damage);
}

std::unique_ptr<Decompressor> ChunkPageSource::NewDecompressor() const {
  return MakeDecompressor(compression_);
}

PageRun ChunkPageSource::NextRun(PageBuffer& buffer) {
  int64_t lost = 0;
  for (;;) {
    ClaimChunk(claim_, /*copy=*/false);
    // Damage after the last good chunk still counts as a gap.
    if (claim_.end) return lost != 0 ? PageRun{{}, claim_.at, lost, false} : PageRun{};
    const std::string damage = MakeRun(claim_, buffer, *decompressor_);
    if (damage.empty())
      return {{buffer.bytes().data(), buffer.bytes().size()}, claim_.at, lost, false};
    if (salvage_ == nullptr) throw DamagedDataError(damage);
    salvage_->Add(SkippedChunkNote(damage));
    lost = -1;
  }
}

// ---- PageRecordStream ------------------------------------------------------------

PageRecordStream::PageRecordStream(std::unique_ptr<PageSource> source, int cpu, int long_size,
                                   uint32_t page_size, uint32_t pages_per_batch,
                                   const std::string& path, SalvageLog* salvage)
    : source_(std::move(source)),
      cpu_(cpu),
      pages_(long_size, page_size, path),
      pages_per_batch_(pages_per_batch),
      salvage_(salvage) {}

RawRecord* PageRecordStream::Buffer() {
  // Room for pages_per_batch_ pages of records plus one loss marker per page.
  if (!buf_)
    buf_ = MakeUninitializedArray<RawRecord>(size_t{pages_per_batch_} * (pages_.max_records() + 1) +
                                             1);
  return buf_.get();
}

bool PageRecordStream::FetchRun() {
  while (!source_done_) {
    run_ = source_->NextRun(buffer_);
    run_pos_ = 0;
    if (run_.lost_before != 0) run_lost_ = AddLost(run_lost_, run_.lost_before);
    // A run is whole pages; anything shorter than a page at its end is not read.
    if (run_.pages.size() >= pages_.page_size()) return true;
    // An empty run after a gap is a skipped chunk, and more may follow; without one, the end.
    if (run_.pages.empty() && run_.lost_before == 0) source_done_ = true;
  }
  return false;
}

template <typename Visit>
void PageRecordStream::ForVisiblePages(Visit visit) const {
  const uint32_t page_size = pages_.page_size();
  for (size_t i = carried_next_; i < carried_.size(); ++i)
    if (!visit(carried_bytes_.data() + i * page_size)) return;
  for (uint64_t at = run_pos_; at + page_size <= run_.pages.size(); at += page_size)
    if (!visit(run_.pages.data() + at)) return;
}

int PageRecordStream::NextPageTimes(uint64_t times[2]) const {
  int known = 0;
  ForVisiblePages([&](const uint8_t* page) {
    if (pages_.HoldsData(page)) times[known++] = RingPageDecoder::PageTime(page);
    return known < 2;
  });
  return known;
}

bool PageRecordStream::LookaheadComplete() const {
  int seen = 0, with_records = 0;
  ForVisiblePages([&](const uint8_t* page) {
    if (seen++ == 0) {
      if (!pages_.HoldsData(page)) return false;  // nothing to judge
      with_records = 2;                           // counts down the two pages it needs
      return true;
    }
    with_records -= pages_.HoldsData(page) ? 1 : 0;
    return with_records > 0;
  });
  return seen > 0 && with_records <= 0;
}

void PageRecordStream::ReadAhead() {
  const uint32_t page_size = pages_.page_size();
  // The carried pages taken are done with: nothing handed out points into them now.
  carried_bytes_.erase(carried_bytes_.begin(),
                       carried_bytes_.begin() + static_cast<ptrdiff_t>(carried_next_ * page_size));
  carried_.erase(carried_.begin(), carried_.begin() + static_cast<ptrdiff_t>(carried_next_));
  carried_next_ = 0;
  // Past this many pages aside (a long stretch of empty ones), the page is judged by
  // what is known: the pages aside stay bounded per CPU.
  constexpr size_t kMaxCarriedPages = 64;
  while (!source_done_ && !LookaheadComplete()) {
    const size_t rest =
        (run_.pages.size() - std::min<size_t>(run_pos_, run_.pages.size())) / page_size;
    if (carried_.size() + rest > kMaxCarriedPages) break;
    for (; run_pos_ + page_size <= run_.pages.size(); run_pos_ += page_size) {
      const uint8_t* page = run_.pages.data() + run_pos_;
      carried_bytes_.insert(carried_bytes_.end(), page, page + page_size);
      carried_.push_back({RunPageOffset(), run_lost_});
      run_lost_ = 0;
    }
    FetchRun();
  }
}

uint64_t PageRecordStream::RunPageOffset() const {
  // Pages in place lie at their file offset; decompressed ones are named by their chunk.
  return run_.file_offset + (run_.in_place ? run_pos_ : 0);
}

PageRecordStream::NextPage PageRecordStream::TakePage() {
  if (carried_next_ < carried_.size()) {
    const CarriedPage& c = carried_[carried_next_];
    const uint8_t* page = carried_bytes_.data() + carried_next_ * pages_.page_size();
    ++carried_next_;
    return {page, c.offset, c.lost_before};
  }
  NextPage next{run_.pages.data() + run_pos_, RunPageOffset(), run_lost_};
  run_lost_ = 0;
  run_pos_ += pages_.page_size();
  return next;
}

void PageRecordStream::CheckPageTime(const uint8_t* page, uint64_t page_offset) const {
  uint64_t next[2];
  const int known = NextPageTimes(next);
  const uint64_t t = RingPageDecoder::PageTime(page);
  const uint64_t prev = prev_page_time_;
  // Only a page 10 ms or more out of order is damage: one flipped bit from bit 24 up moves
  // it that far, while the ring buffer's own races (an interrupted writer's stamp) are
  // microseconds; a clock stepped back or a buffer reset moves every page after it too,
  // which the rules below do not call damage.
  constexpr uint64_t kStep = 10'000'000;
  auto before = [](uint64_t a, uint64_t b) { return a < b && b - a >= kStep; };
  // Back before the previous page, unless the next page is back there too (then that
  // page is the odd one, or both are damaged).
  if (have_prev_page_ && before(t, prev) && (known == 0 || next[0] >= prev))
    pages_.Corrupt(page_offset, cpu_,
                   fmt::format("its time stamp {} goes back before the previous page's {}",
                               TraceTimeText(t), TraceTimeText(prev)));
  const bool ahead = known == 2   ? before(next[0], t) && before(next[1], t)
                     : known == 1 ? before(next[0], t) && have_prev_page_ && next[0] >= prev
                                  : false;
  if (ahead)
    pages_.Corrupt(page_offset, cpu_,
                   fmt::format("its time stamp {} lies after the next page's {}", TraceTimeText(t),
                               TraceTimeText(next[0])));
}

std::span<const RawRecord> PageRecordStream::NextBatch() {
  size_t n = 0;
  bool exhausted = false;
  // Whole pages until the batch holds records: pages without any (empty, or skipped
  // by --salvage) must not end the stream, since an empty batch means "no more". A new
  // run is read only while the batch is empty: reading may reuse the memory the batch's
  // records point into.
  for (uint32_t pages = 0; n == 0 || pages < pages_per_batch_; ++pages) {
    if (!source_done_ && !LookaheadComplete()) {
      if (n != 0) break;
      ReadAhead();
    }
    if (carried_next_ == carried_.size() && run_pos_ + pages_.page_size() > run_.pages.size()) {
      exhausted = true;  // no page left in memory, and none to read
      break;
    }
    const NextPage next = TakePage();
    if (next.lost_before != 0) pending_lost_ = AddLost(pending_lost_, next.lost_before);
    RawRecord* out = Buffer();
    int64_t lost = 0;
    uint32_t got = 0;
    try {
      if (pages_.HoldsData(next.page)) CheckPageTime(next.page, next.offset);
      got = pages_.Decode(next.page, next.offset, cpu_, out + n, &lost);
    } catch (const Error& e) {
      if (salvage_ == nullptr) throw;
      // The page's events are gone: a gap of unknown size, like a ring-buffer loss.
      salvage_->Add(fmt::format("{}; page skipped, counted as lost events", e.what()));
      lost = -1;
      got = 0;
    }
    if (lost != 0) pending_lost_ = AddLost(pending_lost_, lost);
    if (got == 0) continue;
    if (pending_lost_ != 0) {  // rare: shift the page's records to put the marker first
      std::memmove(out + n + 1, out + n, got * sizeof(RawRecord));
      // Dated where the gap began, the CPU's last record before it: what other CPUs show
      // after that comes after the loss.
      const int64_t gap_from = have_last_ts_ ? last_ts_ : out[n + 1].ts;
      out[n] = RawRecord{gap_from, nullptr, 0, cpu_, pending_lost_};
      pending_lost_ = 0;
      ++n;
    }
    n += got;
    last_ts_ = out[n - 1].ts;
    have_last_ts_ = true;
    prev_page_time_ = RingPageDecoder::PageTime(next.page);
    have_prev_page_ = true;
  }
  if (exhausted) pending_lost_ = AddLost(pending_lost_, std::exchange(run_lost_, 0));
  if (n == 0 && exhausted && pending_lost_ != 0) {  // losses after the last record
    Buffer()[0] = RawRecord{last_ts_, nullptr, 0, cpu_, pending_lost_};
    pending_lost_ = 0;
    n = 1;
  }
  return {buf_ ? buf_.get() : nullptr, n};
}

}  // namespace cstool
