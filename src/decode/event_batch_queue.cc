#include "decode/event_batch_queue.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace cstool {

EventBatchQueue::EventBatchQueue(size_t depth, bool spin)
    : depth_(std::max<size_t>(depth, 1)), spin_(spin) {}

template <typename Ready>
void EventBatchQueue::SpinFor(Ready ready) {
  constexpr auto kSpin = std::chrono::microseconds(50);
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return;
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
    }
    if (std::chrono::steady_clock::now() > until) return;
  }
}

EventBatch EventBatchQueue::Push(EventBatch&& full) {
  if (spin_)
    SpinFor([&] {
      return full_count_.load(std::memory_order_relaxed) < depth_ ||
             finished_.load(std::memory_order_relaxed);
    });
  std::unique_lock lock(mutex_);
  if (full_.size() >= depth_ && !cancelled_) {
    producer_waits_ = true;
    changed_.wait(lock, [&] { return full_.size() < depth_ || cancelled_; });
    producer_waits_ = false;
  }
  if (cancelled_) throw EventBatchQueueCancelled{};
  full_.push_back(std::move(full));
  full_count_.store(full_.size(), std::memory_order_relaxed);
  const bool wake = consumer_waits_;
  EventBatch next;
  if (!empty_.empty()) {
    next = std::move(empty_.back());
    empty_.pop_back();
  }
  lock.unlock();
  if (wake) changed_.notify_all();
  return next;
}

void EventBatchQueue::Close(std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    finished_.store(true, std::memory_order_relaxed);
    error_ = std::move(error);
  }
  changed_.notify_all();
}

bool EventBatchQueue::Pop(EventBatch& batch) {
  if (spin_) SpinFor([&] { return !PopWouldWait(); });
  std::unique_lock lock(mutex_);
  if (batch.capacity() != 0) {  // moving it out leaves `batch` empty
    batch.clear();
    empty_.push_back(std::move(batch));
  }
  if (full_.empty() && !closed_) {
    consumer_waits_ = true;
    changed_.wait(lock, [&] { return !full_.empty() || closed_; });
    consumer_waits_ = false;
  }
  if (full_.empty()) return false;
  batch = std::move(full_.front());
  full_.pop_front();
  full_count_.store(full_.size(), std::memory_order_relaxed);
  // The producer waits only with the queue full: taking one is what frees it.
  const bool wake = producer_waits_;
  lock.unlock();
  if (wake) changed_.notify_all();
  return true;
}

void EventBatchQueue::Cancel() {
  {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
    finished_.store(true, std::memory_order_relaxed);
  }
  changed_.notify_all();
}

std::exception_ptr EventBatchQueue::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

}  // namespace cstool
