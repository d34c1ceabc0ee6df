// Decoded events kept for another thread: an EventBatch holds a run of EventSink calls
// (which Push, and its event) in call order, with every string and stack the event points
// at copied into the batch, so that the batch outlives the pages it was decoded from.
// EventBatchWriter is the EventSink that fills batches; ReplayEvents makes the same calls,
// in the same order, on another sink.
//
//   entry:  | tag (u32) | bytes (u32) | event struct (8-aligned) | strings, frames | pad |
//
// Entries are 8-byte aligned; `bytes` is the entry's whole size, so that replay steps over
// the copied strings. A batch never reallocates once it holds an entry: the copied
// strings' views point into its storage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <string_view>
#include <utility>

#include "model/events.h"

namespace cstool {

// Which EventSink call an entry replays.
enum class EventTag : uint32_t {
  kSchedSwitch,
  kSchedWakeup,
  kSchedMigrateTask,
  kSchedStatRuntime,
  kUnfilteredRuntime,
  kUnfilteredLost,
  kUnfilteredWakelistFlush,
  kUnfilteredMigrateTask,
  kSchedProcessFork,
  kTaskNewtask,
  kTaskRename,
  kSchedProcessExec,
  kSchedProcessExit,
  kSchedProcessFree,
  kIrqHandlerEntry,
  kIrqHandlerExit,
  kSoftirq,
  kIrqVector,
  kNmiHandler,
  kSysEnter,
  kSysExit,
  kPageFault,
  kKernelStack,
  kLostEvents,
  kOtherEvent,
  kCsdFunctionEntry,
  // No call: where a record that made none was (DecodeTraceInGroups merges by it).
  kNoCall,
  kNoCallUnfiltered,
};

// A kNoCall entry's body: the record's time and CPU, where every event has them.
struct RecordPlace {
  int64_t ts = 0;
  int32_t cpu = 0;
};

// PushOtherEvent's two arguments as one entry.
struct OtherEvent {
  EventCommon c;
  int type_id = 0;
};
// PushCsdFunctionEntry's.
struct CsdFunctionEntryCall {
  CsdFunctionEntry e;
  int type_id = 0;
};

class EventBatch {
 public:
  static constexpr size_t kAlign = 8;
  struct Header {
    EventTag tag;
    uint32_t bytes;
  };

  explicit EventBatch(size_t capacity = 0) { Reserve(capacity); }
  EventBatch(EventBatch&& o) noexcept
      : storage_(std::move(o.storage_)),
        capacity_(std::exchange(o.capacity_, 0)),
        used_(std::exchange(o.used_, 0)),
        read_on_cpu_(std::exchange(o.read_on_cpu_, -1)) {}
  EventBatch& operator=(EventBatch&& o) noexcept {
    storage_ = std::move(o.storage_);
    capacity_ = std::exchange(o.capacity_, 0);
    used_ = std::exchange(o.used_, 0);
    read_on_cpu_ = std::exchange(o.read_on_cpu_, -1);
    return *this;
  }

  // Makes room for `capacity` bytes; only while the batch is empty.
  void Reserve(size_t capacity);
  size_t capacity() const { return capacity_; }
  size_t size() const { return used_; }
  bool empty() const { return used_ == 0; }
  void clear() { used_ = 0; }

  // An entry of `bytes` (a multiple of kAlign) at the end, or null when it does not fit.
  std::byte* Append(size_t bytes) {
    if (capacity_ - used_ < bytes) return nullptr;
    std::byte* p = storage_.get() + used_;
    used_ += bytes;
    return p;
  }
  const std::byte* data() const { return storage_.get(); }

  // The CPU its reader handed it back from (-1: none yet): where its lines are cached.
  int read_on_cpu() const { return read_on_cpu_; }
  void set_read_on_cpu(int cpu) { read_on_cpu_ = cpu; }

 private:
  std::unique_ptr<std::byte[]> storage_;  // never moved while it holds entries
  size_t capacity_ = 0;
  size_t used_ = 0;
  int read_on_cpu_ = -1;
};

// Fills batches with the calls it receives. When the current batch has no room for the
// next entry, `full` gets it (and returns an empty batch to go on with, at least
// `batch_bytes` large); Flush hands over what is left.
class EventBatchWriter final : public EventSink {
 public:
  using Handoff = std::function<EventBatch(EventBatch&&)>;
  EventBatchWriter(size_t batch_bytes, Handoff full);

  // Hands the current batch over if it holds anything.
  void Flush();

  void PushSchedSwitch(const SchedSwitch& e) override;
  void PushSchedWakeup(const SchedWakeup& e) override;
  void PushSchedMigrateTask(const SchedMigrateTask& e) override;
  void PushSchedStatRuntime(const SchedStatRuntime& e) override;
  void PushUnfilteredRuntime(const SchedStatRuntime& e) override;
  void PushUnfilteredLost(const LostEvents& e) override;
  void PushUnfilteredWakelistFlush(const CsdFunctionEntry& e) override;
  void PushUnfilteredMigrateTask(const SchedMigrateTask& e) override;
  void PushSchedProcessFork(const SchedProcessFork& e) override;
  void PushTaskNewtask(const TaskNewtask& e) override;
  void PushTaskRename(const TaskRename& e) override;
  void PushSchedProcessExec(const SchedProcessExec& e) override;
  void PushSchedProcessExit(const SchedProcessExit& e) override;
  void PushSchedProcessFree(const SchedProcessFree& e) override;
  void PushIrqHandlerEntry(const IrqHandlerEntry& e) override;
  void PushIrqHandlerExit(const IrqHandlerExit& e) override;
  void PushSoftirq(const Softirq& e) override;
  void PushIrqVector(const IrqVector& e) override;
  void PushNmiHandler(const NmiHandler& e) override;
  void PushSysEnter(const SysEnter& e) override;
  void PushSysExit(const SysExit& e) override;
  void PushPageFault(const PageFault& e) override;
  void PushKernelStack(const KernelStack& e) override;
  void PushLostEvents(const LostEvents& e) override;
  void PushOtherEvent(const EventCommon& c, int type_id) override;
  void PushCsdFunctionEntry(const CsdFunctionEntry& e, int type_id) override;
  // A record that made no call (too short to decode, or not for the sink): kept as a
  // place in the order for a merge of batches (decode/decode_in_groups_inl.h).
  void PutNoCall(const RecordPlace& place, bool unfiltered);
  // Entries written so far (which tells whether a record made a call).
  uint64_t entries() const { return entries_; }

