// Builds trace-cmd v6 files from real event format files and synthetic ring-buffer
// pages, for tests and benchmarks (not a recorder: `cstool record` has its own writer).
// Formats come from a directory laid out like tracefs' events/ (header_page,
// header_event, <system>/<event>/format): /sys/kernel/tracing/events or the snapshot
// in tests/fixtures/formats/events.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "format/trace_handles.h"
#include "model/recording_info.h"

namespace cstool {

class SyntheticTrace {
 public:
  SyntheticTrace(std::string events_dir, int cpus, uint32_t page_size = 4096);

  // Adds system/event's format from the events directory; returns its type id.
  int AddEvent(std::string_view system, std::string_view event);
  // Adds a format given as text (e.g. an older kernel's); returns its type id.
  int AddEventFormat(std::string_view system, std::string format_text);

  // An event payload laid out by its format, common fields filled in.
  class Record {
   public:
    Record& Set(std::string_view field, int64_t value);
    // char[N] fields are copied (truncated, NUL-padded); __data_loc strings appended.
    Record& SetString(std::string_view field, std::string_view value);
    std::span<const uint8_t> bytes() const { return bytes_; }
    std::vector<uint8_t>& mutable_bytes() { return bytes_; }

   private:
    friend class SyntheticTrace;
    tep_event* event_ = nullptr;
    std::vector<uint8_t> bytes_;
  };
  Record NewRecord(int type_id, int32_t pid, uint8_t flags = 0, uint8_t preempt_count = 0) const;

  // Appends a record to `cpu`'s ring buffer at time `ts` (must not go backwards).
  void Append(int cpu, uint64_t ts, std::span<const uint8_t> payload);
  void Append(int cpu, uint64_t ts, const Record& r) { Append(cpu, ts, r.bytes()); }
  // The next page of `cpu` will say `count` events were lost before it (-1: unknown).
  void MarkLost(int cpu, int64_t count);

  void SetCmdline(int32_t pid, std::string comm) { cmdlines_[pid] = std::move(comm); }
  void SetTraceClock(std::string clock) { trace_clock_ = std::move(clock); }
  void SetCpuStat(int cpu, std::string text) { cpustats_[cpu] = std::move(text); }
  void SetRecordingInfo(const RecordingInfo& info) { info_ = info; }

  uint64_t records() const { return records_; }
  // The complete file image / writes it to `path` (throws cstool::Error on failure).
  std::string Serialize() const;
  void Write(const std::string& path) const;

 private:
  struct CpuPages {
    std::vector<uint8_t> data;  // finished pages
    std::vector<uint8_t> page;  // page being filled (header included)
    uint32_t commit = 0;
    uint64_t last_ts = 0;
    bool open = false;
    int64_t pending_lost = 0;
    bool lost_pending = false;
  };
  void FlushPage(CpuPages& c) const;
  void StartPage(CpuPages& c, uint64_t ts);

  std::string events_dir_;
  int cpus_;
  uint32_t page_size_;
  TepHandlePtr tep_;
  std::map<std::string, std::vector<std::string>> formats_;  // system -> format texts
  std::vector<CpuPages> pages_;
  std::map<int32_t, std::string> cmdlines_;
  std::map<int, std::string> cpustats_;
  std::string trace_clock_ = "local";
  std::optional<RecordingInfo> info_;
  uint64_t records_ = 0;
};

// Converts the v6 file at `path` to `v7_path` with zstd chunks, as trace-cmd writes them
// (`trace-cmd convert --file-version 7 --compression zstd`); false, and no file at
// `v7_path`, without trace-cmd or when it fails.
bool ConvertToV7Zstd(const std::string& path, const std::string& v7_path);

}  // namespace cstool
