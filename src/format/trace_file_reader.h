// Opening a trace.dat file and streaming its raw records per CPU.
//
// Two backends present one interface:
//  - the fast path, own parsers for trace-cmd v6 and v7 files in host byte order (the
//    header mapped and every section bounds-checked; each CPU's ring-buffer pages read
//    with pread into a buffer of its own, or v7's zstd/zlib chunks decompressed one at a
//    time; records point into those buffers until the stream's next batch);
//  - the compatibility path through libtracecmd for everything else trace-cmd reads
//    (foreign byte order, compression cstool does not know).
// Corrupt or truncated input throws cstool::Error naming the file and byte offset.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "format/salvage_log.h"
#include "model/recording_info.h"

struct tep_handle;

namespace cstool {

// One record of one CPU's ring buffer. `data`/`size` is the event payload (starting
// with common_type). A record with data == nullptr is a loss marker: the ring buffer
// lost `lost` events (-1: an unknown number) on `cpu` just before `ts`.
struct RawRecord {
  int64_t ts = 0;
  const uint8_t* data = nullptr;
  uint32_t size = 0;
  int32_t cpu = 0;
  int64_t lost = 0;

  bool is_loss() const { return data == nullptr; }
};

// The records of one CPU in buffer order.
class CpuRecordStream {
 public:
  virtual ~CpuRecordStream() = default;
  virtual int cpu() const = 0;
  // The next records (at least one), or an empty span once the stream is exhausted.
  // The span and the record data stay valid until the next call on this stream.
  virtual std::span<const RawRecord> NextBatch() = 0;
};

// Per-CPU counters from the file's CPUSTAT options (per_cpu/cpuN/stats at stop).
struct CpuStatOption {
  int32_t cpu = 0;
  uint64_t entries = 0;
  uint64_t overrun = 0;
  uint64_t commit_overrun = 0;
  uint64_t dropped = 0;
  uint64_t read = 0;
};

enum class ReaderBackend {
  kAuto,  // fast path when possible, else libtracecmd
  kFast,  // own v6/v7 parser only (throws if the file needs libtracecmd)
  kLibTracecmd,
};

struct ReaderOptions {
  ReaderBackend backend = ReaderBackend::kAuto;
  // Which ring buffer to read: empty = the top-level buffer if it holds data, else the
  // first instance (trace-cmd extract -B stores instances as BUFFER options).
  std::string buffer;
  // Read past damage instead of failing on it: CPU data cut short is read up to the
  // cut, a corrupt ring-buffer page is skipped (and counts as a loss of unknown size).
  // What was skipped is listed in TraceFileReader::salvage_log(). Damage to the header
  // (formats, CPU table) still throws: there is nothing to salvage without it.
  bool salvage = false;
  // Threads reading the file: above 1, the CPUs' compressed chunks are decompressed
  // ahead on jobs - 1 workers for the thread that reads the records (cstool's own
  // readers; pages stored uncompressed and libtracecmd are read by that thread). The
  // records and their order do not depend on it.
  int jobs = 1;
  // Only the buffer's records (cstool's own readers): the event formats, kallsyms and
  // recording info are not loaded. For a second buffer of a file whose first
  // reader's decoder decodes its records (tep() has no events then).
  bool records_only = false;
  // The events the caller decodes, by system and name (cstool's own readers): only their
  // formats are parsed whole, every other one is registered by its name and ID alone, so
  // that its records still name their event. Parsing a file's hundreds of unused formats
  // (trace-cmd record -e syscalls) cost more than reading its events. Empty: every
  // format whole, as libtracecmd does.
  using DecodesEvent = std::function<bool(std::string_view system, std::string_view name)>;
  DecodesEvent decodes_event;
  // Formats known to be sound (cstool's own readers), such as the running kernel's own
  // text: they skip the trial parse in a child process that guards against a damaged
  // format crashing libtraceevent. That fork cost a quarter of a small file's report.
  // Empty: every format is tried first.
  using TrustsFormat =
      std::function<bool(std::string_view system, std::string_view name, std::string_view text)>;
  TrustsFormat trusts_format;
};

class TraceFileReader {
 public:
  virtual ~TraceFileReader() = default;

