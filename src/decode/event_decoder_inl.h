// The per-record decoding of EventDecoder, a template over the sink so that the
// report's state machine (a final class) gets direct, inlinable calls instead of one
// virtual call per event. Instantiated for EventSink in event_decoder.cc and for
// StateMachine in trace_replay.cc.
#pragma once

#include <bit>
#include <cstring>
#include <type_traits>

#include "decode/event_decoder.h"

namespace cstool {
namespace decoder_detail {

template <typename T>
inline T Load(const uint8_t* p, bool swap) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  if (swap) {
    if constexpr (sizeof(T) == 2) v = static_cast<T>(__builtin_bswap16(static_cast<uint16_t>(v)));
    if constexpr (sizeof(T) == 4) v = static_cast<T>(__builtin_bswap32(static_cast<uint32_t>(v)));
    if constexpr (sizeof(T) == 8) v = static_cast<T>(__builtin_bswap64(static_cast<uint64_t>(v)));
  }
  return v;
}

// Reads an integer field by its size and signedness (absent fields read as 0).
[[gnu::always_inline]] inline int64_t ReadInt(const uint8_t* d, const FieldRef& f, bool swap) {
  const uint8_t* p = d + f.offset;
  switch (f.size) {
    case 1:
      return f.is_signed ? int64_t{static_cast<int8_t>(*p)} : int64_t{*p};
    case 2:
      return f.is_signed ? int64_t{Load<int16_t>(p, swap)} : int64_t{Load<uint16_t>(p, swap)};
    case 4:
      return f.is_signed ? int64_t{Load<int32_t>(p, swap)} : int64_t{Load<uint32_t>(p, swap)};
    case 8:
      return Load<int64_t>(p, swap);
    default:
      return 0;
  }
}

// The Push call of each event type the decoder makes with Emit.
template <typename Sink, typename T>
void Push(Sink& sink, const T& e) {
  if constexpr (std::is_same_v<T, SchedSwitch>)
    sink.PushSchedSwitch(e);
  else if constexpr (std::is_same_v<T, SchedWakeup>)
    sink.PushSchedWakeup(e);
  else if constexpr (std::is_same_v<T, SchedStatRuntime>)
    sink.PushSchedStatRuntime(e);
  else if constexpr (std::is_same_v<T, SysEnter>)
    sink.PushSysEnter(e);
  else {
    static_assert(std::is_same_v<T, SysExit>, "an event type Emit does not know");
    sink.PushSysExit(e);
  }
}

// Makes an event with `build` and pushes it: in place where the sink offers that
// (EventBatchWriter::Begin, Commit), as a struct on the stack otherwise.
template <typename T, typename Sink, typename Build>
[[gnu::always_inline]] inline void Emit(Sink& sink, Build&& build) {
  if constexpr (requires { sink.template Begin<T>(); }) {
    T& e = sink.template Begin<T>();
    build(e);
    sink.Commit(e);
  } else {
    T e;
    build(e);
    Push(sink, e);
  }
}

// An event's common fields, from its record and its header's fields. Inlined at each use:
// GCC 12 at -O2 stopped inlining the lambda this once was when DecodeTo gained callers,
// and the common fields then went through memory (12 instructions per record).
[[gnu::always_inline]] inline void FillCommon(EventCommon& c, const RawRecord& rec, int32_t pid,
                                              uint8_t flags, uint8_t preempt_count) {
  c.ts = rec.ts;
  c.cpu = rec.cpu;
  c.pid = pid;
  c.flags = flags;
  c.preempt_count = preempt_count;
}

// A record made into no typed event: out of line, and given the common fields by value,
// so that nothing of the busy path has its address taken (a capturing lambda here kept
// the common fields and the closures on the stack, stored again at every record).
template <typename Sink>
[[gnu::noinline]] void PushOtherEvent(Sink& sink, const RawRecord& rec, int type, int32_t pid,
                                      uint8_t flags, uint8_t preempt_count) {
  EventCommon c;
  FillCommon(c, rec, pid, flags, preempt_count);
  sink.PushOtherEvent(c, type);
}

}  // namespace decoder_detail

