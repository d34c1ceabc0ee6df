#include "recording/page_file.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/errors.h"
#include "format/compression.h"
#include "format/trace_file_writer.h"

namespace cstool {
namespace {

void WriteAll(int fd, std::string_view data, const std::filesystem::path& file) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw Error(
          fmt::format("cannot write '{}': {}", file.string(), std::strerror(n == 0 ? EIO : errno)));
    off += static_cast<size_t>(n);
  }
}

}  // namespace

PageFileWriter::PageFileWriter(const std::filesystem::path& file, const std::string& compression,
                               bool append)
    : file_(file),
      fd_(::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC),
                 0600)) {
  if (fd_.get() < 0)
    throw Error(fmt::format("cannot {} '{}': {}", append ? "open" : "create", file.string(),
                            std::strerror(errno)));
  if (!compression.empty()) compressor_ = MakeCompressor(compression);
}

PageFileWriter::~PageFileWriter() = default;

void PageFileWriter::Add(std::string_view page) {
  pages_.append(page);
  if (pages_.size() >= kPageChunkBytes) Finish();
}

void PageFileWriter::Finish() {
  if (pages_.empty()) return;
  if (compressor_) {
    chunk_.clear();
    AppendChunk(*compressor_, pages_, chunk_);
    WriteAll(fd_.get(), chunk_, file_);
  } else {
    WriteAll(fd_.get(), pages_, file_);
  }
  pages_.clear();
}

}  // namespace cstool
