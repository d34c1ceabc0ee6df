// Typed trace events: the decoder turns raw ring-buffer records into these small
// structs, and everything downstream (state machine, live msa, irq summary) consumes
// them through EventSink. Strings are views into the record and live only for the
// duration of the Push call.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace cstool {

// Bits of `common_flags` (kernel/trace/trace.h, TRACE_FLAG_*). They are not described
// by any format file; these values hold for x86_64 kernels since 6.13 and were checked
// on the 6.18 test machines by comparing raw flags with the `trace` file's latency column.
enum CommonFlags : uint8_t {
  kFlagIrqsOff = 0x01,
  kFlagNeedReschedLazy = 0x02,
  kFlagNeedResched = 0x04,
  kFlagHardirq = 0x08,
  kFlagSoftirq = 0x10,
  kFlagPreemptResched = 0x20,
  kFlagNmi = 0x40,
  kFlagBhOff = 0x80,
};

// sched_switch prev_state normalised to letters; the decoder maps the kernel's bits to
// these by reading the letters out of the event's print format, never by hard-coding.
enum TaskStateBits : uint16_t {
  kStateInterruptible = 1 << 0,    // S
  kStateUninterruptible = 1 << 1,  // D
  kStateStopped = 1 << 2,          // T
  kStateTraced = 1 << 3,           // t
  kStateDead = 1 << 4,             // X
  kStateZombie = 1 << 5,           // Z
  kStateParked = 1 << 6,           // P
  kStateIdle = 1 << 7,             // I
  kStateUnknownBits = 1 << 15,     // a bit the format did not name
};

struct EventCommon {
  int64_t ts = 0;  // ns, trace clock
  int32_t cpu = 0;
  int32_t pid = 0;    // common_pid: the task current on `cpu` (a tid)
  uint8_t flags = 0;  // raw common_flags, see CommonFlags
  uint8_t preempt_count = 0;
};

struct SchedSwitch {
  EventCommon c;
  std::string_view prev_comm;
  int32_t prev_pid = 0;
  int32_t prev_prio = 0;
  uint16_t prev_state = 0;      // TaskStateBits; 0 means runnable (R)
  bool prev_preempted = false;  // the "+" of R+: preempted in kernel mode
  std::string_view next_comm;
  int32_t next_pid = 0;
  int32_t next_prio = 0;
};

enum class WakeupKind : uint8_t { kWaking, kWakeup, kWakeupNew };

// sched_waking, sched_wakeup and sched_wakeup_new share one layout.
struct SchedWakeup {
  EventCommon c;
  WakeupKind kind = WakeupKind::kWaking;
  std::string_view comm;
  int32_t pid = 0;
  int32_t prio = 0;
  int32_t target_cpu = -1;
};

struct SchedMigrateTask {
  EventCommon c;
  std::string_view comm;
  int32_t pid = 0;
  int32_t orig_cpu = 0;
  int32_t dest_cpu = 0;
};

// The kernel's own run-time increment of a task (update_curr()): at the tick, at a
// wakeup's preemption check and when the task is switched out.
struct SchedStatRuntime {
  EventCommon c;
  std::string_view comm;
  int32_t pid = 0;
  uint64_t runtime = 0;  // ns
};

// The start of a cross-CPU function call on this CPU (csd:csd_function_entry). In the
// unfiltered run-time buffer cstool records it for sched_ttwu_pending alone: the CPU
// processing its wakelist, queueing the tasks other CPUs woke for it, which reads the
// runqueue clock right after (well under a microsecond here) while their sched_wakeup
// events may come much later.
struct CsdFunctionEntry {
  EventCommon c;
  uint64_t func = 0;
  uint64_t csd = 0;
};

struct SchedProcessFork {
  EventCommon c;
  std::string_view parent_comm;
  int32_t parent_pid = 0;
  std::string_view child_comm;
  int32_t child_pid = 0;
};

// task:task_newtask carries clone_flags, which tell a new thread from a new process.
struct TaskNewtask {
  EventCommon c;
  int32_t pid = 0;
  std::string_view comm;
  uint64_t clone_flags = 0;
};

struct TaskRename {
  EventCommon c;
  int32_t pid = 0;
  std::string_view oldcomm;
  std::string_view newcomm;
};

struct SchedProcessExec {
  EventCommon c;
  std::string_view filename;
  int32_t pid = 0;
  int32_t old_pid = 0;
};

struct SchedProcessExit {
  EventCommon c;
  std::string_view comm;
  int32_t pid = 0;
  bool group_dead = false;
};

struct SchedProcessFree {
  EventCommon c;
  std::string_view comm;
  int32_t pid = 0;
};

struct IrqHandlerEntry {
  EventCommon c;
  int32_t irq = 0;
  std::string_view name;
};

struct IrqHandlerExit {
  EventCommon c;
  int32_t irq = 0;
  int32_t ret = 0;
};

enum class SoftirqPhase : uint8_t { kRaise, kEntry, kExit };

