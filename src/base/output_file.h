// A file that a command writes whole or not at all (report -o, --timeline, --html, diff
// --html): its bytes go to a file without a name in PATH's directory (O_TMPFILE), which
// Commit() links as PATH.partial and renames over PATH. Until then PATH keeps what it
// held, so a failed analysis, an interrupt or a full disk never leaves a truncated report
// under the name, nor destroys the one before; and a process killed before Commit() (a
// Ctrl-C) leaves no file behind, since the kernel frees an unnamed file with its last
// descriptor. On a file system without O_TMPFILE the bytes go to PATH.partial from the
// start, removed when Commit() is not reached. A path that exists and is no regular file (a
// pipe, a terminal), or a link under /dev or /proc (/dev/stdout, /proc/self/fd/1, even to
// a regular file), is written in place; another link to a file has the file it points to
// replaced, the link kept; a directory is refused.
#pragma once

#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include "base/unique_fd.h"

namespace cstool {

class OutputFile {
 public:
  // Creates the file now, so that a bad path fails before a long analysis; a
  // `buffer_bytes` stream buffer for large outputs. Throws cstool::Error naming the file.
  explicit OutputFile(std::string path, size_t buffer_bytes = 0);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream() { return stream_; }
  const std::string& path() const { return path_; }
  // Flushes and renames PATH.partial to PATH. Throws cstool::Error when either fails.
  void Commit();

 private:
  // The unnamed file's name in /proc: it is opened and linked through it.
  std::string UnnamedFileLink() const;

  std::string path_;
  std::string replaced_;  // what Commit renames onto: path_, or the file a link points to
  std::string partial_;   // empty when written in place
  UniqueFd unnamed_{-1};  // the O_TMPFILE file, while it has no name
  std::vector<char> buffer_;
  std::ofstream stream_;
  bool committed_ = false;
};

// Fails now, not after a recording, when a file cannot be created at `path` (a missing
// directory, no permission): creates and removes one beside it. The error names `path`.
void CheckCreatable(const std::string& path);

}  // namespace cstool
