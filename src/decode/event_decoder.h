// Raw ring-buffer record -> typed event (model/events.h) -> EventSink.
//
// All field layout work happens once, at construction: for every event type cstool
// knows (looked up by system:name, so event ids do not matter) the offsets, sizes and
// signedness of the needed fields are resolved from the tep_handle's formats, and a
// table indexed by type id says how to decode it. Per record the decoder reads
// common_type, checks the record is long enough for that layout, reads numbers at
// known offsets and calls the matching EventSink::Push*.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "format/trace_file_reader.h"
#include "model/events.h"
#include "model/task_state.h"

struct tep_handle;

namespace cstool {

// Offset/size/signedness of one integer field; absent fields read as 0.
struct FieldRef {
  uint16_t offset = 0;
  uint8_t size = 0;  // 0 = field absent
  bool is_signed = false;
};

// A string field: char[N] (fixed), __data_loc or __rel_loc char[].
struct StringRef {
  enum class Kind : uint8_t { kAbsent, kFixed, kDataLoc, kRelLoc };
  Kind kind = Kind::kAbsent;
  uint16_t offset = 0;
  uint16_t size = 0;
};

// What a type id decodes to.
enum class EventKind : uint8_t {
  kOther,
  kSchedSwitch,
  kSchedWaking,
  kSchedWakeup,
  kSchedWakeupNew,
  kSchedMigrateTask,
  kSchedStatRuntime,
  kSchedProcessFork,
  kTaskNewtask,
  kTaskRename,
  kSchedProcessExec,
  kSchedProcessExit,
  kSchedProcessFree,
  kIrqHandlerEntry,
  kIrqHandlerExit,
  kSoftirqRaise,
  kSoftirqEntry,
  kSoftirqExit,
  kIrqVectorEntry,
  kIrqVectorExit,
  kNmiHandler,
  kSysEnter,
  kSysExit,
  kPageFaultUser,
  kPageFaultKernel,
  kCsdFunctionEntry,
  kKernelStack,  // ftrace:kernel_stack; f[0] = size (frames), f[1] = caller[] (one word)
  kUndefined,    // an id no format of the file has (a damaged record, or format)
};

// Decoding recipe of one type id: which Push* and where its fields are. The meaning
// of the slots depends on the kind (see the spec table in event_decoder.cc).
struct DecoderEntry {
  EventKind kind = EventKind::kUndefined;
  uint16_t aux = 0;       // irq_vectors: index of the vector name
  uint32_t min_size = 0;  // the record must hold every field used
  FieldRef f[5];
  StringRef s[2];
};

struct DecoderCounters {
  uint64_t short_records = 0;     // record smaller than its format's fields
  uint64_t bad_strings = 0;       // __data_loc pointing outside the record
  uint64_t unknown_type_ids = 0;  // common_type with no format in the file
};

class EventDecoder {
 public:
  // Resolves every needed field of `tep`'s formats. `tep` must outlive the decoder.
  explicit EventDecoder(tep_handle* tep);
  ~EventDecoder();
  // Whether it reads the format of system:name (ReaderOptions::decodes_event): the
  // events it decodes, every irq_vectors event and ftrace:kernel_stack.
  static bool Decodes(std::string_view system, std::string_view name);
  EventDecoder(const EventDecoder&) = delete;
  EventDecoder& operator=(const EventDecoder&) = delete;

  // Decodes one data record (not a loss marker) into `sink`. Returns its common_type,
  // or -1 if the record was too short to hold one.
  int Decode(const RawRecord& rec, EventSink& sink);
  // The same with calls resolved at compile time for a final Sink class (one virtual
  // call less per event); defined in decode/event_decoder_inl.h.
  template <typename Sink>
  int DecodeTo(const RawRecord& rec, Sink& sink);

  // The common_type of a record, or -1 if it is too short.
  int TypeOf(const RawRecord& rec) const;
  // A sched_stat_runtime record of the task current where it was written (its own
  // context): from the unfiltered run-time buffer, a copy of what the pid-filtered trace
  // has for a followed task; for another, the sign of what ran between the switches the
  // trace leaves out.
  bool IsSelfAccountedRuntime(const RawRecord& rec) const;

  // "system:name" of a type id ("unknown:<id>" if the file has no such format).
  std::string EventName(int type_id) const;
  // Largest type id any format of the file uses.
  int max_type_id() const { return static_cast<int>(table_.size()) - 1; }
  // Whether the file has the format of an event of `kind`.
  bool Knows(EventKind kind) const {
    for (const DecoderEntry& e : table_)
      if (e.kind == kind) return true;
    return false;
  }
  EventKind KindOf(int type_id) const {
    return type_id >= 0 && static_cast<size_t>(type_id) < table_.size() ? table_[type_id].kind
                                                                        : EventKind::kUndefined;
  }

  // Events cstool decodes that the file has no format for (e.g. "raw_syscalls:sys_enter").
  // "irq_vectors:*" stands for the whole family.
  const std::vector<std::string>& missing_events() const { return missing_; }
  const TaskStateMap& task_states() const { return *task_states_; }
  const std::vector<std::string>& softirq_names() const { return softirq_names_; }
  const DecoderCounters& counters() const { return counters_; }
  // Adds what another decoder of the same file counted (a share of the CPUs decoded on
  // another thread).
  void AddCounters(const DecoderCounters& c) {
    counters_.short_records += c.short_records;
    counters_.bad_strings += c.bad_strings;
    counters_.unknown_type_ids += c.unknown_type_ids;
  }

 private:
  std::string_view ReadString(const uint8_t* data, uint32_t size, const StringRef& s);
  std::string_view SoftirqName(uint32_t vec) const {
    return vec < softirq_names_.size() ? std::string_view(softirq_names_[vec]) : std::string_view{};
  }

  tep_handle* tep_;
  bool swap_ = false;
  bool classic_common_ = false;  // common fields at 0/2/3/4, host byte order
  FieldRef common_type_, common_flags_, common_preempt_, common_pid_;
  uint32_t common_min_size_ = 0;
  std::vector<DecoderEntry> table_;
  uint32_t table_size_ = 0;                // table_.size()
  std::vector<std::string> vector_names_;  // irq_vectors names, indexed by Entry::aux
  std::vector<std::string> softirq_names_;
  std::vector<std::string> missing_;
  std::unique_ptr<TaskStateMap> task_states_;
  DecoderCounters counters_;
};

}  // namespace cstool
