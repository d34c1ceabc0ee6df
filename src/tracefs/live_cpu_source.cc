#include "tracefs/live_cpu_source.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/errors.h"
#include "tracefs/trace_pipe_raw.h"
#include "tracefs/tracefs_api.h"

namespace cstool {

// Hands out the queued records of one CPU with ts <= cut, page by page. A span stays
// valid until the next call: consumed pages are only dropped then.
class LiveCpuSource::Stream : public CpuRecordStream {
 public:
  Stream(LiveCpuSource& source, int64_t cut) : source_(source), cut_(cut) {}
  int cpu() const override { return source_.cpu_; }
  std::span<const RawRecord> NextBatch() override {
    source_.PopConsumed();
    if (source_.pages_.empty()) return {};
    Page& p = source_.pages_.front();
    size_t end = p.next;
    while (end < p.records.size() && p.records[end].ts <= cut_) ++end;
    std::span<const RawRecord> batch(p.records.data() + p.next, end - p.next);
    p.next = end;
    return batch;
  }

 private:
  LiveCpuSource& source_;
  int64_t cut_;
};

LiveCpuSource::LiveCpuSource(tracefs_instance* instance, int cpu,
                             std::optional<std::filesystem::path> tee_file)
    : cpu_(cpu), tee_path_(std::move(tee_file)) {
  stats_.cpu = cpu;
  pipe_ = std::make_unique<TracePipeRaw>(instance, cpu);
  subbuf_size_ = pipe_->subbuf_size();
  decoder_ = std::make_unique<RingPageDecoder>(static_cast<int>(sizeof(long)),
                                               static_cast<uint32_t>(subbuf_size_),
                                               fmt::format("trace_pipe_raw of CPU {}", cpu));
  if (tee_path_) {
    tee_fd_ = ::open(tee_path_->c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (tee_fd_ < 0)
      throw Error(fmt::format("cannot create '{}': {}", tee_path_->string(), std::strerror(errno)));
  }
}

LiveCpuSource::~LiveCpuSource() {
  if (tee_fd_ >= 0) {
    ::close(tee_fd_);
    ::unlink(tee_path_->c_str());
  }
}

size_t LiveCpuSource::Drain(size_t max_pages) {
  size_t read_pages = 0;
  while (read_pages < max_pages) {
    std::vector<uint8_t> buf;
    if (!spare_.empty()) {
      buf = std::move(spare_.back());
      spare_.pop_back();
    }
    buf.resize(subbuf_size_);
    // read(2) of trace_pipe_raw: one (possibly partly filled) page, or 0 when empty.
    int n = tracefs_cpu_read(pipe_->get(), buf.data(), /*nonblock=*/true);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ENODATA) break;
      throw Error(
          fmt::format("cannot read the ring buffer of CPU {}: {}", cpu_, std::strerror(errno)));
    }
    if (n == 0) {
      Recycle(std::move(buf));
      break;
    }
    if (static_cast<size_t>(n) < subbuf_size_)
      std::memset(buf.data() + n, 0, subbuf_size_ - static_cast<size_t>(n));
    ++read_pages;

    Page page;
    page.records.resize(decoder_->max_records() + 1);
    int64_t lost = 0;
    uint32_t count = decoder_->Decode(buf.data(), 0, cpu_, page.records.data() + 1, &lost);
    if (lost != 0) {
      ++stats_.lost_pages;
      if (lost > 0) stats_.lost_events += static_cast<uint64_t>(lost);
      uint64_t page_ts = 0;
      std::memcpy(&page_ts, buf.data(), sizeof(page_ts));
      // Dated where the gap began, as the file readers do: this CPU's record before it.
      const int64_t after = count > 0 ? page.records[1].ts : static_cast<int64_t>(page_ts);
      page.records[0] = RawRecord{last_ts_ >= 0 ? last_ts_ : after, nullptr, 0, cpu_, lost};
      page.records.resize(count + 1);
    } else {
      page.records.erase(page.records.begin());
      page.records.resize(count);
    }
    stats_.events += count;
    if (count > 0) last_ts_ = page.records.back().ts;
    ++stats_.pages;
    uint64_t commit = 0;
    std::memcpy(&commit, buf.data() + 8, sizeof(long));
    const uint64_t data_bytes = commit & ((uint64_t{1} << 30) - 1);
    stats_.bytes += data_bytes;
    if (tee_fd_ >= 0 && data_bytes > 0) Tee(buf.data());
    if (sink_ && data_bytes > 0) {
      uint64_t page_ts = 0;
      std::memcpy(&page_ts, buf.data(), sizeof(page_ts));
      const int64_t last_ts =
          page.records.empty() ? static_cast<int64_t>(page_ts) : page.records.back().ts;
      sink_(std::span<const uint8_t>(buf.data(), subbuf_size_), last_ts, count);
    }
    if (page.records.empty()) {
      Recycle(std::move(buf));
      continue;
    }
    page.bytes = std::move(buf);
    pages_.push_back(std::move(page));
  }
  return read_pages;
}

void LiveCpuSource::Tee(const uint8_t* page) {
  size_t off = 0;
  while (off < subbuf_size_) {
    ssize_t n = ::write(tee_fd_, page + off, subbuf_size_ - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      tee_error_ = fmt::format("cannot write '{}': {}", tee_path_->string(),
                               std::strerror(n == 0 ? EIO : errno));
      StopTee();
      return;
    }
    off += static_cast<size_t>(n);
  }
}

void LiveCpuSource::StopTee() {
  if (tee_fd_ < 0) return;
  ::close(tee_fd_);
  tee_fd_ = -1;
  ::unlink(tee_path_->c_str());
}

void LiveCpuSource::Recycle(std::vector<uint8_t> buf) {
  constexpr size_t kMaxSpare = 64;
  if (spare_.size() < kMaxSpare) spare_.push_back(std::move(buf));
}

void LiveCpuSource::PopConsumed() {
  while (!pages_.empty() && pages_.front().next >= pages_.front().records.size()) {
    Recycle(std::move(pages_.front().bytes));
    pages_.pop_front();
  }
}

std::unique_ptr<CpuRecordStream> LiveCpuSource::StreamUntil(int64_t cut) {
  return std::make_unique<Stream>(*this, cut);
}

std::optional<int64_t> LiveCpuSource::FrontTs() const {
  for (const Page& p : pages_)
    if (p.next < p.records.size()) return p.records[p.next].ts;
  return std::nullopt;
}

}  // namespace cstool
