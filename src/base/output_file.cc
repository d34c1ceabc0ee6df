#include "base/output_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/errors.h"

namespace cstool {

OutputFile::OutputFile(std::string path, size_t buffer_bytes)
    : path_(std::move(path)), partial_(path_ + ".partial"), buffer_(buffer_bytes) {
  if (!buffer_.empty())
    stream_.rdbuf()->pubsetbuf(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  stream_.open(partial_, std::ios::binary | std::ios::trunc);
  if (!stream_) throw Error(fmt::format("{}: cannot write: {}", partial_, std::strerror(errno)));
}

OutputFile::~OutputFile() {
  if (committed_) return;
  stream_.close();
  std::error_code ignored;
  std::filesystem::remove(partial_, ignored);
}

void OutputFile::Commit() {
  stream_.close();
  if (!stream_) throw Error(fmt::format("{}: cannot write: {}", partial_, std::strerror(errno)));
  std::error_code ec;
  std::filesystem::rename(partial_, path_, ec);
  if (ec) throw Error(fmt::format("{}: cannot write: {}", path_, ec.message()));
  committed_ = true;
}

}  // namespace cstool
