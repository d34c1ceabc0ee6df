#include "decode/event_batch.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <utility>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace cstool {

void EventBatch::Reserve(size_t capacity) {
  if (used_ != 0) throw std::logic_error("EventBatch::Reserve on a batch with entries");
  capacity = Aligned(capacity);
  if (capacity <= capacity_) return;
  storage_ = std::make_unique_for_overwrite<std::byte[]>(capacity + kLineBytes);
  void* at = storage_.get();
  size_t space = capacity + kLineBytes;
  base_ = static_cast<std::byte*>(std::align(kLineBytes, capacity, at, space));
  capacity_ = capacity;
}

EventBatchWriter::EventBatchWriter(size_t batch_bytes, Handoff full)
    : batch_bytes_(EventBatch::Aligned(std::max<size_t>(batch_bytes, 1))), full_(std::move(full)) {
  batch_.Reserve(batch_bytes_);
}

namespace {

// Copies `bytes` (a multiple of 8) from `from` to `to` (8-aligned) with stores that bypass
// the caches; whole lines leave the write-combining buffers as one write each. (Plain
// loops: with a helper lambda, GCC kept the pointers on the stack, and the copy took four
// times as long.)
void StreamCopy(std::byte* to, const std::byte* from, size_t bytes) {
#if defined(__x86_64__)
  long long word;
  if (reinterpret_cast<uintptr_t>(to) % 16 != 0 && bytes != 0) {
    std::memcpy(&word, from, sizeof word);
    _mm_stream_si64(reinterpret_cast<long long*>(to), word);
    to += 8;
    from += 8;
    bytes -= 8;
  }
  auto* out = reinterpret_cast<__m128i*>(to);
  const auto* in = reinterpret_cast<const __m128i*>(from);
  for (; bytes >= 64; bytes -= 64, out += 4, in += 4) {
    _mm_stream_si128(out, _mm_loadu_si128(in));
    _mm_stream_si128(out + 1, _mm_loadu_si128(in + 1));
    _mm_stream_si128(out + 2, _mm_loadu_si128(in + 2));
    _mm_stream_si128(out + 3, _mm_loadu_si128(in + 3));
  }
  for (; bytes >= 16; bytes -= 16) _mm_stream_si128(out++, _mm_loadu_si128(in++));
  if (bytes != 0) {
    std::memcpy(&word, in, sizeof word);
    _mm_stream_si64(reinterpret_cast<long long*>(out), word);
  }
#else
  std::memcpy(to, from, bytes);
#endif
}

}  // namespace

std::byte* EventBatchWriter::Claim(size_t bytes) {
  std::byte* p = batch_.Append(bytes);
  if (p == nullptr) throw std::logic_error("EventBatchWriter: no room made in the batch");
  return p;
}

void EventBatchWriter::Stream(bool all) {
  const size_t bytes = all ? staged_ : staged_ / kLineBytes * kLineBytes;
  if (bytes == 0) return;
  StreamCopy(Claim(bytes), stage_, bytes);
  staged_ -= bytes;
  if (staged_ != 0) std::memcpy(stage_, stage_ + bytes, staged_);
}

void EventBatchWriter::Flush() {
  Stream(true);
#if defined(__x86_64__)
  _mm_sfence();  // streamed stores are weakly ordered: all of them before the hand-over
#endif
  if (batch_.empty()) return;
  batch_ = full_(std::move(batch_));
  batch_.clear();
  batch_.Reserve(batch_bytes_);
}

EventBatchWriter::Placed EventBatchWriter::Place(EventTag tag, size_t bytes) {
  MakeRoom(bytes);
  if (bytes > kStageBytes / 2) {  // (only a record of a page of 8 KiB or more)
    Stream(true);
    std::byte* entry = Headed(Claim(bytes), tag, bytes);
    return {entry, entry};
  }
  std::byte* entry = StageEntry(tag, bytes, 0);
  return {entry, FinalOf(entry)};
}

template <typename T>
void EventBatchWriter::PutEntry(EventTag tag, const T& e) {
  static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= EventBatch::kAlign);
  const size_t body = kBodyBytes<T>;
  const Placed placed = Place(tag, body + EventBatch::Aligned(StringBytes(e)));
  T* copy = new (placed.entry + kHeaderBytes) T(e);
  CopyStrings(*copy, placed.entry + body, placed.final + body);
}

// Commit's way for strings beyond the room Begin left (inline in the decoder's code).
template void EventBatchWriter::PutEntry(EventTag, const SchedSwitch&);
template void EventBatchWriter::PutEntry(EventTag, const SchedWakeup&);
template void EventBatchWriter::PutEntry(EventTag, const SchedStatRuntime&);

