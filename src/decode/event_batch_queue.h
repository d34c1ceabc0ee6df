// The bounded hand-over of event batches from the thread that decodes to the thread that
// analyses: at most `depth` batches wait, and the consumer hands each batch back for the
// producer to refill, so the two threads reuse a fixed set of buffers.
//
//   decoding thread:  DecodeTraceTo -> EventBatchWriter -> Push ->|queue|-> Pop -> ReplayEvents
//                                                   <- empty batch <-|     |<- batch handed back
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <mutex>
#include <vector>

#include "decode/event_batch.h"

namespace cstool {

// Thrown by Push once the consumer has gone: it unwinds the decoding thread's work.
struct EventBatchQueueCancelled {};

class EventBatchQueue {
 public:
  // With `spin`, each side waits a little without sleeping before it sleeps: right when
  // both threads have a core of their own, and a waste of the other's when they share one.
  explicit EventBatchQueue(size_t depth, bool spin = true);

  // Queues `full`, waiting while `depth` batches wait already; returns an empty batch to
  // fill next (one handed back if there is one). Throws EventBatchQueueCancelled when the
  // consumer has cancelled.
  EventBatch Push(EventBatch&& full);
  // The producer is done; `error` (or null) is what ended it, for the consumer to rethrow
  // after the last batch.
  void Close(std::exception_ptr error);

  // Hands back `batch` (the previous one, if any) and moves the next one into it; false
  // once the producer has closed and every batch was taken.
  bool Pop(EventBatch& batch);
  // No batch waits and the producer goes on: Pop would wait now.
  bool PopWouldWait() const {
    return full_count_.load(std::memory_order_relaxed) == 0 &&
           !finished_.load(std::memory_order_relaxed);
  }
  // The consumer stops taking batches: the producer's next Push throws.
  void Cancel();
  // What ended the producer (valid once Pop returned false).
  std::exception_ptr error() const;

 private:
  // Waits up to a few tens of microseconds for `ready` without sleeping: on a VM a sleeping
  // thread's wake-up costs as much as decoding a batch, and the other side is usually
  // about to deliver.
  template <typename Ready>
  static void SpinFor(Ready ready);

  const size_t depth_;
  const bool spin_;
  // full_.size(), closed_ and cancelled_, for the spinning side to watch without the lock.
  std::atomic<size_t> full_count_{0};
  std::atomic<bool> finished_{false};
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<EventBatch> full_;
  std::vector<EventBatch> empty_;
  bool closed_ = false;
  bool cancelled_ = false;
  bool producer_waits_ = false;
  bool consumer_waits_ = false;
  std::exception_ptr error_;
};

}  // namespace cstool