  const std::string& path() const { return path_; }
  int file_version() const { return file_version_; }
  int cpus() const { return cpus_; }
  int long_size() const { return long_size_; }
  uint32_t page_size() const { return page_size_; }
  bool big_endian() const { return big_endian_; }
  // "fast-v6", "fast-v7" or "libtracecmd".
  virtual const char* backend_name() const = 0;
  // Name of the buffer (instance) read; empty for the top-level buffer.
  const std::string& buffer_name() const { return buffer_name_; }
  // The names of the buffer instances the file holds besides the top-level one.
  const std::vector<std::string>& instance_names() const { return instance_names_; }
  // cstool's buffers (tracefile::kOptionCstoolBuffer) the file names but holds none of:
  // a tool that rewrote the file (`trace-cmd convert`) copied their options, which it
  // does not know, and left out their data. Not in instance_names().
  const std::vector<std::string>& absent_instance_names() const { return absent_instance_names_; }
  // Clock the trace was recorded with ("mono", "local", ...); empty if unknown.
  const std::string& trace_clock() const { return trace_clock_; }
  // Whether the timestamps are the clock's own values: the file has no option that shifts
  // or converts them (trace-cmd's TSC2NSEC, which libtracecmd applies and cstool's own
  // readers leave to it), so an x86-tsc trace counts TSC cycles.
  bool timestamps_as_recorded() const { return timestamps_as_recorded_; }
  // CPUSTAT of the buffer read, by CPU; empty if the file has none.
  const std::map<int32_t, CpuStatOption>& cpu_stats() const { return cpu_stats_; }
  // cstool's metadata (option tracefile::kOptionCstoolInfo or the FILE.cstool.json sidecar).
  const std::optional<RecordingInfo>& recording_info() const { return info_; }
  // Sections of the file's metadata read only when needed (saved cmdlines, kallsyms) that
  // turned out damaged, each with what it costs the report; filled as they are read.
  const std::vector<std::string>& damaged_sections() const { return damaged_sections_; }
  // With ReaderOptions::salvage: the damage skipped so far (grows while streams are read).
  const SalvageLog& salvage_log() const { return salvage_log_; }
  // Forgets the damage noted after the first `n` entries: a pass over the streams before
  // the one that counts (a scan of record types) would otherwise note it twice.
  void ForgetSalvageNotesFrom(size_t n) { salvage_log_.Truncate(n); }

  // Event formats are loaded, kallsyms by LoadKernelSymbols, saved cmdlines by SavedComm;
  // the fast readers skip printk formats, which no analysis reads.
  virtual tep_handle* tep() const = 0;
  // Loads the file's kallsyms, when recorded, into tep() so that tep_find_function
  // resolves kernel addresses. Deferred until a kernel stack needs it: trace-cmd stores
  // the whole /proc/kallsyms, whose parse took longer than reading a small file's events.
  // Call it before the first tep_find_function: libtraceevent builds its address map at
  // the first lookup and keeps it.
  virtual void LoadKernelSymbols() {}
  // The name the kernel last saw for `pid` in the file's saved cmdlines ("" if none):
  // for a thread no event named (a pid-filtered trace shows some only as an event's
  // common_pid). Read on first use. A pid reused during the recording has its last name.
  virtual std::string SavedComm(int32_t /*pid*/) { return {}; }
  // Reads the saved cmdlines now, so that SavedComm changes nothing the threads that
  // decode with this reader's streams and tep() use (it may read the mapped file they
  // read too, which is read-only). SavedComm itself: one thread at a time.
  virtual void PrepareSavedComms() {}