void EventBatchWriter::PushSchedSwitch(const SchedSwitch& e) {
  PutEntry(EventTag::kSchedSwitch, e);
}

void EventBatchWriter::PushSchedWakeup(const SchedWakeup& e) {
  PutEntry(EventTag::kSchedWakeup, e);
}

void EventBatchWriter::PushSchedMigrateTask(const SchedMigrateTask& e) {
  PutEntry(EventTag::kSchedMigrateTask, e);
}

void EventBatchWriter::PushSchedStatRuntime(const SchedStatRuntime& e) {
  PutEntry(EventTag::kSchedStatRuntime, e);
}

void EventBatchWriter::PushUnfilteredRuntime(const SchedStatRuntime& e) {
  PutEntry(EventTag::kUnfilteredRuntime, e);
}

void EventBatchWriter::PushUnfilteredLost(const LostEvents& e) {
  PutEntry(EventTag::kUnfilteredLost, e);
}

void EventBatchWriter::PushUnfilteredWakelistFlush(const CsdFunctionEntry& e) {
  PutEntry(EventTag::kUnfilteredWakelistFlush, e);
}

void EventBatchWriter::PushUnfilteredMigrateTask(const SchedMigrateTask& e) {
  PutEntry(EventTag::kUnfilteredMigrateTask, e);
}

void EventBatchWriter::PushSchedProcessFork(const SchedProcessFork& e) {
  PutEntry(EventTag::kSchedProcessFork, e);
}

void EventBatchWriter::PushTaskNewtask(const TaskNewtask& e) {
  PutEntry(EventTag::kTaskNewtask, e);
}

void EventBatchWriter::PushTaskRename(const TaskRename& e) { PutEntry(EventTag::kTaskRename, e); }

void EventBatchWriter::PushSchedProcessExec(const SchedProcessExec& e) {
  PutEntry(EventTag::kSchedProcessExec, e);
}

void EventBatchWriter::PushSchedProcessExit(const SchedProcessExit& e) {
  PutEntry(EventTag::kSchedProcessExit, e);
}

void EventBatchWriter::PushSchedProcessFree(const SchedProcessFree& e) {
  PutEntry(EventTag::kSchedProcessFree, e);
}

void EventBatchWriter::PushIrqHandlerEntry(const IrqHandlerEntry& e) {
  PutEntry(EventTag::kIrqHandlerEntry, e);
}

void EventBatchWriter::PushIrqHandlerExit(const IrqHandlerExit& e) {
  PutEntry(EventTag::kIrqHandlerExit, e);
}

void EventBatchWriter::PushSoftirq(const Softirq& e) { PutEntry(EventTag::kSoftirq, e); }

void EventBatchWriter::PushIrqVector(const IrqVector& e) { PutEntry(EventTag::kIrqVector, e); }

void EventBatchWriter::PushNmiHandler(const NmiHandler& e) { PutEntry(EventTag::kNmiHandler, e); }

void EventBatchWriter::PushSysEnter(const SysEnter& e) { PutEntry(EventTag::kSysEnter, e); }

void EventBatchWriter::PushSysExit(const SysExit& e) { PutEntry(EventTag::kSysExit, e); }

void EventBatchWriter::PushPageFault(const PageFault& e) { PutEntry(EventTag::kPageFault, e); }

void EventBatchWriter::PushKernelStack(const KernelStack& e) {
  const size_t frame_bytes = e.frames == nullptr ? 0 : size_t{e.depth} * e.word_size;
  const size_t body = kBodyBytes<KernelStack>;
  const Placed placed = Place(EventTag::kKernelStack, body + EventBatch::Aligned(frame_bytes));
  auto* copy = new (placed.entry + kHeaderBytes) KernelStack(e);
  if (e.frames != nullptr) {  // even with no frames: nothing may point into the page
    if (frame_bytes != 0) std::memcpy(placed.entry + body, e.frames, frame_bytes);
    copy->frames = reinterpret_cast<const uint8_t*>(placed.final + body);
  }
}

void EventBatchWriter::PushLostEvents(const LostEvents& e) { PutEntry(EventTag::kLostEvents, e); }

void EventBatchWriter::PutNoCall(const RecordPlace& place, bool unfiltered) {
  PutEntry(unfiltered ? EventTag::kNoCallUnfiltered : EventTag::kNoCall, place);
}

void EventBatchWriter::PushOtherEvent(const EventCommon& c, int type_id) {
  PutEntry(EventTag::kOtherEvent, OtherEvent{c, type_id});
}

void EventBatchWriter::PushCsdFunctionEntry(const CsdFunctionEntry& e, int type_id) {
  PutEntry(EventTag::kCsdFunctionEntry, CsdFunctionEntryCall{e, type_id});
}

}  // namespace cstool
