#include "base/mapped_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/errors.h"
#include "base/unique_fd.h"

namespace cstool {
namespace {

constexpr size_t kGuardBytes = 64 * 1024;

}  // namespace

MappedFile::MappedFile(const std::string& path) : path_(path) {
  // Non-blocking: a FIFO opens at once (and is refused below) instead of waiting for a
  // writer; on a regular file the flag changes nothing.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) throw Error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    throw Error(fmt::format("{}: cannot stat: {}", path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) throw Error(fmt::format("{}: not a regular file", path));
  size_ = static_cast<size_t>(st.st_size);
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t file_pages = (size_ + page - 1) / page * page;
  mapped_ = file_pages + kGuardBytes;
  // Reserve file + guard as anonymous zero pages, then map the file over the front.
  void* base = ::mmap(nullptr, mapped_, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED)
    throw Error(fmt::format("{}: cannot map {} bytes: {}", path, mapped_, std::strerror(errno)));
  data_ = static_cast<uint8_t*>(base);
  if (size_ > 0) {
    // Pre-fault small files (fast); large ones are read in place and released behind
    // the readers (Release), so memory does not grow with the file.
    const int populate = size_ <= kPopulateLimit ? MAP_POPULATE : 0;
    void* m = ::mmap(base, size_, PROT_READ, MAP_PRIVATE | MAP_FIXED | populate, fd.get(), 0);
    if (m == MAP_FAILED) {
      int err = errno;
      ::munmap(base, mapped_);
      data_ = nullptr;
      throw Error(fmt::format("{}: cannot map: {}", path, std::strerror(err)));
    }
    ::madvise(base, size_, MADV_SEQUENTIAL);
  }
}

void MappedFile::Release(uint64_t offset, uint64_t size) const {
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  // A sequential reader is done with everything before `offset` too, and the kernel's
  // fault-around maps the whole 64 KiB-aligned block around each later fault, pages of
  // the range released last time included: start that far back, or those pages stay
  // resident for good (a few per release, growing with the file).
  constexpr uint64_t kFaultAroundBytes = 64 * 1024;
  const uint64_t begin =
      (offset > kFaultAroundBytes ? offset - kFaultAroundBytes : 0) / page * page;
  const uint64_t end = std::min<uint64_t>(offset + size, size_) / page * page;
  // The mapping is read-only and private: dropped pages are re-read from the file if
  // touched again, so this only lowers the resident set.
  if (end > begin) ::madvise(data_ + begin, end - begin, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, mapped_);
}

}  // namespace cstool
