#include "decode/event_decoder.h"

#include <fmt/format.h>
#include <traceevent/event-parse.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "base/errors.h"
#include "decode/event_decoder_inl.h"

namespace cstool {
namespace {

struct FieldSpec {
  const char* name = nullptr;
  bool required = false;
};

struct EventSpec {
  const char* system;
  const char* event;
  EventKind kind;
  FieldSpec ints[5];
  FieldSpec strs[2];
};

// Slot meaning per kind; Decode() below reads the same slots.
const EventSpec kSpecs[] = {
    {"sched",
     "sched_switch",
     EventKind::kSchedSwitch,
     {{"prev_pid", true}, {"prev_prio"}, {"prev_state", true}, {"next_pid", true}, {"next_prio"}},
     {{"prev_comm"}, {"next_comm"}}},
    {"sched",
     "sched_waking",
     EventKind::kSchedWaking,
     {{"pid", true}, {"prio"}, {"target_cpu"}},
     {{"comm"}}},
    {"sched",
     "sched_wakeup",
     EventKind::kSchedWakeup,
     {{"pid", true}, {"prio"}, {"target_cpu"}},
     {{"comm"}}},
    {"sched",
     "sched_wakeup_new",
     EventKind::kSchedWakeupNew,
     {{"pid", true}, {"prio"}, {"target_cpu"}},
     {{"comm"}}},
    {"sched",
     "sched_migrate_task",
     EventKind::kSchedMigrateTask,
     {{"pid", true}, {"orig_cpu"}, {"dest_cpu"}},
     {{"comm"}}},
    {"sched",
     "sched_stat_runtime",
     EventKind::kSchedStatRuntime,
     {{"pid", true}, {"runtime", true}},
     {{"comm"}}},
    {"sched",
     "sched_process_fork",
     EventKind::kSchedProcessFork,
     {{"parent_pid", true}, {"child_pid", true}},
     {{"parent_comm"}, {"child_comm"}}},
    {"task", "task_newtask", EventKind::kTaskNewtask, {{"pid", true}, {"clone_flags"}}, {{"comm"}}},
    {"task", "task_rename", EventKind::kTaskRename, {{"pid"}}, {{"oldcomm"}, {"newcomm"}}},
    {"sched",
     "sched_process_exec",
     EventKind::kSchedProcessExec,
     {{"pid", true}, {"old_pid"}},
     {{"filename"}}},
    {"sched",
     "sched_process_exit",
     EventKind::kSchedProcessExit,
     {{"pid", true}, {"group_dead"}},
     {{"comm"}}},
    {"sched", "sched_process_free", EventKind::kSchedProcessFree, {{"pid", true}}, {{"comm"}}},
    {"irq", "irq_handler_entry", EventKind::kIrqHandlerEntry, {{"irq", true}}, {{"name"}}},
    {"irq", "irq_handler_exit", EventKind::kIrqHandlerExit, {{"irq", true}, {"ret"}}, {}},
    {"irq", "softirq_raise", EventKind::kSoftirqRaise, {{"vec", true}}, {}},
    {"irq", "softirq_entry", EventKind::kSoftirqEntry, {{"vec", true}}, {}},
    {"irq", "softirq_exit", EventKind::kSoftirqExit, {{"vec", true}}, {}},
    {"nmi",
     "nmi_handler",
     EventKind::kNmiHandler,
     {{"handler"}, {"delta_ns", true}, {"handled"}},
     {}},
    {"csd", "csd_function_entry", EventKind::kCsdFunctionEntry, {{"func", true}, {"csd"}}, {}},
    {"raw_syscalls", "sys_enter", EventKind::kSysEnter, {{"id", true}}, {}},
    {"raw_syscalls", "sys_exit", EventKind::kSysExit, {{"id", true}, {"ret"}}, {}},
    {"exceptions",
     "page_fault_user",
     EventKind::kPageFaultUser,
     {{"address"}, {"ip"}, {"error_code"}},
     {}},
    {"exceptions",
     "page_fault_kernel",
     EventKind::kPageFaultKernel,
     {{"address"}, {"ip"}, {"error_code"}},
     {}},
};

// Events whose absence is normal and not worth reporting as missing.
// sched_stat_runtime: files recorded before cstool asked for it, or by other tools, are
// analysed without it (switch instants from the runqueue clock model alone).
bool Optional(const EventSpec& s) {
  return s.kind == EventKind::kSoftirqRaise || s.kind == EventKind::kSchedStatRuntime ||
         s.kind == EventKind::kCsdFunctionEntry;
}

bool ToFieldRef(const tep_format_field* f, FieldRef* out) {
  if (f == nullptr || f->offset < 0 || f->offset > 0xffff) return false;
  if (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8) return false;
  out->offset = static_cast<uint16_t>(f->offset);
  out->size = static_cast<uint8_t>(f->size);
  out->is_signed = (f->flags & TEP_FIELD_IS_SIGNED) != 0;
  return true;
}

bool ToStringRef(const tep_format_field* f, StringRef* out) {
  if (f == nullptr || f->offset < 0 || f->offset > 0xffff || f->size <= 0 || f->size > 0xffff)
    return false;
  out->offset = static_cast<uint16_t>(f->offset);
  out->size = static_cast<uint16_t>(f->size);
  if (f->flags & TEP_FIELD_IS_DYNAMIC) {
    if (f->size != 4) return false;
    out->kind =
        (f->flags & TEP_FIELD_IS_RELATIVE) ? StringRef::Kind::kRelLoc : StringRef::Kind::kDataLoc;
  } else {
    out->kind = StringRef::Kind::kFixed;
  }
  return true;
}

uint32_t EndOf(const FieldRef& f) { return f.size ? uint32_t{f.offset} + f.size : 0; }
uint32_t EndOf(const StringRef& s) {
  return s.kind == StringRef::Kind::kAbsent ? 0 : uint32_t{s.offset} + s.size;
}

}  // namespace

EventDecoder::EventDecoder(tep_handle* tep) : tep_(tep) {
  if (tep_ == nullptr) throw Error("event decoder: no event formats");
  swap_ = tep_is_file_bigendian(tep_) != tep_is_local_bigendian(tep_);

  // Common fields: identical in every format; take them from the first parsed event.
  const int nr_events = tep_get_events_count(tep_);
  int max_id = -1;
  const tep_event* any = nullptr;
  for (int i = 0; i < nr_events; ++i) {
    const tep_event* ev = tep_get_event(tep_, i);
    if (ev == nullptr) continue;
    max_id = std::max(max_id, ev->id);
    if (any == nullptr && tep_find_common_field(const_cast<tep_event*>(ev), "common_type"))
      any = ev;
  }
  if (any != nullptr) {
    auto* ev = const_cast<tep_event*>(any);
    ToFieldRef(tep_find_common_field(ev, "common_type"), &common_type_);
    ToFieldRef(tep_find_common_field(ev, "common_flags"), &common_flags_);
    ToFieldRef(tep_find_common_field(ev, "common_preempt_count"), &common_preempt_);
    ToFieldRef(tep_find_common_field(ev, "common_pid"), &common_pid_);
  }
  if (common_type_.size == 0) {  // no formats at all: the classic layout
    common_type_ = {0, 2, false};
    common_flags_ = {2, 1, false};
    common_preempt_ = {3, 1, false};
    common_pid_ = {4, 4, true};
  }
  auto is = [](const FieldRef& f, uint16_t off, uint8_t size) {
    return f.offset == off && f.size == size;
  };
  classic_common_ = !swap_ && is(common_type_, 0, 2) && is(common_flags_, 2, 1) &&
                    is(common_preempt_, 3, 1) && is(common_pid_, 4, 4);
  common_min_size_ = std::max(
      {EndOf(common_type_), EndOf(common_flags_), EndOf(common_preempt_), EndOf(common_pid_)});
  if (max_id > 0xffff) max_id = 0xffff;
  table_.assign(static_cast<size_t>(max_id) + 1, DecoderEntry{});
  table_size_ = static_cast<uint32_t>(table_.size());
  // Every id a format defines is at least an event decoded as "other".
  for (int i = 0; i < nr_events; ++i) {
    const tep_event* ev = tep_get_event(tep_, i);
    if (ev != nullptr && ev->id >= 0 && static_cast<size_t>(ev->id) < table_.size())
      table_[static_cast<size_t>(ev->id)].kind = EventKind::kOther;
  }

  auto install = [&](tep_event* ev, const EventSpec& spec, DecoderEntry entry) -> bool {
    for (int i = 0; i < 5; ++i) {
      if (spec.ints[i].name == nullptr) continue;
      const tep_format_field* f = tep_find_field(ev, spec.ints[i].name);
      if (!ToFieldRef(f, &entry.f[i]) && spec.ints[i].required) {
        missing_.push_back(
            fmt::format("{}:{} (field {})", spec.system, spec.event, spec.ints[i].name));
        return false;
      }
    }
    for (int i = 0; i < 2; ++i) {
      if (spec.strs[i].name == nullptr) continue;
      ToStringRef(tep_find_field(ev, spec.strs[i].name), &entry.s[i]);
    }
    uint32_t end = common_min_size_;
    for (const auto& f : entry.f) end = std::max(end, EndOf(f));
    for (const auto& s : entry.s) end = std::max(end, EndOf(s));
    entry.min_size = end;
    entry.kind = spec.kind;
    if (ev->id >= 0 && static_cast<size_t>(ev->id) < table_.size()) table_[ev->id] = entry;
    return true;
  };

  for (const EventSpec& spec : kSpecs) {
    tep_event* ev = tep_find_event_by_name(tep_, spec.system, spec.event);
    if (ev == nullptr) {
      if (!Optional(spec)) missing_.push_back(fmt::format("{}:{}", spec.system, spec.event));
      continue;
    }
    install(ev, spec, DecoderEntry{});
  }

  // irq_vectors:<name>_entry / _exit, whatever names this kernel has.
  bool any_vector = false;
  for (int i = 0; i < nr_events; ++i) {
    tep_event* ev = tep_get_event(tep_, i);
    if (ev == nullptr || ev->system == nullptr || ev->name == nullptr) continue;
    if (std::string_view(ev->system) != "irq_vectors") continue;
    std::string_view name(ev->name);
    EventKind kind;
    if (name.ends_with("_entry")) {
      kind = EventKind::kIrqVectorEntry;
      name.remove_suffix(6);
    } else if (name.ends_with("_exit")) {
      kind = EventKind::kIrqVectorExit;
      name.remove_suffix(5);
    } else {
      continue;
    }
    DecoderEntry entry;
    if (!ToFieldRef(tep_find_field(ev, "vector"), &entry.f[0])) continue;
    auto it = std::find(vector_names_.begin(), vector_names_.end(), name);
    entry.aux = static_cast<uint16_t>(it - vector_names_.begin());
    if (it == vector_names_.end()) vector_names_.emplace_back(name);
    entry.kind = kind;
    entry.min_size = std::max(common_min_size_, EndOf(entry.f[0]));
    if (ev->id >= 0 && static_cast<size_t>(ev->id) < table_.size()) table_[ev->id] = entry;
    any_vector = true;
  }
  if (!any_vector) missing_.push_back("irq_vectors:*");

  // ftrace:kernel_stack (record --stacks): caller[] is declared with 8 entries, but the
  // record holds as many as `size` says (the rest of the record).
  if (tep_event* ev = tep_find_event_by_name(tep_, "ftrace", "kernel_stack")) {
    DecoderEntry entry;
    const tep_format_field* caller = tep_find_field(ev, "caller");
    const int word = tep_get_long_size(tep_);
    if (ToFieldRef(tep_find_field(ev, "size"), &entry.f[0]) && caller != nullptr &&
        caller->offset > 0 && caller->offset <= 0xffff && (word == 4 || word == 8)) {
      entry.f[1] = {static_cast<uint16_t>(caller->offset), static_cast<uint8_t>(word), false};
      entry.kind = EventKind::kKernelStack;
      entry.min_size = std::max(common_min_size_, uint32_t{entry.f[1].offset});
      if (ev->id >= 0 && static_cast<size_t>(ev->id) < table_.size()) table_[ev->id] = entry;
    }
  }

  task_states_ =
      std::make_unique<TaskStateMap>(tep_find_event_by_name(tep_, "sched", "sched_switch"));
  tep_event* softirq = tep_find_event_by_name(tep_, "irq", "softirq_entry");
  for (const auto& [vec, name] : PrintSymbols(softirq, "vec")) {
    if (vec > 255) continue;
    if (softirq_names_.size() <= vec) softirq_names_.resize(vec + 1);
    softirq_names_[vec] = name;
  }
}

EventDecoder::~EventDecoder() = default;

bool EventDecoder::Decodes(std::string_view system, std::string_view name) {
  if (system == "irq_vectors" || (system == "ftrace" && name == "kernel_stack")) return true;
  return std::any_of(std::begin(kSpecs), std::end(kSpecs), [&](const EventSpec& spec) {
    return system == spec.system && name == spec.event;
  });
}

std::string EventDecoder::EventName(int type_id) const {
  tep_event* ev = type_id >= 0 ? tep_find_event(tep_, type_id) : nullptr;
  if (ev == nullptr || ev->system == nullptr || ev->name == nullptr)
    return fmt::format("unknown:{}", type_id);
  return fmt::format("{}:{}", ev->system, ev->name);
}

int EventDecoder::TypeOf(const RawRecord& rec) const {
  if (rec.size < common_min_size_) return -1;
  return static_cast<int>(decoder_detail::ReadInt(rec.data, common_type_, swap_));
}

bool EventDecoder::IsSelfAccountedRuntime(const RawRecord& rec) const {
  const int type = TypeOf(rec);
  if (type < 0 || static_cast<size_t>(type) >= table_.size()) return false;
  const DecoderEntry& e = table_[static_cast<size_t>(type)];
  if (e.kind != EventKind::kSchedStatRuntime || rec.size < e.min_size) return false;
  return decoder_detail::ReadInt(rec.data, common_pid_, swap_) ==
         decoder_detail::ReadInt(rec.data, e.f[0], swap_);
}

int EventDecoder::Decode(const RawRecord& rec, EventSink& sink) { return DecodeTo(rec, sink); }

}  // namespace cstool
