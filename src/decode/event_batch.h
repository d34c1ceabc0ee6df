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
#include <tuple>
#include <type_traits>
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
  // A batch's storage starts at a cache line (the writer streams it a line at a time).
  static constexpr size_t kLineBytes = 64;
  // `n` rounded up to a multiple of kAlign.
  static constexpr size_t Aligned(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
  struct Header {
    EventTag tag;
    uint32_t bytes;
  };

  explicit EventBatch(size_t capacity = 0) { Reserve(capacity); }
  EventBatch(EventBatch&& o) noexcept
      : storage_(std::move(o.storage_)),
        base_(std::exchange(o.base_, nullptr)),
        capacity_(std::exchange(o.capacity_, 0)),
        used_(std::exchange(o.used_, 0)) {}
  EventBatch& operator=(EventBatch&& o) noexcept {
    storage_ = std::move(o.storage_);
    base_ = std::exchange(o.base_, nullptr);
    capacity_ = std::exchange(o.capacity_, 0);
    used_ = std::exchange(o.used_, 0);
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
    std::byte* p = base_ + used_;
    used_ += bytes;
    return p;
  }
  const std::byte* data() const { return base_; }
  // Where the next entry goes.
  const std::byte* end() const { return base_ + used_; }

 private:
  std::unique_ptr<std::byte[]> storage_;  // never moved while it holds entries
  std::byte* base_ = nullptr;             // storage_, from a cache line's start
  size_t capacity_ = 0;
  size_t used_ = 0;
};

// How an event's entry is laid out: the string members it copies behind the event (views
// into the page it was decoded from), and, for the events the decoder makes in place
// (EventBatchWriter::Begin), the tag of their Push call.
template <typename T>
struct EntryLayout {
  static constexpr std::tuple<> kStrings{};
};
template <>
struct EntryLayout<SchedSwitch> {
  static constexpr std::tuple kStrings{&SchedSwitch::prev_comm, &SchedSwitch::next_comm};
  static constexpr EventTag kInPlaceTag = EventTag::kSchedSwitch;
};
template <>
struct EntryLayout<SchedWakeup> {
  static constexpr std::tuple kStrings{&SchedWakeup::comm};
  static constexpr EventTag kInPlaceTag = EventTag::kSchedWakeup;
};
template <>
struct EntryLayout<SchedMigrateTask> {
  static constexpr std::tuple kStrings{&SchedMigrateTask::comm};
};
template <>
struct EntryLayout<SchedStatRuntime> {
  static constexpr std::tuple kStrings{&SchedStatRuntime::comm};
  static constexpr EventTag kInPlaceTag = EventTag::kSchedStatRuntime;
};
template <>
struct EntryLayout<SchedProcessFork> {
  static constexpr std::tuple kStrings{&SchedProcessFork::parent_comm,
                                       &SchedProcessFork::child_comm};
};
template <>
struct EntryLayout<TaskNewtask> {
  static constexpr std::tuple kStrings{&TaskNewtask::comm};
};
template <>
struct EntryLayout<TaskRename> {
  static constexpr std::tuple kStrings{&TaskRename::oldcomm, &TaskRename::newcomm};
};
template <>
struct EntryLayout<SchedProcessExec> {
  static constexpr std::tuple kStrings{&SchedProcessExec::filename};
};
template <>
struct EntryLayout<SchedProcessExit> {
  static constexpr std::tuple kStrings{&SchedProcessExit::comm};
};
template <>
struct EntryLayout<SchedProcessFree> {
  static constexpr std::tuple kStrings{&SchedProcessFree::comm};
};
template <>
struct EntryLayout<IrqHandlerEntry> {
  static constexpr std::tuple kStrings{&IrqHandlerEntry::name};
};
// The softirq and vector names are the decoder's (it outlives the batches), but are
// copied like any other: a batch depends on nothing but itself.
template <>
struct EntryLayout<Softirq> {
  static constexpr std::tuple kStrings{&Softirq::name};
};
template <>
struct EntryLayout<IrqVector> {
  static constexpr std::tuple kStrings{&IrqVector::name};
};
template <>
struct EntryLayout<SysEnter> {
  static constexpr std::tuple<> kStrings{};
  static constexpr EventTag kInPlaceTag = EventTag::kSysEnter;
};
template <>
struct EntryLayout<SysExit> {
  static constexpr std::tuple<> kStrings{};
  static constexpr EventTag kInPlaceTag = EventTag::kSysExit;
};

