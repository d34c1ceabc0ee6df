// Live page source for `cstool msa`: reads one CPU's ring buffer of a tracefs instance
// while tracing runs, without blocking (read(2) of trace_pipe_raw hands over partly
// filled pages too, so nothing waits for a page to fill), decodes the pages with the
// checked RingPageDecoder and queues their records. The caller takes records in
// timestamp order up to a cut time and leaves later ones queued for the next batch.
// Optionally every page read is also appended to a file (for a trace.dat written at
// the end, like `record`'s page files).
#pragma once

#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "format/ring_page.h"
#include "format/trace_file_reader.h"
#include "model/recording_info.h"
#include "tracefs/trace_pipe_raw.h"

struct tracefs_instance;

namespace cstool {

class LiveCpuSource {
 public:
  // Opens per_cpu/cpuN/trace_pipe_raw of `instance`; with `tee_file`, creates it (it is
  // removed again when the source is destroyed). Throws cstool::Error on failure.
  LiveCpuSource(tracefs_instance* instance, int cpu,
                std::optional<std::filesystem::path> tee_file = std::nullopt);
  ~LiveCpuSource();
  LiveCpuSource(const LiveCpuSource&) = delete;
  LiveCpuSource& operator=(const LiveCpuSource&) = delete;

  // Called with every page read that holds data (the whole sub-buffer) and the time of
  // its last record, before its records are queued: the flight recorder keeps the pages
  // themselves while the records feed its trigger.
  using PageSink =
      std::function<void(std::span<const uint8_t> page, int64_t last_ts, uint32_t events)>;
  void SetPageSink(PageSink sink) { sink_ = std::move(sink); }

  // Reads what the ring buffer holds now, at most `max_pages` pages; returns the number
  // of pages read. Throws cstool::Error on read or decode errors; a page the tee file
  // cannot take (a full disk) ends the tee instead (tee_error()), not the reading.
  size_t Drain(size_t max_pages);

  // A stream over the queued records with ts <= cut, in buffer order. Records it hands
  // out are consumed; the rest stay queued. Only one stream may be in use at a time.
  std::unique_ptr<CpuRecordStream> StreamUntil(int64_t cut);

  // Timestamp of the oldest queued record, or nullopt when nothing is queued.
  std::optional<int64_t> FrontTs() const;
  int cpu() const { return cpu_; }
  // trace_pipe_raw's fd: poll(2) reports it readable once the ring buffer is filled to
  // the instance's buffer_percent.
  int poll_fd() const { return pipe_->fd(); }
  size_t queued_pages() const { return pages_.size(); }
  // events = records decoded, pages, bytes of event data, lost events/pages.
  const CpuRecordStats& stats() const { return stats_; }
  const std::optional<std::filesystem::path>& tee_file() const { return tee_path_; }
  // Why the tee file stopped taking pages ("" while it takes them).
  const std::string& tee_error() const { return tee_error_; }
  // Stops the tee and removes its file.
  void StopTee();

 private:
  class Stream;
  struct Page {
    std::vector<uint8_t> bytes;
    std::vector<RawRecord> records;  // point into `bytes`; a loss marker may lead
    size_t next = 0;                 // first record not yet handed out
  };

  void Tee(const uint8_t* page);
  void PopConsumed();
  void Recycle(std::vector<uint8_t> buf);

  int cpu_;
  std::unique_ptr<TracePipeRaw> pipe_;  // per_cpu/cpuN/trace_pipe_raw, non-blocking
  size_t subbuf_size_ = 0;
  std::unique_ptr<RingPageDecoder> decoder_;
  std::deque<Page> pages_;
  std::vector<std::vector<uint8_t>> spare_;  // recycled page buffers
  std::optional<std::filesystem::path> tee_path_;
  std::string tee_error_;
  int tee_fd_ = -1;
  PageSink sink_;
  CpuRecordStats stats_;
  int64_t last_ts_ = -1;  // of the latest record read (a loss is dated there)
};

}  // namespace cstool
