// Taskstats exit notifications: the kernel's final counters of every thread that exits
// (nvcsw, nivcsw, exec runtime, run delay, I/O delays), delivered over generic netlink
// (family "TASKSTATS") to sockets registered for a cpumask. See the kernel's
// Documentation/accounting/taskstats.rst.
//
// Protocol, as used here:
//   1. resolve the family id of "TASKSTATS" (genl_ctrl_resolve);
//   2. TASKSTATS_CMD_GET with TASKSTATS_CMD_ATTR_REGISTER_CPUMASK "<cpulist>" (root only)
//      registers the sending socket's port for exits of tasks on those CPUs;
//   3. every exiting task then sends a TASKSTATS_CMD_NEW message holding
//      TASKSTATS_TYPE_AGGR_PID { TASKSTATS_TYPE_PID u32, TASKSTATS_TYPE_STATS struct }
//      and, when the last thread of a multi-threaded process exits, also
//      TASKSTATS_TYPE_AGGR_TGID { TASKSTATS_TYPE_TGID u32, TASKSTATS_TYPE_STATS struct }
//      (the process-wide sums: delay accounting only, its nvcsw/nivcsw are 0 at exit);
//   4. TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK from the same socket undoes step 2.
// Notifications come for every task on the system; the listener filters in user space.
//
// The exit values are taken in do_exit() (taskstats_exit()) before the thread's final
// context switch, so they do not count that switch: a trace that sees the final
// switch_out has one more voluntary switch per exited thread than taskstats. Measured on
// the reference machine (tests/integration/taskstats_test.cc): a thread's exit nvcsw
// equals its own last /proc/thread-self/status reading taken just before it returned
// from its thread function, exactly, in every one of 900+ runs, also under CPU load.
//
// Threads that already exited before the listener registered are not reported; nor are
// exits on CPUs outside the registered list (CPUs hotplugged later).
//
// Usage (recorder):
//   TaskstatsListener ts({.pids = {child_pid}});
//   if (!ts.available()) warn_once(ts.status());
//   ... ts.AddPid(pid) as processes are discovered ...
//   ts.Stop();                         // after the workload is reaped
//   KernelCounterSet set; ts.ExportTo(&set);
//   info.kernel_counters = set.ToJson();
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "kernel/kernel_counters.h"

struct nl_sock;

namespace cstool {

// ---- Pure parsing --------------------------------------------------------------------

struct NetlinkAck {
  uint32_t seq = 0;
  int32_t error = 0;  // 0 = success, else a negative errno
};

struct TaskstatsParseResult {
  std::vector<KernelTaskCounters> tasks;  // one per TASKSTATS_TYPE_AGGR_PID
  uint32_t tgid_aggregates = 0;           // TASKSTATS_TYPE_AGGR_TGID seen (not decoded)
  std::vector<NetlinkAck> acks;           // NLMSG_ERROR messages (replies to our commands)
  std::vector<std::string> errors;        // malformed parts that were skipped
  uint32_t messages = 0;                  // netlink messages in the datagram
};

// Decodes one datagram as received from a taskstats netlink socket: zero or more netlink
// messages. Never reads outside `datagram`, never throws; what it cannot decode is
// skipped and described in `errors`. Each task gets source kTaskstatsExit and
// taken_at_ns. expected_family (the resolved family id), when nonzero, makes messages of
// any other type an error.
TaskstatsParseResult ParseTaskstatsMessage(std::span<const uint8_t> datagram,
                                           int64_t taken_at_ns = 0, int expected_family = 0);

// Decodes a TASKSTATS_TYPE_STATS payload (struct taskstats of any version but the
// broken v15 layout). Only the bytes present are read: fields beyond the payload
// length stay unset (tgid 0). Returns false with *error when the payload is too short
// for nvcsw/nivcsw or has an unusable version.
bool DecodeTaskstatsStruct(std::span<const uint8_t> payload, KernelTaskCounters* out,
                           std::string* error);

// Contents of /sys/devices/system/cpu/online ("0-1"), trimmed; falls back to
// "0-<configured CPUs - 1>" when unreadable.
std::string OnlineCpuList(const std::string& path = "/sys/devices/system/cpu/online");

// ---- The listener --------------------------------------------------------------------

struct TaskstatsListenerOptions {
  // Keep every exit on the system (system-wide recording).
  bool accept_all = false;
  // Initial filter: keep exits whose tgid or tid is in this set. AddPid() grows it.
  std::vector<int32_t> pids;
  // Also keep exits whose parent process (ppid) is in the set, and add their tgid to the
  // set: catches descendants that fork and exit before the recorder calls AddPid(), and
  // (held until their parent's exit arrives) their own descendants that exit first.
  bool follow_children = true;
  // Optional extra test, called on the receiving thread with the listener's lock held
  // (it must not call back into the listener): keep when it returns true (in addition
  // to the set above).
  std::function<bool(const KernelTaskCounters&)> predicate;
  // Requested SO_RCVBUF (SO_RCVBUFFORCE as root, else capped by net.core.rmem_max).
  int receive_buffer_bytes = 32 << 20;
  // CPU list to register; empty = OnlineCpuList().
  std::string cpu_list;
  // Called with every raw datagram received, before parsing (capturing test fixtures).
  std::function<void(std::span<const uint8_t>)> raw_datagram_hook;
};

struct TaskstatsListenerStats {
  uint64_t datagrams = 0;
  uint64_t task_records = 0;  // per-thread exit records decoded
  uint64_t kept = 0;          // ... that passed the filter
  uint64_t filtered_out = 0;
  uint64_t tgid_aggregates = 0;  // process-wide aggregates seen (ignored)
  uint64_t parse_errors = 0;
  uint64_t enobufs = 0;    // recv() said ENOBUFS: the socket overflowed, exits were lost
  uint64_t truncated = 0;  // datagrams larger than our buffer (dropped)
  uint64_t recv_errors = 0;
  int receive_buffer_bytes = 0;  // SO_RCVBUF actually granted
};

class TaskstatsListener {
 public:
  // Connects, registers and starts the receiving thread. Never throws for kernel-side
  // problems: check available() and report status() once.
  explicit TaskstatsListener(TaskstatsListenerOptions options = {});
  ~TaskstatsListener();  // Stop()
  TaskstatsListener(const TaskstatsListener&) = delete;
  TaskstatsListener& operator=(const TaskstatsListener&) = delete;