// Fills batches with the calls it receives. When the current batch has no room for the
// next entry, `full` gets it (and returns an empty batch to go on with, at least
// `batch_bytes` large); Flush hands over what is left.
//
// Entries are made in a staging area in this thread's caches and streamed into the batch
// a cache line at a time with stores that bypass the caches: a batch's lines, last read
// on the consumer's core, are then neither fetched to be written (each store waiting for
// that core to give its line up) nor left in this core's caches for the consumer to fetch
// from. Measured on an AMD EPYC VM (4.3 M-event ping-pong, `report -j 2`, PGO builds,
// alternated medians): 114.7 against 106.2 ms, where the batches had been evicted from
// every cache before each refill instead.
//
//   record -> decoder -> Begin/Commit (or Push) -> | stage | --streamed--> | batch | -> queue
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

  // The decoder's way to the busiest events (EventDecoder::DecodeTo): Begin makes a
  // value-initialised T where its entry goes, the caller fills it (its views may point
  // anywhere) and Commit copies the strings behind it, as the event's Push call would.
  // Made in place, the event is not copied: a copy of a struct just written field by field
  // reads it in wider loads, which wait for those stores to reach the cache (the -j 2
  // decoding stage alone, 4.3 M-event ping-pong: 8 % less time). One entry at a time.
  template <typename T>
  T& Begin();
  template <typename T>
  void Commit(T& e);

  // Entries written so far (which tells whether a record made a call).
  uint64_t entries() const { return entries_; }

 private:
  static constexpr size_t kHeaderBytes = sizeof(EventBatch::Header);
  static_assert(kHeaderBytes == EventBatch::kAlign);
  template <typename T>
  static constexpr size_t kBodyBytes = kHeaderBytes + EventBatch::Aligned(sizeof(T));
  // The staging area: four pages; an entry larger than half of it (only from a record of
  // a page of 8 KiB or more) goes straight to the batch. Begin leaves kStringRoom behind
  // the event for Commit's strings (longer ones go the slow way: a copy, then PutEntry).
  static constexpr size_t kStageBytes = 16 * 1024;
  static constexpr size_t kStringRoom = 256;
  static constexpr size_t kLineBytes = EventBatch::kLineBytes;

  // Where an entry is made, and where it will be in the batch (the same, or, for one made
  // in the stage, where it will be streamed to).
  struct Placed {
    std::byte* entry;
    const std::byte* final;
  };
  // Where the staged byte at `staged` will be: staged bytes go to the batch's end in order.
  const std::byte* FinalOf(const std::byte* staged) const {
    return batch_.end() + (staged - stage_);
  }
  // The batch's room beyond what is staged.
  size_t Room() const { return batch_.capacity() - batch_.size() - staged_; }
  // Room for an entry of `bytes`: hands the batch over when it has too little, and makes
  // the next one large enough.
  void MakeRoom(size_t bytes) {
    if (Room() < bytes) [[unlikely]] {
      Flush();
      batch_.Reserve(bytes);  // an event larger than a batch gets a batch of its own size
    }
  }
  // Counts the entry at `entry` and writes its header.
  std::byte* Headed(std::byte* entry, EventTag tag, size_t bytes) {
    ++entries_;
    const EventBatch::Header h{tag, static_cast<uint32_t>(bytes)};
    std::memcpy(entry, &h, sizeof h);
    return entry;
  }
  // An entry of `bytes` headed by `tag` in the stage, with `slack` bytes free behind it;
  // MakeRoom first.
  [[gnu::always_inline]] std::byte* StageEntry(EventTag tag, size_t bytes, size_t slack) {
    if (staged_ + bytes + slack > kStageBytes) [[unlikely]]
      Stream(false);
    std::byte* entry = stage_ + staged_;
    staged_ += bytes;
    return Headed(entry, tag, bytes);
  }
  // Room for an entry of `bytes`, headed by `tag`, in the stage (or the batch, when it is
  // too large for the stage).
  Placed Place(EventTag tag, size_t bytes);
  // Copies `e` and the strings its EntryLayout names behind it into an entry of `tag`.
  template <typename T>
  void PutEntry(EventTag tag, const T& e);
  // Copies `s` to `*at`, returns the view of the copy where it will be (`*final`), and
  // advances both. Inlined, with a task name's (up to 16 bytes) copied in two overlapping
  // words: a call per string and libc's memcpy for 15 bytes were a tenth of the decoding
  // thread's instructions.
  [[gnu::always_inline]] static std::string_view CopyString(std::string_view s, std::byte** at,
                                                            const std::byte** final) {
    const size_t n = s.size();
    if (n == 0) return {};
    std::byte* to = *at;
    const char* from = s.data();
    if (n >= 8 && n <= 16) {
      uint64_t head, tail;
      std::memcpy(&head, from, 8);
      std::memcpy(&tail, from + n - 8, 8);
      std::memcpy(to, &head, 8);
      std::memcpy(to + n - 8, &tail, 8);
    } else {
      std::memcpy(to, from, n);
    }
    std::string_view copy(reinterpret_cast<const char*>(*final), n);
    *at += n;
    *final += n;
    return copy;
  }
  // The bytes of the strings of `e` that its entry copies.
  template <typename T>
  static size_t StringBytes(const T& e);
  // Copies the strings of `e` to `at` and points its views at where they will be (`final`).
  template <typename T>
  static void CopyStrings(T& e, std::byte* at, const std::byte* final);
  // The next `bytes` of the batch, which the caller made room for.
  std::byte* Claim(size_t bytes);
  // Streams the staged bytes to the batch: the whole lines, or all of them with `all`.
  void Stream(bool all);

  size_t batch_bytes_;
  Handoff full_;
  EventBatch batch_;
  uint64_t entries_ = 0;
  // Staged bytes, which go to the batch's end, the first of them to a line's start.
  size_t staged_ = 0;
  alignas(kLineBytes) std::byte stage_[kStageBytes];
};

