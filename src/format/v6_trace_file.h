// The fast path of TraceFileReader: an own parser for uncompressed trace-cmd v6 files
// in host byte order. The file is memory-mapped; records point into the mapping.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/mapped_file.h"
#include "format/trace_file_reader.h"
#include "format/trace_handles.h"

namespace cstool {

class ByteCursor;

class V6TraceFile final : public TraceFileReader {
 public:
  // Throws cstool::Error on anything this parser cannot or will not read; call
  // CanRead() first to pick the backend.
  V6TraceFile(const std::string& path, const ReaderOptions& options);

  // True if the first bytes announce a v6 file in host byte order.
  static bool CanRead(std::string_view head);

  const char* backend_name() const override { return "fast-v6"; }
  tep_handle* tep() const override { return tep_.get(); }
  std::unique_ptr<CpuRecordStream> OpenCpu(int cpu) override;

  struct CpuData {
    uint64_t offset = 0;
    uint64_t size = 0;
  };
  const std::vector<CpuData>& cpu_data() const { return cpu_data_; }

 private:
  // One function per section of the v6 layout (man 5 trace-cmd.dat.v6), in file order;
  // Parse walks them. Sections carries what a later section needs from an earlier one.
  struct Sections;
  void Parse(const ReaderOptions& options);
  void ReadInitialFormat(ByteCursor& in);
  void ReadHeaderInfo(ByteCursor& in);
  void ReadFormatTexts(ByteCursor& in, uint32_t count, const std::string& system,
                       std::string_view size_label, std::string_view text_label,
                       Sections& sections);
  void ReadFtraceEventFormats(ByteCursor& in, Sections& sections);
  void ReadEventFormats(ByteCursor& in, Sections& sections);
  void ReadKallsyms(ByteCursor& in);
  void ReadPrintkFormats(ByteCursor& in);
  void ReadProcessInfo(ByteCursor& in);
  void ReadCpuCount(ByteCursor& in, Sections& sections);
  void ReadOptions(ByteCursor& in, Sections& sections);
  void ReadFlyrecord(ByteCursor& in, const Sections& sections, const ReaderOptions& options);
  std::vector<CpuData> ReadCpuTable(ByteCursor& c, uint32_t cpus, const std::string& label,
                                    bool salvage);

  MappedFile file_;
  TepHandlePtr tep_;
  std::vector<CpuData> cpu_data_;
  bool salvage_ = false;
};

}  // namespace cstool
