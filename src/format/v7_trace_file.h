// The fast path of TraceFileReader for trace-cmd v7 files in host byte order, with or
// without compression (none, zstd, zlib). The file is memory-mapped; metadata sections
// are decompressed when flagged, and each CPU's ring-buffer pages are read in place or
// decompressed chunk by chunk while streaming (format/page_stream.h).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "format/fast_trace_file.h"

namespace cstool {

class V7TraceFile final : public FastTraceFile {
 public:
  // Throws cstool::Error on anything this parser cannot or will not read; call
  // CanRead() first to pick the backend.
  V7TraceFile(const std::string& path, const ReaderOptions& options);

  // True if the first bytes announce a v7 file in host byte order whose compression
  // cstool knows (the name must lie within `head`).
  static bool CanRead(std::string_view head);

  const char* backend_name() const override { return "fast-v7"; }

 protected:
  void ReadDeferredKallsyms() override;
  void ReadDeferredCmdlines() override;
  void ReadDeferredSection(std::optional<uint64_t>& at, uint16_t id, std::string_view what,
                           std::string_view lost, const std::function<void(ByteCursor&)>& read);

 private:
  // What the options say about one ring buffer (a BUFFER option).
  struct BufferOption : BufferOptionHead {  // offset: of its flyrecord section
    std::string clock;
    uint32_t page_size = 0;
    std::map<uint32_t, CpuData> cpus;
    int options_section = 0;  // which options section holds the option (0: the first)
  };
  // What the options sections tell the other sections.
  struct Layout {
    std::map<uint16_t, uint64_t> section_at;  // metadata section id -> its offset
    std::vector<BufferOption> buffers;
    bool has_latency_buffer = false;
    uint32_t cpu_count = 0;    // the CPUCOUNT option's (0: none)
    int options_sections = 0;  // read so far
  };

  // One function per part of the v7 layout (man 5 trace-cmd.dat.v7); Parse walks them.
  void Parse(const ReaderOptions& options);
  uint64_t ReadHeader(ByteCursor& in);
  void ReadOptions(uint64_t offset, Sections& sections, Layout& layout);
  void ReadOwnBufferOption(std::string_view body, size_t option_at, const ByteCursor& in,
                           Layout& layout);
  // Adds the buffer the option describes; returns the bytes of `body` it read.
  size_t ReadBufferOption(std::string_view body, size_t option_at, const ByteCursor& in,
                          Layout& layout);
  void DropAbsentOwnBuffers(Layout& layout);
  void ReadMetadata(const Layout& layout, Sections& sections);
  void ReadFlyrecord(const Layout& layout, const ReaderOptions& options);

  // A cursor over the body of the section at `offset`, which must have id `id`: in place,
  // or decompressed into `storage` (valid until its next use) or, without one, into
  // storage kept until parsing ends.
  ByteCursor OpenSection(uint64_t offset, uint16_t id, std::string_view what,
                         std::vector<uint8_t>* storage = nullptr);

  std::string file_compression_;  // "none", "zstd", "zlib"
  // Decompressed section bodies and the labels their cursors name in errors; the
  // event format texts point into them until they are parsed.
  std::deque<std::vector<uint8_t>> section_bodies_;
  std::deque<std::string> section_labels_;
  uint64_t decompressed_bytes_ = 0;      // all sections together, bounded
  std::optional<uint64_t> kallsyms_at_;  // its section, read by LoadKernelSymbols
  std::optional<uint64_t> cmdlines_at_;  // its section, read by SavedComm
};

}  // namespace cstool
