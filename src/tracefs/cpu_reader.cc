#include "tracefs/cpu_reader.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "base/errors.h"
#include "format/compression.h"
#include "format/trace_file_writer.h"
#include "tracefs/trace_pipe_raw.h"
#include "tracefs/tracefs_api.h"
#include "tracefs/write_budget.h"

namespace cstool {
namespace {

constexpr size_t kWriteBufferBytes = 256 * 1024;
constexpr int kReaderNice = -10;
constexpr auto kIdlePoll = std::chrono::milliseconds(10);
// A driven reader is drained at least this often while its driver's buffer keeps it busy.
constexpr int kDriveEveryPages = 64;
// Flags the kernel keeps in the top bits of a sub-buffer's commit field.
constexpr uint64_t kCommitSizeMask = (uint64_t{1} << 30) - 1;

}  // namespace

void CpuReader::KbufferDeleter::operator()(kbuffer* k) const { kbuffer_free(k); }

CpuReader::CpuReader(tracefs_instance* instance, int cpu, std::filesystem::path pages_file,
                     const std::string& compression, WriteBudget* budget)
    : cpu_(cpu), path_(std::move(pages_file)), budget_(budget) {
  if (!compression.empty()) compressor_ = MakeCompressor(compression);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd_ < 0)
    throw Error(fmt::format("cannot create '{}': {}", path_.string(), std::strerror(errno)));
  pipe_ = std::make_unique<TracePipeRaw>(instance, cpu);
  subbuf_size_ = pipe_->subbuf_size();
  page_.resize(subbuf_size_);
  kbuf_.reset(
      kbuffer_alloc(sizeof(long) == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4, KBUFFER_ENDIAN_LITTLE));
  if (!kbuf_) throw Error("out of memory (kbuffer)");
  write_buffer_.reserve(kWriteBufferBytes);
}

CpuReader::~CpuReader() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) ::close(fd_);
  if (!keep_file_) ::unlink(path_.c_str());
}

void CpuReader::Start() {
  thread_ = std::thread([this] { Run(); });
}

void CpuReader::AvoidOwnCpu(const std::vector<int>& online) {
  // Reading a CPU's buffer from that CPU steals time from what is being traced there
  // and competes with it exactly when it is busiest.
  cpu_set_t set;
  CPU_ZERO(&set);
  int n = 0;
  for (int c : online) {
    if (c == cpu_ || c >= CPU_SETSIZE) continue;
    CPU_SET(c, &set);
    ++n;
  }
  if (n > 0) pthread_setaffinity_np(thread_.native_handle(), sizeof(set), &set);
}

void CpuReader::Run() {
  // Readers must keep up with bursts even when the other CPUs are busy; losing events
  // costs more than the little CPU time they take (root may raise priority).
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kReaderNice);
  int pages = 0;
  while (!stop_.load(std::memory_order_relaxed) && !failed_) {
    if (ReadPage()) {
      if (driven_ != nullptr && ++pages % kDriveEveryPages == 0) driven_->ReadAvailable();
      continue;
    }
    if (failed_) break;
    if (driven_ != nullptr) driven_->ReadAvailable();
    // Nothing to read: what is buffered goes to the file now, so that a recorder killed
    // (kill -9, the OOM killer) leaves all but the last moments' pages.
    if (!write_buffer_.empty()) FlushWriteBuffer();
    std::this_thread::sleep_for(kIdlePoll);
  }
}

bool CpuReader::ReadPage() {
  // Splice-based reads hand over only full sub-buffers, so the file holds no half-empty
  // pages; the partial rest is collected by StopAndFlush().
  const int n = tracefs_cpu_buffered_read(pipe_->get(), page_.data(), /*nonblock=*/true);
  if (n > 0) {
    Consume(n);
    return true;
  }
  if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ENODATA)
    SetError(fmt::format("cannot read the ring buffer of CPU {}: {}", cpu_, std::strerror(errno)));
  return false;
}

void CpuReader::ReadAvailable() {
  while (!failed_ && ReadPage()) {
  }
  if (!write_buffer_.empty()) FlushWriteBuffer();
}

void CpuReader::StopAndFlush() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  while (!failed_) {
    int n = tracefs_cpu_flush(pipe_->get(), page_.data());
    if (n <= 0) break;
    Consume(n);
  }
  FlushWriteBuffer();
  std::lock_guard<std::mutex> lock(error_mutex_);
  if (failed_) throw Error(error_);
}