  bool available() const { return available_; }
  // The thread that receives the exit records (0: none runs). A dying thread wakes it
  // right after the kernel took its record, so the trace shows where that was.
  int32_t receiver_tid() const { return receiver_tid_; }
  // "available (family N, cpus 0-1)" or "unavailable: <reason>".
  const std::string& status() const { return status_; }

  // Thread-safe: keep exits of this process (tgid) or thread (tid) from now on.
  void AddPid(int32_t pid);

  // Stops the receiving thread, deregisters the cpumask and processes every notification
  // the kernel queued before deregistration (so all exits that happened before Stop()
  // are in Records()). Idempotent.
  void Stop();

  std::vector<KernelTaskCounters> Records() const;  // kept exits so far, in arrival order
  TaskstatsListenerStats stats() const;
  std::vector<std::string> errors() const;  // first few parse/receive errors

  // Appends Records() and counters ("taskstats_exits", "taskstats_enobufs", ...) and a
  // note when exits may be missing (unavailable, overruns) to `set`.
  void ExportTo(KernelCounterSet* set) const;

 private:
  bool Open();
  bool SendCpumaskCommand(int attr, uint32_t* seq);
  // Sends a cpumask command and waits for the kernel's reply (*error: 0 or -errno).
  // False with *why when there was no usable reply.
  bool RunCpumaskCommand(int attr, int32_t* error, std::string* why);
  void ReceiveLoop();
  // Reads all queued datagrams without blocking. Returns false on a fatal error.
  bool DrainSocket();
  void HandleDatagram(std::span<const uint8_t> data);
  bool Wanted(const KernelTaskCounters& c);
  void AddError(std::string e);

  TaskstatsListenerOptions options_;
  nl_sock* sock_ = nullptr;
  int fd_ = -1;
  int stop_fd_ = -1;  // eventfd
  int family_ = 0;
  std::string cpu_list_;
  bool available_ = false;
  bool registered_ = false;
  bool stopped_ = false;
  std::string status_;
  std::thread thread_;
  int32_t receiver_tid_ = 0;
  std::vector<uint8_t> buffer_;

  mutable std::mutex mu_;  // guards everything below
  std::set<int32_t> filter_;
  std::vector<KernelTaskCounters> records_;
  // Exits not wanted (yet): a grandchild exits before the child that links it to a
  // followed process, so it is claimed when that child's own exit arrives. Oldest are
  // dropped past kMaxUnclaimed (exits of unrelated tasks in a long recording).
  std::deque<KernelTaskCounters> unclaimed_;
  void Claim(KernelTaskCounters c);
  void ClaimHeldBack();
  std::vector<NetlinkAck> acks_;
  TaskstatsListenerStats stats_;
  std::vector<std::string> errors_;
};

}  // namespace cstool