[[gnu::always_inline]] inline std::string_view EventDecoder::ReadString(const uint8_t* data,
                                                                        uint32_t size,
                                                                        const StringRef& s) {
  uint32_t off = 0, len = 0;
  switch (s.kind) {
    case StringRef::Kind::kAbsent:
      return {};
    case StringRef::Kind::kFixed:
      off = s.offset;
      len = s.size;
      break;
    case StringRef::Kind::kDataLoc:
    case StringRef::Kind::kRelLoc: {
      const uint32_t loc = decoder_detail::Load<uint32_t>(data + s.offset, swap_);
      off = loc & 0xffff;
      len = loc >> 16;
      if (s.kind == StringRef::Kind::kRelLoc) off += uint32_t{s.offset} + s.size;
      if (off > size || len > size - off) {
        ++counters_.bad_strings;
        return {};
      }
      break;
    }
  }
  const char* p = reinterpret_cast<const char*>(data + off);
  size_t n = 0;
  if constexpr (std::endian::native == std::endian::little) {
    // Eight bytes at a time (comm fields are char[16]): the lowest byte flagged by the
    // zero-byte test is the first NUL; [off, off + len) lies inside the record.
    constexpr uint64_t kLow = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
    for (; n + 8 <= len; n += 8) {
      uint64_t w;
      std::memcpy(&w, p + n, 8);
      if (const uint64_t zero = (w - kLow) & ~w & kHigh)
        return {p, n + static_cast<size_t>(std::countr_zero(zero) / 8)};
    }
  }
  while (n < len && p[n] != '\0') ++n;  // short strings: a loop beats a memchr call
  return {p, n};
}

