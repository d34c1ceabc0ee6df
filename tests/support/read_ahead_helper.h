// A second thread that reads ahead for a reader all the while (TraceFileReader::
// ReadAheadOnce), as report -j 2's analysing thread does while it waits for batches.
#pragma once

#include <atomic>
#include <thread>

#include "format/trace_file_reader.h"

namespace cstool::testing {

class ReadAheadHelper {
 public:
  // Starts reading ahead for `reader` (nothing with null), which must outlive the helper.
  explicit ReadAheadHelper(TraceFileReader* reader) {
    if (reader == nullptr) return;
    reader->ReadAheadOnCallers();
    thread_ = std::thread([this, reader] {
      while (!stop_.load())
        if (!reader->ReadAheadOnce()) std::this_thread::yield();
    });
  }
  ~ReadAheadHelper() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  ReadAheadHelper(const ReadAheadHelper&) = delete;
  ReadAheadHelper& operator=(const ReadAheadHelper&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace cstool::testing
