#include "decode/event_batch.h"

#include <algorithm>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace cstool {

namespace {

constexpr size_t RoundUp(size_t n) {
  return (n + EventBatch::kAlign - 1) / EventBatch::kAlign * EventBatch::kAlign;
}

}  // namespace

void EventBatch::Reserve(size_t capacity) {
  if (used_ != 0) throw std::logic_error("EventBatch::Reserve on a batch with entries");
  capacity = RoundUp(capacity);
  if (capacity <= capacity_) return;
  storage_ = std::make_unique_for_overwrite<std::byte[]>(capacity);
  capacity_ = capacity;
}

EventBatchWriter::EventBatchWriter(size_t batch_bytes, Handoff full)
    : batch_bytes_(RoundUp(std::max<size_t>(batch_bytes, 1))), full_(std::move(full)) {
  batch_.Reserve(batch_bytes_);
}

void EventBatchWriter::Flush() {
  if (batch_.empty()) return;
  batch_ = full_(std::move(batch_));
  batch_.clear();
  batch_.Reserve(batch_bytes_);
}

template <typename T>
std::pair<T*, std::byte*> EventBatchWriter::Put(EventTag tag, const T& e, size_t extra) {
  static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= EventBatch::kAlign);
  const size_t body = RoundUp(sizeof(EventBatch::Header)) + RoundUp(sizeof(T));
  const size_t bytes = body + RoundUp(extra);
  std::byte* p = batch_.Append(bytes);
  if (p == nullptr) {
    Flush();
    batch_.Reserve(bytes);  // an event larger than a batch gets a batch of its own size
    p = batch_.Append(bytes);
  }
  ++entries_;
  const EventBatch::Header h{tag, static_cast<uint32_t>(bytes)};
  std::memcpy(p, &h, sizeof h);
  T* copy = new (p + RoundUp(sizeof(EventBatch::Header))) T(e);
  return {copy, p + body};
}

template <typename T, typename... Views>
void EventBatchWriter::PutCopying(EventTag tag, const T& e, Views... views) {
  if constexpr (sizeof...(views) == 0) {
    Put(tag, e, 0);
  } else {
    auto [copy, at] = Put(tag, e, (size_t{0} + ... + (e.*views).size()));
    ((copy->*views = CopyString(e.*views, &at)), ...);
  }
}

std::string_view EventBatchWriter::CopyString(std::string_view s, std::byte** at) {
  if (s.empty()) return {};
  std::memcpy(*at, s.data(), s.size());
  std::string_view copy(reinterpret_cast<const char*>(*at), s.size());
  *at += s.size();
  return copy;
}

void EventBatchWriter::PushSchedSwitch(const SchedSwitch& e) {
  PutCopying(EventTag::kSchedSwitch, e, &SchedSwitch::prev_comm, &SchedSwitch::next_comm);
}

void EventBatchWriter::PushSchedWakeup(const SchedWakeup& e) {
  PutCopying(EventTag::kSchedWakeup, e, &SchedWakeup::comm);
}

void EventBatchWriter::PushSchedMigrateTask(const SchedMigrateTask& e) {
  PutCopying(EventTag::kSchedMigrateTask, e, &SchedMigrateTask::comm);
}

void EventBatchWriter::PushSchedStatRuntime(const SchedStatRuntime& e) {
  PutCopying(EventTag::kSchedStatRuntime, e, &SchedStatRuntime::comm);
}

void EventBatchWriter::PushUnfilteredRuntime(const SchedStatRuntime& e) {
  PutCopying(EventTag::kUnfilteredRuntime, e, &SchedStatRuntime::comm);
}

void EventBatchWriter::PushUnfilteredLost(const LostEvents& e) {
  PutCopying(EventTag::kUnfilteredLost, e);
}

void EventBatchWriter::PushUnfilteredWakelistFlush(const CsdFunctionEntry& e) {
  PutCopying(EventTag::kUnfilteredWakelistFlush, e);
}

