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
  const EventBatch::Header h{tag, static_cast<uint32_t>(bytes)};
  std::memcpy(p, &h, sizeof h);
  T* copy = new (p + RoundUp(sizeof(EventBatch::Header))) T(e);
  return {copy, p + body};
}

std::string_view EventBatchWriter::CopyString(std::string_view s, std::byte** at) {
  if (s.empty()) return {};
  std::memcpy(*at, s.data(), s.size());
  std::string_view copy(reinterpret_cast<const char*>(*at), s.size());
  *at += s.size();
  return copy;
}

void EventBatchWriter::PushSchedSwitch(const SchedSwitch& e) {
  auto [copy, at] = Put(EventTag::kSchedSwitch, e, e.prev_comm.size() + e.next_comm.size());
  copy->prev_comm = CopyString(e.prev_comm, &at);
  copy->next_comm = CopyString(e.next_comm, &at);
}

void EventBatchWriter::PushSchedWakeup(const SchedWakeup& e) {
  auto [copy, at] = Put(EventTag::kSchedWakeup, e, e.comm.size());
  copy->comm = CopyString(e.comm, &at);
}

void EventBatchWriter::PushSchedMigrateTask(const SchedMigrateTask& e) {
  auto [copy, at] = Put(EventTag::kSchedMigrateTask, e, e.comm.size());
  copy->comm = CopyString(e.comm, &at);
}

void EventBatchWriter::PushSchedStatRuntime(const SchedStatRuntime& e) {
  auto [copy, at] = Put(EventTag::kSchedStatRuntime, e, e.comm.size());
  copy->comm = CopyString(e.comm, &at);
}

void EventBatchWriter::PushUnfilteredRuntime(const SchedStatRuntime& e) {
  auto [copy, at] = Put(EventTag::kUnfilteredRuntime, e, e.comm.size());
  copy->comm = CopyString(e.comm, &at);
}

void EventBatchWriter::PushUnfilteredLost(const LostEvents& e) {
  Put(EventTag::kUnfilteredLost, e, 0);
}

void EventBatchWriter::PushSchedProcessFork(const SchedProcessFork& e) {
  auto [copy, at] = Put(EventTag::kSchedProcessFork, e, e.parent_comm.size() + e.child_comm.size());
  copy->parent_comm = CopyString(e.parent_comm, &at);
  copy->child_comm = CopyString(e.child_comm, &at);
}

void EventBatchWriter::PushTaskNewtask(const TaskNewtask& e) {
  auto [copy, at] = Put(EventTag::kTaskNewtask, e, e.comm.size());
  copy->comm = CopyString(e.comm, &at);
}

void EventBatchWriter::PushTaskRename(const TaskRename& e) {
  auto [copy, at] = Put(EventTag::kTaskRename, e, e.oldcomm.size() + e.newcomm.size());
  copy->oldcomm = CopyString(e.oldcomm, &at);
  copy->newcomm = CopyString(e.newcomm, &at);
}

void EventBatchWriter::PushSchedProcessExec(const SchedProcessExec& e) {
  auto [copy, at] = Put(EventTag::kSchedProcessExec, e, e.filename.size());
  copy->filename = CopyString(e.filename, &at);
}

void EventBatchWriter::PushSchedProcessExit(const SchedProcessExit& e) {
  auto [copy, at] = Put(EventTag::kSchedProcessExit, e, e.comm.size());
  copy->comm = CopyString(e.comm, &at);
}

void EventBatchWriter::PushSchedProcessFree(const SchedProcessFree& e) {
  auto [copy, at] = Put(EventTag::kSchedProcessFree, e, e.comm.size());
  copy->comm = CopyString(e.comm, &at);
}

void EventBatchWriter::PushIrqHandlerEntry(const IrqHandlerEntry& e) {
  auto [copy, at] = Put(EventTag::kIrqHandlerEntry, e, e.name.size());
  copy->name = CopyString(e.name, &at);
}

void EventBatchWriter::PushIrqHandlerExit(const IrqHandlerExit& e) {
  Put(EventTag::kIrqHandlerExit, e, 0);
}

// The softirq and vector names are the decoder's (it outlives the batches), but are
// copied like any other: a batch depends on nothing but itself.
void EventBatchWriter::PushSoftirq(const Softirq& e) {
  auto [copy, at] = Put(EventTag::kSoftirq, e, e.name.size());
  copy->name = CopyString(e.name, &at);
}

void EventBatchWriter::PushIrqVector(const IrqVector& e) {
  auto [copy, at] = Put(EventTag::kIrqVector, e, e.name.size());
  copy->name = CopyString(e.name, &at);
}

void EventBatchWriter::PushNmiHandler(const NmiHandler& e) { Put(EventTag::kNmiHandler, e, 0); }

void EventBatchWriter::PushSysEnter(const SysEnter& e) { Put(EventTag::kSysEnter, e, 0); }

void EventBatchWriter::PushSysExit(const SysExit& e) { Put(EventTag::kSysExit, e, 0); }

void EventBatchWriter::PushPageFault(const PageFault& e) { Put(EventTag::kPageFault, e, 0); }

void EventBatchWriter::PushKernelStack(const KernelStack& e) {
  const size_t frame_bytes = e.frames == nullptr ? 0 : size_t{e.depth} * e.word_size;
  auto [copy, at] = Put(EventTag::kKernelStack, e, frame_bytes);
  if (frame_bytes != 0) {
    std::memcpy(at, e.frames, frame_bytes);
    copy->frames = reinterpret_cast<const uint8_t*>(at);
  }
}

void EventBatchWriter::PushLostEvents(const LostEvents& e) { Put(EventTag::kLostEvents, e, 0); }

void EventBatchWriter::PushOtherEvent(const EventCommon& c, int type_id) {
  Put(EventTag::kOtherEvent, OtherEvent{c, type_id}, 0);
}

}  // namespace cstool
