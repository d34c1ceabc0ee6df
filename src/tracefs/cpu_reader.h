// One reader thread per traced CPU: moves raw ring-buffer sub-buffers from the
// instance's per_cpu/cpuN/trace_pipe_raw into a temporary page file, counting events
// and missed events per page (kbuffer) on the way. With a compression, the file gets
// compressed chunks of pages instead (format/trace_file_writer.h: AppendChunk), written
// as they fill, so nothing is ever stored uncompressed.
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "model/recording_info.h"

struct tracefs_instance;
struct kbuffer;

namespace cstool {

class Compressor;
class TracePipeRaw;
class WriteBudget;

class CpuReader {
 public:
  // Opens trace_pipe_raw of `cpu` and creates `pages_file` (removed again when the
  // reader is destroyed). Throws cstool::Error naming the path on failure.
  // `compression`: "" for raw pages, else "zstd" or "zlib".
  // `budget` (optional, shared by the readers of a recording) bounds what is written:
  // once it is exhausted, pages are read and counted as unwritten but not stored.
  CpuReader(tracefs_instance* instance, int cpu, std::filesystem::path pages_file,
            const std::string& compression = "", WriteBudget* budget = nullptr);
  ~CpuReader();
  CpuReader(const CpuReader&) = delete;
  CpuReader& operator=(const CpuReader&) = delete;

  void Start();
  // Keeps the reader thread off the CPU it reads (when other CPUs are online).
  void AvoidOwnCpu(const std::vector<int>& online);
  // Before Start(): this reader's thread also drains `other` (a reader of another
  // instance's buffer of the same CPU, never started itself), when it finds its own
  // buffer empty and at least every kDriveEveryPages pages. One thread and one poll per
  // CPU however many buffers: every thread woken is a preemption of the traced workload.
  void Drive(CpuReader* other) { driven_ = other; }
  // Stops the thread and drains what is left in the ring buffer. Call after tracing
  // was turned off. Throws if writing the page file failed at any point.
  void StopAndFlush();

  bool failed() const { return failed_.load(); }
  int cpu() const { return cpu_; }
  const std::filesystem::path& pages_file() const { return path_; }
  // Events, pages and bytes count what is in the file; safe to call while running.
  CpuRecordStats Stats() const;
  // The page file stays on disk when the reader is destroyed (for `record --recover`).
  void KeepFile() { keep_file_ = true; }

 private:
  struct KbufferDeleter {
    void operator()(kbuffer* k) const;
  };

  void Run();
  // Moves one sub-buffer from the ring buffer towards the file: false when none was
  // there (a read error other than that marks the reader failed).
  bool ReadPage();
  // Moves what the ring buffer holds now to the file (the driving reader's thread).
  void ReadAvailable();
  void Consume(int bytes);
  void FlushWriteBuffer();
  void SetError(const std::string& message);

  int cpu_;
  std::filesystem::path path_;
  int fd_ = -1;
  std::unique_ptr<TracePipeRaw> pipe_;
  std::unique_ptr<kbuffer, KbufferDeleter> kbuf_;
  size_t subbuf_size_ = 0;
  std::vector<char> page_;
  std::string write_buffer_;
  std::unique_ptr<Compressor> compressor_;  // null: pages are written as they are
  std::string chunk_;                       // a compressed chunk on its way to the file
  WriteBudget* budget_ = nullptr;
  CpuReader* driven_ = nullptr;  // Drive()
  bool keep_file_ = false;
  // What the write buffer holds, counted into the totals only once it is in the file.
  uint64_t pending_events_ = 0, pending_pages_ = 0, pending_bytes_ = 0;

  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> failed_{false};
  std::mutex error_mutex_;
  std::string error_;

  std::atomic<uint64_t> events_{0}, pages_{0}, bytes_{0}, lost_events_{0}, lost_pages_{0};
  std::atomic<int64_t> unwritten_from_ts_{0};  // CpuRecordStats::unwritten_from_ts
};

}  // namespace cstool