void EventBatchWriter::PushUnfilteredMigrateTask(const SchedMigrateTask& e) {
  PutCopying(EventTag::kUnfilteredMigrateTask, e, &SchedMigrateTask::comm);
}

void EventBatchWriter::PushSchedProcessFork(const SchedProcessFork& e) {
  PutCopying(EventTag::kSchedProcessFork, e, &SchedProcessFork::parent_comm,
             &SchedProcessFork::child_comm);
}

void EventBatchWriter::PushTaskNewtask(const TaskNewtask& e) {
  PutCopying(EventTag::kTaskNewtask, e, &TaskNewtask::comm);
}

void EventBatchWriter::PushTaskRename(const TaskRename& e) {
  PutCopying(EventTag::kTaskRename, e, &TaskRename::oldcomm, &TaskRename::newcomm);
}

void EventBatchWriter::PushSchedProcessExec(const SchedProcessExec& e) {
  PutCopying(EventTag::kSchedProcessExec, e, &SchedProcessExec::filename);
}

void EventBatchWriter::PushSchedProcessExit(const SchedProcessExit& e) {
  PutCopying(EventTag::kSchedProcessExit, e, &SchedProcessExit::comm);
}

void EventBatchWriter::PushSchedProcessFree(const SchedProcessFree& e) {
  PutCopying(EventTag::kSchedProcessFree, e, &SchedProcessFree::comm);
}

void EventBatchWriter::PushIrqHandlerEntry(const IrqHandlerEntry& e) {
  PutCopying(EventTag::kIrqHandlerEntry, e, &IrqHandlerEntry::name);
}

void EventBatchWriter::PushIrqHandlerExit(const IrqHandlerExit& e) {
  PutCopying(EventTag::kIrqHandlerExit, e);
}

// The softirq and vector names are the decoder's (it outlives the batches), but are
// copied like any other: a batch depends on nothing but itself.
void EventBatchWriter::PushSoftirq(const Softirq& e) {
  PutCopying(EventTag::kSoftirq, e, &Softirq::name);
}

void EventBatchWriter::PushIrqVector(const IrqVector& e) {
  PutCopying(EventTag::kIrqVector, e, &IrqVector::name);
}

void EventBatchWriter::PushNmiHandler(const NmiHandler& e) { PutCopying(EventTag::kNmiHandler, e); }

void EventBatchWriter::PushSysEnter(const SysEnter& e) { PutCopying(EventTag::kSysEnter, e); }

void EventBatchWriter::PushSysExit(const SysExit& e) { PutCopying(EventTag::kSysExit, e); }

void EventBatchWriter::PushPageFault(const PageFault& e) { PutCopying(EventTag::kPageFault, e); }

void EventBatchWriter::PushKernelStack(const KernelStack& e) {
  const size_t frame_bytes = e.frames == nullptr ? 0 : size_t{e.depth} * e.word_size;
  auto [copy, at] = Put(EventTag::kKernelStack, e, frame_bytes);
  if (e.frames != nullptr) {  // even with no frames: nothing may point into the page
    if (frame_bytes != 0) std::memcpy(at, e.frames, frame_bytes);
    copy->frames = reinterpret_cast<const uint8_t*>(at);
  }
}

void EventBatchWriter::PushLostEvents(const LostEvents& e) { PutCopying(EventTag::kLostEvents, e); }

void EventBatchWriter::PutNoCall(const RecordPlace& place, bool unfiltered) {
  Put(unfiltered ? EventTag::kNoCallUnfiltered : EventTag::kNoCall, place, 0);
}

void EventBatchWriter::PushOtherEvent(const EventCommon& c, int type_id) {
  Put(EventTag::kOtherEvent, OtherEvent{c, type_id}, 0);
}

void EventBatchWriter::PushCsdFunctionEntry(const CsdFunctionEntry& e, int type_id) {
  Put(EventTag::kCsdFunctionEntry, CsdFunctionEntryCall{e, type_id}, 0);
}

}  // namespace cstool
