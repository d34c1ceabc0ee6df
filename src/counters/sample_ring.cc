#include "counters/sample_ring.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace cstool {
namespace {

// More members than any group cstool opens: a larger count is a corrupt record.
constexpr uint64_t kMaxGroupMembers = 64;

// Reads fixed-size fields in order from a record.
class FieldReader {
 public:
  explicit FieldReader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  template <typename T>
  bool Read(T* v) {
    if (bytes_.size() - pos_ < sizeof(T)) return false;
    std::memcpy(v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }

 private:
  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
};

}  // namespace

std::optional<RingSample> ParseSampleRecord(std::span<const uint8_t> record) {
  FieldReader in(record);
  perf_event_header header{};
  if (!in.Read(&header) || header.type != PERF_RECORD_SAMPLE) return std::nullopt;
  RingSample s;
  uint32_t reserved = 0;
  uint64_t nr = 0;
  if (!in.Read(&s.ip) || !in.Read(&s.pid) || !in.Read(&s.tid) || !in.Read(&s.time) ||
      !in.Read(&s.cpu) || !in.Read(&reserved) || !in.Read(&nr) || nr > kMaxGroupMembers ||
      !in.Read(&s.enabled_ns) || !in.Read(&s.running_ns))
    return std::nullopt;
  s.values.resize(nr);
  for (uint64_t& v : s.values)
    if (!in.Read(&v)) return std::nullopt;
  return s;
}

SampleRingReader::SampleRingReader(void* base, size_t mapping_size, size_t page_size)
    : meta_(static_cast<perf_event_mmap_page*>(base)) {
  uint64_t offset = meta_->data_offset;
  uint64_t size = meta_->data_size;
  if (size == 0) {  // kernels before 4.1: the data pages follow the first page
    offset = page_size;
    size = mapping_size - page_size;
  }
  data_ = static_cast<const uint8_t*>(base) + offset;
  size_ = size;
}

void SampleRingReader::CopyOut(uint64_t pos, size_t n, uint8_t* dst) const {
  const uint64_t at = pos & (size_ - 1);
  const size_t first = static_cast<size_t>(std::min<uint64_t>(n, size_ - at));
  std::memcpy(dst, data_ + at, first);
  if (first < n) std::memcpy(dst + first, data_, n - first);  // wrapped around the end
}

void SampleRingReader::Drain(std::vector<RingSample>* out) {
  // Acquire: the records up to head are completely written before we read them.
  const uint64_t head = __atomic_load_n(&meta_->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = meta_->data_tail;  // only this reader writes it
  while (head - tail >= sizeof(perf_event_header)) {
    perf_event_header header{};
    CopyOut(tail, sizeof(header), reinterpret_cast<uint8_t*>(&header));
    if (header.size < sizeof(header) || header.size > head - tail) {
      // Cannot happen with a sane kernel; resynchronising is impossible, so skip it all.
      ++stats_.malformed;
      tail = head;
      break;
    }
    record_.resize(header.size);
    CopyOut(tail, header.size, record_.data());
    tail += header.size;
    FieldReader in(record_);
    in.Read(&header);
    switch (header.type) {
      case PERF_RECORD_SAMPLE:
        if (std::optional<RingSample> s = ParseSampleRecord(record_)) {
          ++stats_.samples;
          out->push_back(std::move(*s));
        } else {
          ++stats_.malformed;
        }
        break;
      case PERF_RECORD_LOST: {  // {header, u64 id, u64 lost}
        uint64_t id = 0, lost = 0;
        if (in.Read(&id) && in.Read(&lost))
          stats_.lost += lost;
        else
          ++stats_.malformed;
        break;
      }
      case PERF_RECORD_THROTTLE:
        ++stats_.throttles;
        break;
      case PERF_RECORD_UNTHROTTLE:
        ++stats_.unthrottles;
        break;
      default:  // no other record types were asked for
        break;
    }
  }
  // Release: our reads of the consumed records happen before the kernel overwrites them.
  __atomic_store_n(&meta_->data_tail, tail, __ATOMIC_RELEASE);
}

std::optional<MappedRing> MappedRing::Map(int fd, size_t data_pages, int* error) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t size = (1 + data_pages) * page;
  void* base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    if (error) *error = errno;
    return std::nullopt;
  }
  if (error) *error = 0;
  return MappedRing(base, size, page);
}

MappedRing::~MappedRing() {
  if (base_ != nullptr) ::munmap(base_, size_);
}

MappedRing::MappedRing(MappedRing&& other) noexcept
    : base_(other.base_), size_(other.size_), reader_(std::move(other.reader_)) {
  other.base_ = nullptr;
}

MappedRing& MappedRing::operator=(MappedRing&& other) noexcept {
  if (this != &other) {
    if (base_ != nullptr) ::munmap(base_, size_);
    base_ = other.base_;
    size_ = other.size_;
    reader_ = std::move(other.reader_);
    other.base_ = nullptr;
  }
  return *this;
}

}  // namespace cstool