template <typename T>
size_t EventBatchWriter::StringBytes(const T& e) {
  return std::apply([&](auto... views) { return (size_t{0} + ... + (e.*views).size()); },
                    EntryLayout<T>::kStrings);
}

template <typename T>
void EventBatchWriter::CopyStrings(T& e, std::byte* at, const std::byte* final) {
  std::apply([&](auto... views) { ((e.*views = CopyString(e.*views, &at, &final)), ...); },
             EntryLayout<T>::kStrings);
}

template <typename T>
[[gnu::always_inline]] inline T& EventBatchWriter::Begin() {
  constexpr size_t body = kBodyBytes<T>;
  static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= EventBatch::kAlign &&
                body + kStringRoom <= kStageBytes);
  MakeRoom(body);
  std::byte* entry = StageEntry(EntryLayout<T>::kInPlaceTag, body, kStringRoom);
  return *new (entry + kHeaderBytes) T();
}

template <typename T>
[[gnu::always_inline]] inline void EventBatchWriter::Commit(T& e) {
  if constexpr (std::tuple_size_v<decltype(EntryLayout<T>::kStrings)> != 0) {
    constexpr size_t body = kBodyBytes<T>;
    std::byte* const p = reinterpret_cast<std::byte*>(&e) - kHeaderBytes;
    const size_t extra = EventBatch::Aligned(StringBytes(e));
    if (extra == 0) return;
    if (extra > kStringRoom || Room() < extra) [[unlikely]] {
      const T copy = e;  // (its views still point where the decoder found the strings)
      staged_ -= body;
      --entries_;
      PutEntry(EntryLayout<T>::kInPlaceTag, copy);
      return;
    }
    CopyStrings(e, p + body, FinalOf(p) + body);
    const auto bytes = static_cast<uint32_t>(body + extra);
    std::memcpy(p + offsetof(EventBatch::Header, bytes), &bytes, sizeof bytes);
    staged_ += extra;
  }
}

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
