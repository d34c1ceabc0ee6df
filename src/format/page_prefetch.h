// Reading ahead on worker threads (report -j N): the per-CPU work that needs no order
// across CPUs (the decompression of chunks; FastTraceFile does not wrap pages in place,
// which the decoding thread's own pread reads faster) runs on `workers` threads, each
// serving a share of the CPUs' chunk sources, while the caller's thread merges, decodes
// and analyses. Each CPU's runs wait in a bounded queue (up to a number
// of runs and of bytes ahead); a worker sleeps when all its queues are full and is woken
// when one is half drained, so a reader that keeps up never waits and a worker never
// spins. Buffers go round: the reader hands back the one it finished with each time it
// takes the next, so a CPU holds its queue's buffers and one more.
//
//   worker:  [source cpu0] -> run run run ->|queue cpu0|-> PrefetchedSource::NextRun
//            [source cpu1] -> run run ------>|queue cpu1|-> (caller's thread: merge)
//
// A chunk is claimed in order (its bytes read: ChunkPageSource::ClaimChunk) and then
// decompressed by the thread that claimed it, while others may claim and decompress the
// chunks after it: the reader, when the run it needs next is still being made, makes a
// later one meanwhile, and so may any thread that calls ReadAheadOnce.
//
// What a run carries is exactly what the source gave, in the same order: the same
// pages, loss counts, errors (rethrown when the reader reaches them) and salvage notes
// (added to the file's log when the reader reaches them), so a report does not depend
// on how many threads read it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "format/page_stream.h"
#include "format/salvage_log.h"

namespace cstool {

class PagePrefetcher {
 public:
  // `workers` threads of its own; with none, runs are read ahead only by ReadAheadOnce.
  explicit PagePrefetcher(int workers);
  ~PagePrefetcher();  // stops the workers; every source it wrapped must be gone by then
  PagePrefetcher(const PagePrefetcher&) = delete;
  PagePrefetcher& operator=(const PagePrefetcher&) = delete;

  // How far ahead a CPU is read: at most `runs` runs, and no more once `bytes` are queued.
  struct Depth {
    uint32_t runs;
    uint64_t bytes;
  };
  // A source whose runs `source` reads ahead on a worker. `source` writes its salvage notes
  // to `log` (which must be its own; null without salvage): they reach `salvage` in order,
  // when the reader takes the run they came with.
  std::unique_ptr<PageSource> Wrap(std::unique_ptr<ChunkPageSource> source,
                                   std::unique_ptr<SalvageLog> log, Depth depth,
                                   SalvageLog* salvage);
  // Makes one run ahead on the calling thread, for the CPU whose queue is shortest of
  // those with room; false when none has. For a thread that would otherwise wait (report
  // -j 2: the analysing thread, while the decoding thread is behind), which so takes over
  // some of the decompression from the decoding thread.
  bool ReadAheadOnce();

  struct Lane;

 private:
  friend class PrefetchedSource;
  void WorkerLoop(size_t worker);
  // Wakes the sleeping workers (a queue was drained to half, or a lane came or went).
  void Wake();

  std::mutex mutex_;  // lanes_, and the workers' sleep
  std::condition_variable wake_;
  std::vector<std::shared_ptr<Lane>> lanes_;
  std::atomic<uint64_t> generation_{0};  // bumped by every Wake
  std::atomic<int> sleepers_{0};
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace cstool
