// A uniquely named file in $TMPDIR (or /tmp) that is removed when the owner goes away.
#pragma once

#include <string>

namespace cstool {

class TempFile {
 public:
  // Creates "<tmpdir>/<prefix>XXXXXX<suffix>". Throws cstool::Error on failure.
  TempFile(const std::string& prefix, const std::string& suffix);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace cstool