struct Softirq {
  EventCommon c;
  SoftirqPhase phase = SoftirqPhase::kEntry;
  uint32_t vec = 0;
  std::string_view name;  // HI, TIMER, NET_RX... from the print format's symbol table
};

// irq_vectors:<name>_entry / <name>_exit (x86 system vectors: local_timer, reschedule...).
struct IrqVector {
  EventCommon c;
  bool entry = true;
  int32_t vector = 0;
  std::string_view name;  // "local_timer", "reschedule", ... (event name minus _entry/_exit)
};

// nmi:nmi_handler fires after a handler ran; the handler occupied [ts - delta_ns, ts].
struct NmiHandler {
  EventCommon c;
  uint64_t handler = 0;
  int64_t delta_ns = 0;
  int32_t handled = 0;
};

struct SysEnter {
  EventCommon c;
  int64_t id = 0;
};

struct SysExit {
  EventCommon c;
  int64_t id = 0;
  int64_t ret = 0;
};

struct PageFault {
  EventCommon c;
  bool user = true;  // exceptions:page_fault_user vs page_fault_kernel
  uint64_t address = 0;
  uint64_t ip = 0;
  uint64_t error_code = 0;
};

// ftrace's kernel_stack (TRACE_STACK) record: the kernel call chain a `stacktrace`
// event trigger saved, innermost frame first. On sched_switch it follows the switch on
// the same CPU, in the context of the task switched out (common_pid). `frames` points
// into the record: `depth` addresses of `word_size` bytes in the file's byte order.
struct KernelStack {
  EventCommon c;
  const uint8_t* frames = nullptr;
  uint32_t depth = 0;
  uint8_t word_size = 8;
  bool swap = false;

  uint64_t Frame(uint32_t i) const {
    const uint8_t* p = frames + size_t{i} * word_size;
    if (word_size == 4) {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return swap ? __builtin_bswap32(v) : v;
    }
    uint64_t v;
    std::memcpy(&v, p, 8);
    return swap ? __builtin_bswap64(v) : v;
  }
};

// Events were lost on `cpu` just before `ts` (the first event after the gap).
// count < 0 means the kernel said events were lost but not how many.
struct LostEvents {
  int64_t ts = 0;
  int32_t cpu = 0;
  int64_t count = -1;
};

// Consumer of decoded events, one handler per tracepoint (all no-ops by default).
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void PushSchedSwitch(const SchedSwitch&) {}
  virtual void PushSchedWakeup(const SchedWakeup&) {}
  virtual void PushSchedMigrateTask(const SchedMigrateTask&) {}
  virtual void PushSchedStatRuntime(const SchedStatRuntime&) {}
  // An increment from the unfiltered run-time buffer beside the trace
  // (tracefile::kUnfilteredRuntimeBuffer): every task's, in the contexts the trace leaves
  // out (all but the followed tasks'; with -a, the recorder's).
  virtual void PushUnfilteredRuntime(const SchedStatRuntime&) {}
  // That buffer lost events on `cpu`: increments done in other contexts may be missing.
  virtual void PushUnfilteredLost(const LostEvents&) {}
  // A wakelist flush from that buffer (CsdFunctionEntry).
  virtual void PushUnfilteredWakelistFlush(const CsdFunctionEntry&) {}
  // A move of a task between CPUs from that buffer: done in a context the trace leaves out
  // (the idle task's, another process's wakeup, the load balancer's).
  virtual void PushUnfilteredMigrateTask(const SchedMigrateTask&) {}
  virtual void PushSchedProcessFork(const SchedProcessFork&) {}
  virtual void PushTaskNewtask(const TaskNewtask&) {}
  virtual void PushTaskRename(const TaskRename&) {}
  virtual void PushSchedProcessExec(const SchedProcessExec&) {}
  virtual void PushSchedProcessExit(const SchedProcessExit&) {}
  virtual void PushSchedProcessFree(const SchedProcessFree&) {}
  virtual void PushIrqHandlerEntry(const IrqHandlerEntry&) {}
  virtual void PushIrqHandlerExit(const IrqHandlerExit&) {}
  virtual void PushSoftirq(const Softirq&) {}
  virtual void PushIrqVector(const IrqVector&) {}
  virtual void PushNmiHandler(const NmiHandler&) {}
  virtual void PushSysEnter(const SysEnter&) {}
  virtual void PushSysExit(const SysExit&) {}
  virtual void PushPageFault(const PageFault&) {}
  virtual void PushKernelStack(const KernelStack&) {}
  virtual void PushLostEvents(const LostEvents&) {}
  // Any record of an event type the decoder has no typed struct for (e.g. an extra -e).
  virtual void PushOtherEvent(const EventCommon&, int /*type_id*/) {}
  // In the trace itself (an event the user asked for) it is just another event.
  virtual void PushCsdFunctionEntry(const CsdFunctionEntry& e, int type_id) {
    PushOtherEvent(e.c, type_id);
  }
};

}  // namespace cstool
