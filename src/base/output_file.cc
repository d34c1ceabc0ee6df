#include "base/output_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "base/errors.h"

namespace cstool {

OutputFile::OutputFile(std::string path, size_t buffer_bytes)
    : path_(std::move(path)), buffer_(buffer_bytes) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path_, ec);
  if (std::filesystem::is_directory(status))
    throw Error(fmt::format("{}: cannot write: {}", path_, std::strerror(EISDIR)));
  // A pipe, a terminal or /dev/stdout is written in place: there is no file to replace,
  // and renaming over it would put a file where the device or link was (/dev/stdout of a
  // shell's `> out.txt` is a link to a regular file).
  const bool is_link = std::filesystem::is_symlink(std::filesystem::symlink_status(path_, ec));
  const bool system_link = is_link && (path_.starts_with("/dev/") || path_.starts_with("/proc/"));
  const bool in_place =
      system_link || (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status));
  replaced_ = path_;
  if (is_link && !in_place) {  // the user's link stays; the file it names is replaced
    const std::filesystem::path target = std::filesystem::weakly_canonical(path_, ec);
    if (!ec) replaced_ = target.string();
  }
  std::string target = path_;
  if (!in_place) {
    partial_ = replaced_ + ".partial";
    target = partial_;
    const std::filesystem::path dir = std::filesystem::path(replaced_).parent_path();
    unnamed_.reset(::open(dir.empty() ? "." : dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666));
    // The stream opens the unnamed file anew through its /proc link.
    if (unnamed_.get() >= 0) target = UnnamedFileLink();
  }
  if (!buffer_.empty())
    stream_.rdbuf()->pubsetbuf(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  stream_.open(target, std::ios::binary | std::ios::trunc);
  if (!stream_ && unnamed_.get() >= 0) {  // no /proc: the named partial file after all
    unnamed_.reset();
    stream_.clear();
    stream_.open(partial_, std::ios::binary | std::ios::trunc);
  }
  // The user's name, not the temporary one's: the reason (a missing directory, no
  // permission) is the same.
  if (!stream_) throw Error(fmt::format("{}: cannot write: {}", path_, std::strerror(errno)));
}

std::string OutputFile::UnnamedFileLink() const {
  return fmt::format("/proc/self/fd/{}", unnamed_.get());
}

OutputFile::~OutputFile() {
  if (committed_) return;
  stream_.close();
  std::error_code ignored;
  // An unnamed file goes with its descriptor.
  if (!partial_.empty() && unnamed_.get() < 0) std::filesystem::remove(partial_, ignored);
}

void OutputFile::Commit() {
  stream_.close();
  if (!stream_) throw Error(fmt::format("{}: cannot write: {}", path_, std::strerror(errno)));
  if (unnamed_.get() >= 0) {
    // A name of this process's own (linkat(2) replaces none, and a PATH.partial may be
    // another's), renamed over PATH below.
    partial_ = fmt::format("{}.{}.partial", replaced_, ::getpid());
    const std::string link = UnnamedFileLink();
    std::error_code ignored;
    std::filesystem::remove(partial_, ignored);  // a dead process's of the same pid
    if (::linkat(AT_FDCWD, link.c_str(), AT_FDCWD, partial_.c_str(), AT_SYMLINK_FOLLOW) != 0)
      throw Error(fmt::format("{}: cannot write: {}", path_, std::strerror(errno)));
    unnamed_.reset();
  }
  if (!partial_.empty()) {
    std::error_code ec;
    std::filesystem::rename(partial_, replaced_, ec);
    if (ec) throw Error(fmt::format("{}: cannot write: {}", path_, ec.message()));
  }
  committed_ = true;
}

void CheckCreatable(const std::string& path) {
  const std::string probe = path + ".tmp";
  if (FILE* f = std::fopen(probe.c_str(), "w")) {
    std::fclose(f);
    std::filesystem::remove(probe);
    return;
  }
  throw Error(fmt::format("cannot create '{}': {}", path, std::strerror(errno)));
}

}  // namespace cstool
