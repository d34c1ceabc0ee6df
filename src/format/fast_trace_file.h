// What cstool's own trace.dat parsers (v6_trace_file.h, v7_trace_file.h) share: the
// mapped file, the tep_handle, the readers of the sections both versions store the same
// way (header page, event formats, the common options) and the per-CPU
// streams over in-place or compressed ring-buffer pages. Each version's class only
// walks its own layout.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/errors.h"
#include "base/mapped_file.h"
#include "base/unique_fd.h"
#include "format/page_prefetch.h"
#include "format/trace_file_reader.h"
#include "format/trace_handles.h"

namespace cstool {

class ByteCursor;

// A valid file the own parsers do not read the way libtracecmd does (timestamp
// conversions, instances with their own page size): OpenTraceFile falls back to
// libtracecmd for it unless the fast path was asked for.
class FastPathUnsupported : public Error {
 public:
  using Error::Error;
};

class FastTraceFile : public TraceFileReader {
 public:
  tep_handle* tep() const override { return tep_.get(); }
  void LoadKernelSymbols() override;
  std::string SavedComm(int32_t pid) override;
  void PrepareSavedComms() override;

  // Where each CPU's data lies: whole pages in place, or (compression() not empty) its
  // chunk table.
  struct CpuData {
    uint64_t offset = 0;
    uint64_t size = 0;
  };
  const std::vector<CpuData>& cpu_data() const { return cpu_data_; }
  // The per-CPU data's compression ("zstd", "zlib"); empty when stored in place.
  const std::string& compression() const { return data_compression_; }
  bool data_compressed() const override { return !data_compression_.empty(); }
  void SetJobs(int jobs) override { jobs_ = jobs; }
  void ReadAheadOnCallers() override;
  // Only after ReadAheadOnCallers, which made the prefetcher before the threads began: a
  // prefetcher made otherwise is made on the thread that opens the streams.
  bool ReadAheadOnce() override {
    return read_ahead_on_callers_ && prefetcher_ && prefetcher_->ReadAheadOnce();
  }
  // Each CPU's stream reads with pread into buffers of its own, and the chunk budget is
  // atomic; a salvage log is shared, and its notes must come in reading order.
  bool ReadsCpusInParallel() const override { return !salvage_; }
  uint64_t CpuDataBytes(int cpu) const override {
    return cpu >= 0 && static_cast<size_t>(cpu) < cpu_data_.size()
               ? cpu_data_[static_cast<size_t>(cpu)].size
               : 0;
  }

 protected:
  FastTraceFile(const std::string& path, const ReaderOptions& options);
  std::unique_ptr<CpuRecordStream> OpenCpuRecords(int cpu) override;
  // The file's path in messages about its data, with the buffer's name if not the top one.
  std::string DataLabel() const;

  // Sanity limit: a larger CPU number can only come from a corrupt file.
  static constexpr uint32_t kMaxCpus = 1u << 16;

  // What every BUFFER option starts with.
  struct BufferOptionHead {
    std::string name;  // "" for the top instance
    uint64_t offset = 0;
    size_t option_at = 0;
    bool cstool_private = false;  // tracefile::kOptionCstoolBuffer: read only when asked for
  };
  // Reads the head of the BUFFER option at `option_at` from `opt`, its payload.
  static BufferOptionHead ReadBufferOptionHead(ByteCursor& opt, size_t option_at);
  // The error for ReaderOptions::buffer `name`, which the file does not hold.
  [[noreturn]] void ThrowNoBuffer(const std::string& name) const;

  // One event format text, kept until all are parsed together.
  struct EventFormatText {
    std::string_view text;
    std::string system;
    size_t offset;        // in the file (or in its decompressed section)
    std::string_view in;  // what errors name it in: the file, or its section's label
  };
  // What one section tells a later one.
  struct Sections {
    std::vector<EventFormatText> formats;
    // CPUSTAT options follow a "Buffer: NAME" marker per instance.
    std::map<std::string, std::map<int32_t, CpuStatOption>> stats_by_buffer;
    std::string stats_buffer;
  };