template <typename Sink>
int EventDecoder::DecodeTo(const RawRecord& rec, Sink& sink) {
  const uint8_t* d = rec.data;
  const uint32_t size = rec.size;
  if (size < common_min_size_) {
    ++counters_.short_records;
    return -1;
  }
  // The common fields stay in registers and are written straight into each event: an
  // EventCommon built on the stack and copied whole costs a failed store-to-load
  // forwarding (its fields are stored one by one, then loaded as one 16-byte vector).
  int type;
  int32_t pid;
  uint8_t flags, preempt_count;
  if (classic_common_) {  // the layout of every kernel since 4.x, host byte order
    uint16_t t;
    std::memcpy(&t, d, 2);
    type = t;
    flags = d[2];
    preempt_count = d[3];
    std::memcpy(&pid, d + 4, 4);
  } else {
    type = static_cast<int>(decoder_detail::ReadInt(d, common_type_, swap_));
    pid = static_cast<int32_t>(decoder_detail::ReadInt(d, common_pid_, swap_));
    flags = static_cast<uint8_t>(decoder_detail::ReadInt(d, common_flags_, swap_));
    preempt_count = static_cast<uint8_t>(decoder_detail::ReadInt(d, common_preempt_, swap_));
  }
  auto fill = [&](EventCommon & c) __attribute__((always_inline)) {
    decoder_detail::FillCommon(c, rec, pid, flags, preempt_count);
  };
  auto other = [&]() __attribute__((always_inline)) {
    decoder_detail::PushOtherEvent(sink, rec, type, pid, flags, preempt_count);
  };
  if (static_cast<uint32_t>(type) >= table_size_) {  // (a vector's size() divides by 40)
    ++counters_.unknown_type_ids;
    other();
    return type;
  }
  const DecoderEntry& e = table_[static_cast<size_t>(type)];
  if (size < e.min_size) {
    ++counters_.short_records;
    other();
    return type;
  }
  // The byte order read once: stores into the sink's bytes may alias any member, so a
  // member read at each field was loaded again after every store.
  const bool swap = swap_;
  // Inlined at each use: a field's slot is then a constant (GCC otherwise keeps the
  // string reader as one out-of-line call per field).
  auto I = [&](int slot) __attribute__((always_inline)) {
    return decoder_detail::ReadInt(d, e.f[slot], swap);
  };
  // The same as static_cast<int32_t>(I(slot)) and I(slot), for the busiest events: a field
  // of the destination's width in host order is loaded as it is (its signedness does not
  // matter at that width), without ReadInt's dispatch on size and sign.
  auto I32 = [&](int slot) __attribute__((always_inline)) {
    const FieldRef& f = e.f[slot];
    if (f.size == 4 && !swap) [[likely]]
      return decoder_detail::Load<int32_t>(d + f.offset, false);
    return static_cast<int32_t>(decoder_detail::ReadInt(d, f, swap));
  };
  auto I64 = [&](int slot) __attribute__((always_inline)) {
    const FieldRef& f = e.f[slot];
    if (f.size == 8 && !swap) [[likely]]
      return decoder_detail::Load<int64_t>(d + f.offset, false);
    return decoder_detail::ReadInt(d, f, swap);
  };
  auto S = [&](int slot) __attribute__((always_inline)) { return ReadString(d, size, e.s[slot]); };
  switch (e.kind) {
    case EventKind::kOther:
      other();
      break;
    case EventKind::kUndefined:
      ++counters_.unknown_type_ids;
      other();
      break;
    case EventKind::kSchedSwitch: {
      decoder_detail::Emit<SchedSwitch>(
          sink, [&](SchedSwitch & ev) __attribute__((always_inline)) {
            fill(ev.c);
            ev.prev_comm = S(0);
            ev.prev_pid = I32(0);
            ev.prev_prio = I32(1);
            const DecodedTaskState st = task_states_->Map(static_cast<uint64_t>(I64(2)));
            ev.prev_state = st.bits;
            ev.prev_preempted = st.preempted;
            ev.next_comm = S(1);
            ev.next_pid = I32(3);
            ev.next_prio = I32(4);
          });
      break;
    }
    case EventKind::kSchedWaking:
    case EventKind::kSchedWakeup:
    case EventKind::kSchedWakeupNew: {
      decoder_detail::Emit<SchedWakeup>(
          sink, [&](SchedWakeup & ev) __attribute__((always_inline)) {
            fill(ev.c);
            ev.kind = e.kind == EventKind::kSchedWaking   ? WakeupKind::kWaking
                      : e.kind == EventKind::kSchedWakeup ? WakeupKind::kWakeup
                                                          : WakeupKind::kWakeupNew;
            ev.comm = S(0);
            ev.pid = I32(0);
            ev.prio = I32(1);
            ev.target_cpu = e.f[2].size ? I32(2) : -1;
          });
      break;
    }
    case EventKind::kSchedMigrateTask: {
      SchedMigrateTask ev;
      fill(ev.c);
      ev.comm = S(0);
      ev.pid = static_cast<int32_t>(I(0));
      ev.orig_cpu = static_cast<int32_t>(I(1));
      ev.dest_cpu = static_cast<int32_t>(I(2));
      sink.PushSchedMigrateTask(ev);
      break;
    }
    case EventKind::kSchedStatRuntime: {
      decoder_detail::Emit<SchedStatRuntime>(
          sink, [&](SchedStatRuntime & ev) __attribute__((always_inline)) {
            fill(ev.c);
            ev.comm = S(0);
            ev.pid = I32(0);
            ev.runtime = static_cast<uint64_t>(I64(1));
          });
      break;
    }
    case EventKind::kSchedProcessFork: {
      SchedProcessFork ev;
      fill(ev.c);
      ev.parent_comm = S(0);
      ev.parent_pid = static_cast<int32_t>(I(0));
      ev.child_comm = S(1);
      ev.child_pid = static_cast<int32_t>(I(1));
      sink.PushSchedProcessFork(ev);
      break;
    }
    case EventKind::kTaskNewtask: {
      TaskNewtask ev;
      fill(ev.c);
      ev.pid = static_cast<int32_t>(I(0));
      ev.comm = S(0);
      ev.clone_flags = static_cast<uint64_t>(I(1));
      sink.PushTaskNewtask(ev);
      break;
    }
    case EventKind::kTaskRename: {
      TaskRename ev;
      fill(ev.c);
      ev.pid = e.f[0].size ? static_cast<int32_t>(I(0)) : pid;
      ev.oldcomm = S(0);
      ev.newcomm = S(1);
      sink.PushTaskRename(ev);
      break;
    }
    case EventKind::kSchedProcessExec: {
      SchedProcessExec ev;
      fill(ev.c);
      ev.filename = S(0);
      ev.pid = static_cast<int32_t>(I(0));
      ev.old_pid = e.f[1].size ? static_cast<int32_t>(I(1)) : ev.pid;
      sink.PushSchedProcessExec(ev);
      break;
    }
    case EventKind::kSchedProcessExit: {
      SchedProcessExit ev;
      fill(ev.c);
      ev.comm = S(0);
      ev.pid = static_cast<int32_t>(I(0));
      ev.group_dead = I(1) != 0;
      sink.PushSchedProcessExit(ev);
      break;
    }
    case EventKind::kSchedProcessFree: {
      SchedProcessFree ev;
      fill(ev.c);
      ev.comm = S(0);
      ev.pid = static_cast<int32_t>(I(0));
      sink.PushSchedProcessFree(ev);
      break;
    }
    case EventKind::kIrqHandlerEntry: {
      IrqHandlerEntry ev;
      fill(ev.c);
      ev.irq = static_cast<int32_t>(I(0));
      ev.name = S(0);
      sink.PushIrqHandlerEntry(ev);
      break;
    }
    case EventKind::kIrqHandlerExit: {
      IrqHandlerExit ev;
      fill(ev.c);
      ev.irq = static_cast<int32_t>(I(0));
      ev.ret = static_cast<int32_t>(I(1));
      sink.PushIrqHandlerExit(ev);
      break;
    }
    case EventKind::kSoftirqRaise:
    case EventKind::kSoftirqEntry:
    case EventKind::kSoftirqExit: {
      Softirq ev;
      fill(ev.c);
      ev.phase = e.kind == EventKind::kSoftirqRaise   ? SoftirqPhase::kRaise
                 : e.kind == EventKind::kSoftirqEntry ? SoftirqPhase::kEntry
                                                      : SoftirqPhase::kExit;
      ev.vec = static_cast<uint32_t>(I(0));
      ev.name = SoftirqName(ev.vec);
      sink.PushSoftirq(ev);
      break;
    }
    case EventKind::kIrqVectorEntry:
    case EventKind::kIrqVectorExit: {
      IrqVector ev;
      fill(ev.c);
      ev.entry = e.kind == EventKind::kIrqVectorEntry;
      ev.vector = static_cast<int32_t>(I(0));
      ev.name = vector_names_[e.aux];
      sink.PushIrqVector(ev);
      break;
    }
    case EventKind::kNmiHandler: {
      NmiHandler ev;
      fill(ev.c);
      ev.handler = static_cast<uint64_t>(I(0));
      ev.delta_ns = I(1);
      ev.handled = static_cast<int32_t>(I(2));
      sink.PushNmiHandler(ev);
      break;
    }
    case EventKind::kCsdFunctionEntry: {
      CsdFunctionEntry ev;
      fill(ev.c);
      ev.func = static_cast<uint64_t>(I(0));
      ev.csd = static_cast<uint64_t>(I(1));
      sink.PushCsdFunctionEntry(ev, type);
      break;
    }
    case EventKind::kSysEnter: {
      decoder_detail::Emit<SysEnter>(
          sink, [&](SysEnter & ev) __attribute__((always_inline)) {
            fill(ev.c);
            ev.id = I64(0);
          });
      break;
    }
    case EventKind::kSysExit: {
      decoder_detail::Emit<SysExit>(
          sink, [&](SysExit & ev) __attribute__((always_inline)) {
            fill(ev.c);
            ev.id = I64(0);
            ev.ret = I64(1);
          });
      break;
    }
    case EventKind::kPageFaultUser:
    case EventKind::kPageFaultKernel: {
      PageFault ev;
      fill(ev.c);
      ev.user = e.kind == EventKind::kPageFaultUser;
      ev.address = static_cast<uint64_t>(I(0));
      ev.ip = static_cast<uint64_t>(I(1));
      ev.error_code = static_cast<uint64_t>(I(2));
      sink.PushPageFault(ev);
      break;
    }
    case EventKind::kKernelStack: {
      KernelStack ev;
      fill(ev.c);
      ev.word_size = e.f[1].size;
      ev.swap = swap_;
      ev.frames = d + e.f[1].offset;
      const uint32_t room = (size - e.f[1].offset) / ev.word_size;
      const int64_t n = I(0);
      ev.depth = n > 0 && n < room ? static_cast<uint32_t>(n) : room;
      // Older kernels end a short chain with ULONG_MAX.
      while (ev.depth > 0 && ev.Frame(ev.depth - 1) == ~uint64_t{0} >> (64 - 8 * ev.word_size))
        --ev.depth;
      sink.PushKernelStack(ev);
      break;
    }
  }
  return type;
}

}  // namespace cstool
