// The compatibility path of TraceFileReader: any file libtracecmd reads (v6, v7,
// compressed sections), with records read per CPU through tracecmd_read_data().
#pragma once

#include <memory>
#include <string>

#include "format/trace_file_reader.h"
#include "format/trace_handles.h"

namespace cstool {

class TracecmdTraceFile final : public TraceFileReader {
 public:
  // Throws cstool::Error if libtracecmd cannot open the file, or crashes reading it
  // (tried first in a child process, see base/isolated_call.h).
  TracecmdTraceFile(const std::string& path, const ReaderOptions& options);

  const char* backend_name() const override { return "libtracecmd"; }
  tep_handle* tep() const override;
  std::string SavedComm(int32_t pid) override;
  void PrepareSavedComms() override;

 protected:
  std::unique_ptr<CpuRecordStream> OpenCpuRecords(int cpu) override;

 private:
  enum NoProbe { kNoProbe };
  // Opens and reads the whole file without the crash probe (the probe itself).
  TracecmdTraceFile(const std::string& path, const ReaderOptions& options, NoProbe);
  void Open(const ReaderOptions& options);

  TracecmdInputPtr top_;
  TracecmdInputPtr instance_;        // set when reading a buffer instance
  tracecmd_input* input_ = nullptr;  // top_ or instance_
};

}  // namespace cstool