  // Magic, version (which must be `version`), endianness, long size and page size, and
  // the tep_handle set up for them.
  void ReadInitialFormat(ByteCursor& in, std::string_view version);
  // header_page (parsed) and header_event (skipped).
  void ReadHeaderInfo(ByteCursor& in);
  // The ftrace plugins' formats, then every event system's (kept in sections).
  void ReadFtraceEventFormats(ByteCursor& in, Sections& sections);
  void ReadEventFormats(ByteCursor& in, Sections& sections);
  // Checks and parses the formats kept so far, those of ReaderOptions::decodes_event
  // whole and the rest by name and ID (a damaged one names its offset, never crashes).
  void ParseFormats(const Sections& sections);
  // /proc/kallsyms as recorded (record --stacks; trace-cmd always), kept for
  // LoadKernelSymbols.
  void ReadKallsyms(ByteCursor& in);
  // What LoadKernelSymbols reads first: a v7 file's kallsyms section, decompressed only
  // when a stack needs it.
  virtual void ReadDeferredKallsyms() {}
  // What PrepareSavedComms reads first: the saved cmdlines text into saved_cmdlines_.
  virtual void ReadDeferredCmdlines() {}
  // saved_comm_lines_ from saved_cmdlines_.
  void IndexSavedComms();
  // SavedComm by a search of saved_cmdlines_ itself.
  std::string ScanSavedComm(int32_t pid) const;
  // `text` itself when it lies in the mapped file, which outlives every use, else a copy
  // in `storage` (a v7 section decompressed into a buffer of its own). trace-cmd's files
  // hold the whole /proc/kallsyms: a copy of its megabytes faulted in page by page.
  std::string_view KeepText(std::string_view text, std::string& storage) const;
  // The saved cmdlines section's body (u64 size, the text) into saved_cmdlines_.
  void KeepSavedCmdlines(ByteCursor& in);
  // The number of CPUs in the file (read at `at`).
  void SetCpus(uint32_t cpus, const ByteCursor& in, size_t at);
  // An option both versions store alike (CPUSTAT, TRACECLOCK, cstool's recording info);
  // false if `id` is none of them.
  bool ReadCommonOption(uint16_t id, std::string_view body, size_t option_at, const ByteCursor& in,
                        Sections& sections);
  // Checks one CPU's pages in place (read at `at` by `in`): a whole number of pages,
  // within the file; with salvage, data cut short by the file's end is kept up to its
  // last whole page.
  void CheckPagesInPlace(CpuData& d, size_t cpu, const std::string& label, const ByteCursor& in,
                         size_t at);
  // Takes the CPUSTAT options of the buffer read.
  void KeepCpuStats(const Sections& sections);
  // Both checks end a parse: a timestamp option (FastPathUnsupported), and
  // pages in place that overlap between CPUs (each CPU's read buffer is then
  // bounded by its own data, and all of them by the file).
  void CheckParsed() const;

  MappedFile file_;
  UniqueFd data_fd_;  // the CPUs' data is read through it (pread), pages and chunks alike
  TepHandlePtr tep_;
  std::vector<CpuData> cpu_data_;
  std::string data_compression_;
  bool salvage_ = false;
  int jobs_ = 1;                               // ReaderOptions::jobs
  bool read_ahead_on_callers_ = false;         // ReadAheadOnCallers
  bool records_only_ = false;                  // ReaderOptions::records_only
  ReaderOptions::DecodesEvent decodes_event_;  // ReaderOptions::decodes_event
  ReaderOptions::TrustsFormat trusts_format_;  // ReaderOptions::trusts_format
  // Texts kept for later, in the mapped file or (KeepText) in storage of their own.
  std::string_view kallsyms_;  // not yet loaded (LoadKernelSymbols)
  std::string kallsyms_storage_;
  std::string_view saved_cmdlines_;  // "<pid> <comm>\n" lines (SavedComm)
  std::string saved_cmdlines_storage_;
  bool saved_comms_prepared_ = false;
  // A line of saved_cmdlines_: its pid and where its comm lies in the text.
  struct SavedCommLine {
    int32_t pid = 0;
    uint32_t size = 0;
    size_t at = 0;
  };
  // saved_cmdlines_'s lines by pid, then place; built once SavedComm has scanned the text
  // kSavedCommScans times.
  std::vector<SavedCommLine> saved_comm_lines_;
  bool saved_comms_indexed_ = false;
  int saved_comm_scans_ = 0;
  static constexpr int kSavedCommScans = 32;
  // Set by an option that shifts or converts timestamps (DATE, OFFSET, TIME_SHIFT,
  // TSC2NSEC): libtracecmd applies it, the own parsers do not.
  uint16_t timestamp_option_ = 0;
  // Decompressed chunk bytes held by this file's CPU streams at once, and the most a file
  // may make them hold (a damaged one could claim huge chunks on many CPUs).
  std::atomic<uint64_t> chunk_bytes_held_{0};
  static constexpr uint64_t kMaxChunkBytesHeld = uint64_t{1} << 30;
  // Decompresses the CPUs' chunks ahead on worker threads (ReaderOptions::jobs > 1).
  // Last member: its workers stop before anything their sources use goes.
  std::unique_ptr<PagePrefetcher> prefetcher_;

 private:
  void ReadFormatTexts(ByteCursor& in, uint32_t count, const std::string& system,
                       std::string_view size_label, std::string_view text_label,
                       Sections& sections);
};

}  // namespace cstool
