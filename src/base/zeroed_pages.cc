#include "base/zeroed_pages.h"

#include <sys/mman.h>

#include <new>
#include <utility>

namespace cstool {

ZeroedPages::ZeroedPages(size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  // MAP_NORESERVE: only the pages touched count against the memory the system commits.
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  data_ = p;
  // Small pages: where transparent huge pages are always on, a first touch would
  // otherwise bring in (and clear) 2 MiB.
  ::madvise(p, bytes, MADV_NOHUGEPAGE);
}

ZeroedPages::~ZeroedPages() {
  if (data_ != nullptr) ::munmap(data_, bytes_);
}

ZeroedPages& ZeroedPages::operator=(ZeroedPages&& o) noexcept {
  if (this != &o) {
    if (data_ != nullptr) ::munmap(data_, bytes_);
    data_ = std::exchange(o.data_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

}  // namespace cstool
