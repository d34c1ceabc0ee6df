// The flight recorder's window: the last SECS seconds of every CPU's ring-buffer pages,
// kept in memory as they were read. Pages older than the window are dropped as newer
// ones arrive, so history is given up by design, not lost; a per-CPU byte cap bounds
// memory when the event rate is so high that SECS seconds would not fit (the window is
// then shorter, and WindowStart() says where it begins).
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
  // `seconds` of history per CPU, at most `cap_bytes` of pages per CPU.
  FlightWindow(const std::vector<int>& cpus, int64_t window_ns, size_t cap_bytes);

  // Keeps one page of `cpu` whose last record is at `last_ts`.
  void Add(int cpu, std::span<const uint8_t> page, int64_t last_ts, uint32_t events);
  // Drops the pages wholly before `now - window`.
  void Trim(int64_t now);
  // Where the kept window begins at `now`: `now - window`, or later where the cap
  // dropped younger pages on some CPU.
  int64_t WindowStart(int64_t now) const;

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
    int64_t capped_after = INT64_MIN;  // last_ts of the newest page the cap dropped
  };
  Cpu* Find(int cpu);
  const Cpu* Find(int cpu) const;

  int64_t window_ns_;
  size_t cap_bytes_;
  std::vector<Cpu> cpus_;
};

}  // namespace cstool
