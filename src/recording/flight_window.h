// The pages of one flight-recorder dump: every CPU's ring buffer as the kernel kept it
// in overwrite mode, read whole once tracing moved to the next instance, trimmed to
// the last SECS seconds. The kernel marks the first page of a CPU whose older events
// it overwrote as "events missed before": here that is history given up by design, not
// a loss, so the mark is cleared (a report must not count it as lost events) and the
// CPU's window starts at that page.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "model/recording_info.h"

namespace cstool {

class FlightWindow {
 public:
  // `window_ns` of history per CPU, traced since `traced_from` (the instance's start).
  FlightWindow(const std::vector<int>& cpus, int64_t window_ns, int64_t traced_from);

  // Keeps one page of `cpu` (read in buffer order) whose last record is at `last_ts`.
  void Add(int cpu, std::span<const uint8_t> page, int64_t last_ts, uint32_t events);
  // Drops the pages wholly before `to - window`.
  void Trim(int64_t to);
  // Where the kept window before `to` begins: `to - window`, or later where tracing
  // began or a CPU's buffer held less (its oldest event after an overwrite).
  int64_t WindowStart(int64_t to) const;
  // Whether the kernel overwrote older events on some CPU, and how many it said it did
  // (a page has room for the count only when its data leaves some).
  bool overwrote() const;
  uint64_t overwritten_events() const;

  // Writes `cpu`'s kept pages to `file` as compressed chunks (format/trace_file_writer.h,
  // AppendChunk) or, with an empty `compression`, as they are; returns the CPU's
  // counts (events, pages, bytes, missed events the pages carry). Throws cstool::Error.
  CpuRecordStats WritePages(int cpu, const std::filesystem::path& file,
                            const std::string& compression) const;
  size_t bytes() const;

 private:
  struct Page {
    std::vector<uint8_t> bytes;
    int64_t last_ts = 0;
    uint32_t events = 0;
  };
  struct Cpu {
    int cpu = 0;
    std::deque<Page> pages;
    size_t bytes = 0;
    int64_t history_from = INT64_MIN;  // the first page's time, if older ones were overwritten
    uint64_t overwritten = 0;
  };
  Cpu* Find(int cpu);
  const Cpu* Find(int cpu) const;

  int64_t window_ns_;
  int64_t traced_from_;
  std::vector<Cpu> cpus_;
};

}  // namespace cstool
