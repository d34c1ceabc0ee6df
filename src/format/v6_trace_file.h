// The fast path of TraceFileReader for uncompressed trace-cmd v6 files in host byte
// order. The file is memory-mapped; records point into the mapping.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "format/fast_trace_file.h"

namespace cstool {

class V6TraceFile final : public FastTraceFile {
 public:
  // Throws cstool::Error on anything this parser cannot or will not read; call
  // CanRead() first to pick the backend.
  V6TraceFile(const std::string& path, const ReaderOptions& options);

  // True if the first bytes announce a v6 file in host byte order.
  static bool CanRead(std::string_view head);

  const char* backend_name() const override { return "fast-v6"; }

 private:
  // One function per section of the v6 layout (man 5 trace-cmd.dat.v6), in file order;
  // Parse walks them. BufferOption is what the options tell the flyrecord section.
  using BufferOption = BufferOptionHead;
  void Parse(const ReaderOptions& options);
  void ReadPrintkFormats(ByteCursor& in);
  void ReadCpuCount(ByteCursor& in);
  void ReadOptions(ByteCursor& in, Sections& sections, std::vector<BufferOption>& buffers);
  void ReadFlyrecord(ByteCursor& in, std::vector<BufferOption> buffers,
                     const ReaderOptions& options);
  // `data_end`, when given: where the table's data end as it says (before a salvage cut).
  std::vector<CpuData> ReadCpuTable(ByteCursor& c, const std::string& label,
                                    uint64_t* data_end = nullptr);
  void DropAbsentOwnBuffers(uint64_t trace_data_end, std::vector<BufferOption>& buffers);
};

}  // namespace cstool