  // A stream over the records of `cpu` (0 <= cpu < cpus()), from StartAt's time on and
  // before EndAt's. Each call starts over.
  std::unique_ptr<CpuRecordStream> OpenCpu(int cpu);
  // Streams opened from now on leave out the records before `ts` (losses too). A flight
  // recorder's dump keeps whole pages, and a quiet CPU's first page can begin long before
  // the window the dump is of.
  void StartAt(int64_t ts) { start_ts_ = ts; }
  // ... and the records from `ts` on (a recording cut short: RecordingInfo::CompleteUntilTs).
  void EndAt(int64_t ts) { end_ts_ = ts; }
  int64_t end_ts() const { return end_ts_; }  // EndAt; 0: none

  // Whether the CPUs' data is stored compressed (decompression is then most of reading).
  virtual bool data_compressed() const { return false; }
  // ReaderOptions::jobs, changed before the first OpenCpu (no effect after it).
  virtual void SetJobs(int /*jobs*/) {}
  // Compressed data is then read ahead also by whichever threads call ReadAheadOnce
  // (report -j 2: the analysing thread while it would wait), before the first OpenCpu
  // that should be read so; no effect on data stored in place.
  virtual void ReadAheadOnCallers() {}
  // Reads one run of some CPU's data ahead on the calling thread (any thread, while
  // streams are read on another); false when there is none to read ahead now.
  virtual bool ReadAheadOnce() { return false; }
  // Whether streams of different CPUs, once opened, may be read on different threads at
  // once (DecodeOptions::decoding_threads).
  virtual bool ReadsCpusInParallel() const { return false; }
  // The bytes of `cpu`'s data in the file (compressed, if it is); 0 when unknown.
  virtual uint64_t CpuDataBytes(int /*cpu*/) const { return 0; }

 protected:
  // The backend's stream over all records of `cpu`.
  virtual std::unique_ptr<CpuRecordStream> OpenCpuRecords(int cpu) = 0;

  std::string path_;
  int file_version_ = 0;
  int cpus_ = 0;
  int long_size_ = 8;
  uint32_t page_size_ = 4096;
  bool big_endian_ = false;
  std::string buffer_name_;
  std::vector<std::string> instance_names_;
  std::vector<std::string> absent_instance_names_;
  std::string trace_clock_;
  bool timestamps_as_recorded_ = true;
  std::map<int32_t, CpuStatOption> cpu_stats_;
  std::vector<std::string> damaged_sections_;
  std::optional<RecordingInfo> info_;
  SalvageLog salvage_log_;
  int64_t start_ts_ = 0;  // StartAt; 0: every record
  int64_t end_ts_ = 0;    // EndAt; 0: every record

 public:
  // The instances a user may name besides the one read (cstool's own run-time buffer is
  // part of the trace's analysis), quoted and comma-separated; "" if none.
  std::string OtherInstancesText() const;
  // The error for ReaderOptions::buffer naming no buffer of the file: it lists the ones
  // there are (instance_names(), read before).
  [[noreturn]] void ThrowNoBuffer(const std::string& name) const;
  // Loads FILE.cstool.json into recording_info() unless the file itself carried one.
  void LoadSidecarInfo();
  // For a backend that cannot see cstool's option (libtracecmd skips unknown options).
  void AdoptRecordingInfo(std::optional<RecordingInfo> info) { info_ = std::move(info); }
  // For libtracecmd (which says false itself), whose timestamps are as recorded when the
  // own parser, which reads no file that converts them, could read the file.
  void SetTimestampsAsRecorded(bool as_recorded) { timestamps_as_recorded_ = as_recorded; }
};

// Opens `path` with the backend the options and the file call for.
std::unique_ptr<TraceFileReader> OpenTraceFile(const std::string& path,
                                               const ReaderOptions& options = {});

// Helpers shared by both backends (exposed for tests).
// Parses the bracketed clock out of a trace_clock listing ("local [mono] global").
std::string ParseTraceClock(std::string_view text);
// Parses one CPUSTAT option text; returns false if it holds no "CPU: N" line.
bool ParseCpuStat(std::string_view text, CpuStatOption* out);
// If `text` is trace-cmd's instance separator ("\nBuffer: NAME\n\n"), sets *name.
bool ParseCpuStatBufferMarker(std::string_view text, std::string* name);

}  // namespace cstool
