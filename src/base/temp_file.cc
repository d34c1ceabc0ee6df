#include "base/temp_file.h"

#include <fmt/core.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "base/errors.h"

namespace cstool {

TempFile::TempFile(const std::string& prefix, const std::string& suffix) {
  std::string dir = std::filesystem::temp_directory_path().string();
  std::string pattern = fmt::format("{}/{}XXXXXX{}", dir, prefix, suffix);
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  int fd = ::mkstemps(buf.data(), static_cast<int>(suffix.size()));
  if (fd < 0)
    throw Error(fmt::format("cannot create a temporary file in {}: {}", dir, std::strerror(errno)));
  ::close(fd);
  path_ = buf.data();
}

TempFile::~TempFile() { ::unlink(path_.c_str()); }

}  // namespace cstool