void CpuReader::Consume(int n) {
  if (static_cast<size_t>(n) < subbuf_size_)
    std::memset(page_.data() + n, 0, subbuf_size_ - static_cast<size_t>(n));
  uint64_t commit = 0;
  std::memcpy(&commit, page_.data() + 8, sizeof(long));
  uint64_t data_bytes = commit & kCommitSizeMask;
  if (data_bytes == 0) return;  // an empty sub-buffer carries nothing worth keeping

  if (kbuffer_load_subbuffer(kbuf_.get(), page_.data()) == 0) {
    int missed = kbuffer_missed_events(kbuf_.get());
    if (missed != 0) {
      lost_pages_.fetch_add(1, std::memory_order_relaxed);
      if (missed > 0)
        lost_events_.fetch_add(static_cast<uint64_t>(missed), std::memory_order_relaxed);
    }
    uint64_t count = 0;
    unsigned long long ts = 0;
    for (void* rec = kbuffer_read_event(kbuf_.get(), &ts); rec;
         rec = kbuffer_next_event(kbuf_.get(), &ts))
      ++count;
    pending_events_ += count;
  }
  ++pending_pages_;
  pending_bytes_ += data_bytes;

  write_buffer_.append(page_.data(), subbuf_size_);
  if (write_buffer_.size() >= kWriteBufferBytes) FlushWriteBuffer();
}

void CpuReader::FlushWriteBuffer() {
  // Compressed: the buffered pages become one chunk (up to kWriteBufferBytes of pages;
  // fewer when the reader flushes because the buffer went idle).
  std::string_view out = write_buffer_;
  if (compressor_ && !write_buffer_.empty() && !failed_) {
    chunk_.clear();
    try {
      AppendChunk(*compressor_, write_buffer_, chunk_);
    } catch (const Error& e) {
      SetError(fmt::format("cannot compress '{}': {}", path_.string(), e.what()));
    }
    out = chunk_;
  }
  // After a chunk was refused nothing more is written: the file holds this CPU's events
  // up to a time, with no hole.
  bool written = !out.empty() && !failed_ && unwritten_from_ts_.load() == 0 &&
                 (!budget_ || budget_->Claim(out.size()));
  const off_t start = written ? ::lseek(fd_, 0, SEEK_CUR) : 0;
  size_t off = 0;
  while (written && off < out.size()) {
    ssize_t n = ::write(fd_, out.data() + off, out.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == ENOSPC && budget_) {
      // The disk filled up before the budget said: the part written goes again, so
      // that the file ends with whole chunks, and the recording ends here.
      if (::ftruncate(fd_, start) == 0) ::lseek(fd_, start, SEEK_SET);
      budget_->Return(out.size());
      budget_->DiskFull();
      written = false;
      break;
    }
    if (n <= 0) {
      SetError(fmt::format("cannot write '{}': {}", path_.string(),
                           std::strerror(n == 0 ? EIO : errno)));
      written = false;
      break;
    }
    off += static_cast<size_t>(n);
  }
  if (!written && !write_buffer_.empty() && unwritten_from_ts_.load() == 0) {
    // The buffer's first page header holds its time: this CPU's file ends before it.
    uint64_t page_ts = 0;
    std::memcpy(&page_ts, write_buffer_.data(), sizeof(page_ts));
    unwritten_from_ts_ = page_ts > 0 ? static_cast<int64_t>(page_ts) : 1;
  }
  if (written) {
    events_.fetch_add(pending_events_, std::memory_order_relaxed);
    pages_.fetch_add(pending_pages_, std::memory_order_relaxed);
    bytes_.fetch_add(pending_bytes_, std::memory_order_relaxed);
  }
  pending_events_ = pending_pages_ = pending_bytes_ = 0;
  write_buffer_.clear();
}

void CpuReader::SetError(const std::string& message) {
  std::lock_guard<std::mutex> lock(error_mutex_);
  if (!failed_) error_ = message;
  failed_ = true;
}

CpuRecordStats CpuReader::Stats() const {
  CpuRecordStats s;
  s.cpu = cpu_;
  s.events = events_.load();
  s.pages = pages_.load();
  s.bytes = bytes_.load();
  s.lost_events = lost_events_.load();
  s.lost_pages = lost_pages_.load();
  s.unwritten_from_ts = unwritten_from_ts_.load();
  return s;
}

}  // namespace cstool
