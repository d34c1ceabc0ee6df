// A CPU's page file, written as the recorder's readers write theirs (tracefs/cpu_reader):
// the ring-buffer pages raw, or with a compression in chunks of up to kPageChunkBytes of
// pages (AppendChunk). A flight dump's window and the pages --recover adds after a kill
// are written so.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "base/unique_fd.h"

namespace cstool {

class Compressor;

inline constexpr size_t kPageChunkBytes = 256 * 1024;

class PageFileWriter {
 public:
  // Opens `file`: made anew, or with `append` added to. Throws cstool::Error.
  PageFileWriter(const std::filesystem::path& file, const std::string& compression, bool append);
  ~PageFileWriter();
  PageFileWriter(const PageFileWriter&) = delete;
  PageFileWriter& operator=(const PageFileWriter&) = delete;

  // Takes one page; a chunk's worth goes to the file. Throws cstool::Error.
  void Add(std::string_view page);
  // Writes the pages taken since the last chunk. Throws cstool::Error.
  void Finish();

 private:
  std::filesystem::path file_;
  UniqueFd fd_;
  std::unique_ptr<Compressor> compressor_;  // null: raw pages
  std::string pages_;
  std::string chunk_;
};

}  // namespace cstool