 private:
  // Copies `e` and the `extra` bytes its views point at into the batch; returns the copy
  // and where the extra bytes go.
  template <typename T>
  std::pair<T*, std::byte*> Put(EventTag tag, const T& e, size_t extra);
  // Put, with the strings `views` (members of T) copied behind the event.
  template <typename T, typename... Views>
  void PutCopying(EventTag tag, const T& e, Views... views);
  // Copies `s` to `*at`, advances `*at` and returns the view of the copy.
  static std::string_view CopyString(std::string_view s, std::byte** at);

  size_t batch_bytes_;
  Handoff full_;
  EventBatch batch_;
  uint64_t entries_ = 0;
};

// Makes on `sink` the call of the entry at `p`; returns the next entry. Inlined: the
// replay loops are the analysis thread's hot loop.
template <typename Sink>
[[gnu::always_inline]] inline const std::byte* ReplayEntry(const std::byte* p, Sink& sink) {
  EventBatch::Header h;
  std::memcpy(&h, p, sizeof h);
  const std::byte* body = p + sizeof(EventBatch::Header);
  switch (h.tag) {
#define CSTOOL_REPLAY(tag, type, call)                             \
  case EventTag::tag:                                              \
    sink.call(*std::launder(reinterpret_cast<const type*>(body))); \
    break;
    CSTOOL_REPLAY(kSchedSwitch, SchedSwitch, PushSchedSwitch)
    CSTOOL_REPLAY(kSchedWakeup, SchedWakeup, PushSchedWakeup)
    CSTOOL_REPLAY(kSchedMigrateTask, SchedMigrateTask, PushSchedMigrateTask)
    CSTOOL_REPLAY(kSchedStatRuntime, SchedStatRuntime, PushSchedStatRuntime)
    CSTOOL_REPLAY(kUnfilteredRuntime, SchedStatRuntime, PushUnfilteredRuntime)
    CSTOOL_REPLAY(kUnfilteredLost, LostEvents, PushUnfilteredLost)
    CSTOOL_REPLAY(kUnfilteredWakelistFlush, CsdFunctionEntry, PushUnfilteredWakelistFlush)
    CSTOOL_REPLAY(kUnfilteredMigrateTask, SchedMigrateTask, PushUnfilteredMigrateTask)
    CSTOOL_REPLAY(kSchedProcessFork, SchedProcessFork, PushSchedProcessFork)
    CSTOOL_REPLAY(kTaskNewtask, TaskNewtask, PushTaskNewtask)
    CSTOOL_REPLAY(kTaskRename, TaskRename, PushTaskRename)
    CSTOOL_REPLAY(kSchedProcessExec, SchedProcessExec, PushSchedProcessExec)
    CSTOOL_REPLAY(kSchedProcessExit, SchedProcessExit, PushSchedProcessExit)
    CSTOOL_REPLAY(kSchedProcessFree, SchedProcessFree, PushSchedProcessFree)
    CSTOOL_REPLAY(kIrqHandlerEntry, IrqHandlerEntry, PushIrqHandlerEntry)
    CSTOOL_REPLAY(kIrqHandlerExit, IrqHandlerExit, PushIrqHandlerExit)
    CSTOOL_REPLAY(kSoftirq, Softirq, PushSoftirq)
    CSTOOL_REPLAY(kIrqVector, IrqVector, PushIrqVector)
    CSTOOL_REPLAY(kNmiHandler, NmiHandler, PushNmiHandler)
    CSTOOL_REPLAY(kSysEnter, SysEnter, PushSysEnter)
    CSTOOL_REPLAY(kSysExit, SysExit, PushSysExit)
    CSTOOL_REPLAY(kPageFault, PageFault, PushPageFault)
    CSTOOL_REPLAY(kKernelStack, KernelStack, PushKernelStack)
    CSTOOL_REPLAY(kLostEvents, LostEvents, PushLostEvents)
#undef CSTOOL_REPLAY
    case EventTag::kOtherEvent: {
      const auto& o = *std::launder(reinterpret_cast<const OtherEvent*>(body));
      sink.PushOtherEvent(o.c, o.type_id);
      break;
    }
    case EventTag::kCsdFunctionEntry: {
      const auto& o = *std::launder(reinterpret_cast<const CsdFunctionEntryCall*>(body));
      sink.PushCsdFunctionEntry(o.e, o.type_id);
      break;
    }
    case EventTag::kNoCall:
    case EventTag::kNoCallUnfiltered:
      break;
  }
  return p + h.bytes;
}

// Calls on `sink` what the writer of `batch` received, in order.
template <typename Sink>
void ReplayEvents(const EventBatch& batch, Sink& sink) {
  const std::byte* p = batch.data();
  const std::byte* const end = p + batch.size();
  while (p != end) p = ReplayEntry(p, sink);
}

}  // namespace cstool
