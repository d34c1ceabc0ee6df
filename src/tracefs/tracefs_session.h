// RAII over cstool's private tracefs instance "cstool-<pid>": event selection,
// buffer size, trace clock, CPU mask and pid filter. The instance (and with it every
// setting) disappears when the session is destroyed, on error paths too; instances
// left behind by cstool processes that died are reaped when a new session starts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/messages.h"
#include "base/unique_fd.h"

struct tracefs_instance;

namespace cstool {

struct EventName {
  std::string system;
  std::string event;
  std::string Full() const { return system + ":" + event; }
};

// The base set of events a session enables, before `extra_events`.
enum class EventSet : uint8_t {
  kFull,        // scheduler, tasks, interrupts, syscalls, page faults (`cstool record`)
  kInterrupts,  // interrupts plus the scheduler events that say whom they hit (`cstool irq`)
  kScheduler,   // switches, wakeups, migrations, task lifetimes: the sleep/run states alone
  kNone,        // only `extra_events`
};

struct SessionConfig {
  EventSet event_set = EventSet::kFull;
  size_t buffer_kb = 0;                   // per CPU
  std::vector<int> cpus;                  // CPUs to trace (tracing_cpumask)
  std::vector<std::string> extra_events;  // "-e SYSTEM:EVENT" (or SYSTEM, SYSTEM:*)
  // The pid lists (AddPids: set_event_pid, ExcludePids: set_event_notrace_pid) take in
  // the listed tasks' later children too (the event-fork option, which applies to both).
  bool follow_forks = true;
  // A `stacktrace` trigger on sched_switch for switches into S or D sleep: the kernel
  // call chain of every sleep follows its switch as an ftrace:kernel_stack record.
  bool kernel_stacks = false;
  // Names a second instance of the same recorder: "cstool-<pid>-<suffix>" (the flight
  // recorder's trigger and its successive windows). Empty: "cstool-<pid>".
  std::string instance_suffix;
};

class TracefsSession {
 public:
  // Checks privileges and tracefs, reaps stale instances (for the process's first instance,
  // the one without a suffix), creates and configures the
  // instance with tracing off; default events this kernel lacks are warnings. Throws
  // cstool::Error (exit 2 for usage problems).
  TracefsSession(const SessionConfig& config, Messages& messages);
  ~TracefsSession();
  TracefsSession(const TracefsSession&) = delete;
  TracefsSession& operator=(const TracefsSession&) = delete;

  // The sched_switch trigger of SessionConfig::kernel_stacks: S (1) or D (2) sleeps.
  static constexpr const char* kStackTrigger = "stacktrace if prev_state & 3";
  // Name prefix of every cstool instance; the suffix is the owner's pid.
  static constexpr const char* kInstancePrefix = "cstool-";
  // The instance process `pid` makes: cstool-<pid>, or cstool-<pid>-<suffix> for one of
  // SessionConfig::instance_suffix.
  static std::string InstanceName(int pid, std::string_view suffix);
  // Where the instance `name` is (or would be) in tracefs; empty when tracefs is not there.
  static std::filesystem::path InstanceDir(const std::string& name);
  // The pids in the names of the cstool-<pid>[-<suffix>] instances that exist now
  // (each once).
  static std::vector<int> InstanceOwners();
  // Removes cstool-<pid>[-<suffix>] instances whose owner is gone; returns how many.
  static int ReapStaleInstances(Messages& messages);
  // Throws unless we are root (or may write to tracefs) and tracefs is mounted or
  // mountable; `denied` is the usage error when the rights are missing, for a caller
  // whose use of tracefs is not tracing of its own.
  static constexpr std::string_view kTraceDenied =
      "needs root (or CAP_PERFMON and write access to /sys/kernel/tracing) to trace; run it as "
      "root, e.g. with sudo";
  static void CheckAccess(std::string_view denied = kTraceDenied);

  void AddPids(const std::vector<int>& tids);
  // The tasks set_event_pid holds now: the ones added and the children event-fork added.
  std::set<int> FollowedPids() const;
  // Keeps these tasks' own events out (set_event_notrace_pid), if the kernel has it.
  void ExcludePids(const std::vector<int>& tids);
  bool CanExcludePids() const;
  // Traces the tasks `other` traces: its pid filters as they are now, including the
  // children its event-fork option added.
  void CopyPidFilters(const TracefsSession& other);
  // Keeps only the records of event `e` (one of events()) that match `filter`, in the
  // kernel's filter syntax (the event's filter file).
  void SetEventFilter(const EventName& e, const std::string& filter);
  // Whether this kernel has the event (its format file exists).
  static bool HasEvent(const EventName& e);
  void Start();  // tracing_on = 1
  void Stop();   // tracing_on = 0
  // per_cpu/cpuN/buffer_size_kb: one CPU's ring buffer. Growing it keeps what it holds.
  void ResizeCpuBuffer(int cpu, size_t kb);

  tracefs_instance* instance() const { return instance_.get(); }
  const std::string& name() const { return name_; }
  const std::string& clock() const { return clock_; }
  const std::vector<EventName>& events() const { return events_; }
  const std::vector<std::string>& missing_events() const { return missing_; }
  bool kernel_stacks() const { return kernel_stacks_; }

  std::string ReadFile(const char* file) const;  // instance file
  std::string ReadCpuStats(int cpu) const;       // per_cpu/cpuN/stats
  std::string ReadEventFormat(const EventName& e) const;

 private:
  struct InstanceDeleter {
    void operator()(tracefs_instance* i) const;
  };
  void ResolveEvents(const SessionConfig& config, Messages& messages);
  void Configure(const SessionConfig& config);
  void AddStackTrigger();

  std::string name_;
  std::unique_ptr<tracefs_instance, InstanceDeleter> instance_;
  // A file of the instance, open for the session's life (closed before the instance is
  // removed: declared after it). The kernel refuses to remove an instance with an open
  // file, and another cstool takes it for its owner's sign of life: a flight recorder
  // reads none between dumps, and a wall clock set forward can make its instance look
  // older than it (tracefs/instance_owner).
  std::optional<UniqueFd> held_open_;
  std::string clock_;
  std::vector<EventName> events_;
  std::vector<std::string> missing_;
  bool kernel_stacks_ = false;
};

// A field of per_cpu/cpuN/stats as a number ("overrun: 12" -> 12, "oldest event ts:
// 5.000123" -> 5.000123 seconds); 0 when the field is absent.
double CpuStatField(std::string_view stats, std::string_view key);

// -e's SPEC as SYSTEM:EVENT when it is an event's bare name (as trace-cmd takes it) that no
// system has as its own name and one system has as an event; else SPEC as given (a
// system, SYSTEM:EVENT, or unknown). Several systems with that event: a usage error.
std::string QualifiedEventName(const std::string& spec);

// Reads a file of the top-level tracing directory ("events/header_page", ...).
std::string ReadTopLevelTracingFile(const char* file);

}  // namespace cstool
