#include "tracefs/tracefs_session.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <span>
#include <sstream>

#include "base/cpu_list.h"
#include "base/errors.h"
#include "tracefs/instance_owner.h"
#include "tracefs/recoverable_mark.h"
#include "tracefs/tracefs_api.h"

namespace cstool {
namespace {

// Frees a char** list returned by libtracefs.
struct ListDeleter {
  void operator()(char** l) const { tracefs_list_free(l); }
};
using TracefsList = std::unique_ptr<char*, ListDeleter>;

// Frees a malloc'ed string returned by libtracefs.
struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};
using CString = std::unique_ptr<char, FreeDeleter>;

// A handle on an existing instance (libtracefs's): freeing it leaves the instance.
struct HandleDeleter {
  void operator()(tracefs_instance* i) const { tracefs_instance_free(i); }
};
using InstanceHandle = std::unique_ptr<tracefs_instance, HandleDeleter>;

// The default events: all of them for `record`, those marked for interrupt analysis for
// `irq` (which needs no syscall or fault events).
struct DefaultEvent {
  EventName name;
  bool for_interrupts;
};
const DefaultEvent kDefaultEvents[] = {
    {{"sched", "sched_switch"}, true},
    {{"sched", "sched_waking"}, true},
    {{"sched", "sched_wakeup"}, true},
    {{"sched", "sched_wakeup_new"}, true},
    {{"sched", "sched_process_fork"}, true},
    {{"sched", "sched_process_exec"}, true},
    {{"sched", "sched_process_exit"}, true},
    {{"sched", "sched_process_free"}, true},
    {{"sched", "sched_migrate_task"}, true},
    {{"sched", "sched_stat_runtime"}, false},  // the kernel's run-time accounting
    {{"task", "task_newtask"}, false},
    {{"task", "task_rename"}, false},
    {{"irq", "irq_handler_entry"}, true},
    {{"irq", "irq_handler_exit"}, true},
    {{"irq", "softirq_entry"}, true},
    {{"irq", "softirq_exit"}, true},
    {{"irq", "softirq_raise"}, false},
    {{"irq_vectors", "*"}, true},  // every *_entry/*_exit pair, see VectorEvents()
    {{"nmi", "nmi_handler"}, true},
    {{"raw_syscalls", "sys_enter"}, false},
    {{"raw_syscalls", "sys_exit"}, false},
    {{"exceptions", "page_fault_user"}, false},
    {{"exceptions", "page_fault_kernel"}, false},
};

std::vector<EventName> BaseEvents(EventSet set) {
  std::vector<EventName> out;
  if (set == EventSet::kNone) return out;
  for (const DefaultEvent& e : kDefaultEvents) {
    const bool scheduler = (e.name.system == "sched" && e.name.event != "sched_stat_runtime") ||
                           e.name.system == "task";
    if (set == EventSet::kFull || (set == EventSet::kInterrupts && e.for_interrupts) ||
        (set == EventSet::kScheduler && scheduler))
      out.push_back(e.name);
  }
  return out;
}

bool EventExists(const std::string& system, const std::string& event) {
  return tracefs_event_file_exists(nullptr, system.c_str(), event.c_str(), "format");
}

std::vector<std::string> SystemEvents(const std::string& system) {
  TracefsList list(tracefs_system_events(nullptr, system.c_str()));
  std::vector<std::string> out;
  for (char** p = list.get(); p && *p; ++p) out.emplace_back(*p);
  std::sort(out.begin(), out.end());
  return out;
}

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// irq_vectors handler events: every X_entry that has a matching X_exit (the
// vector_* events are vector management, not handlers).
std::vector<EventName> VectorEvents() {
  std::vector<std::string> names = SystemEvents("irq_vectors");
  std::set<std::string> all(names.begin(), names.end());
  std::vector<EventName> out;
  for (const auto& n : names) {
    if (n.rfind("vector_", 0) == 0 || !EndsWith(n, "_entry")) continue;
    std::string exit = n.substr(0, n.size() - 6) + "_exit";
    if (!all.count(exit)) continue;
    out.push_back({"irq_vectors", n});
    out.push_back({"irq_vectors", exit});
  }
  return out;
}

// trace_clock lists the clocks separated by spaces, the current one in brackets.
bool HasClock(const std::string& clocks, std::string_view name) {
  size_t pos = 0;
  while (pos < clocks.size()) {
    size_t end = clocks.find_first_of(" \n", pos);
    if (end == std::string::npos) end = clocks.size();
    std::string_view tok(clocks.data() + pos, end - pos);
    if (tok.size() > 2 && tok.front() == '[' && tok.back() == ']')
      tok = tok.substr(1, tok.size() - 2);
    if (tok == name) return true;
    pos = end + 1;
  }
  return false;
}

std::string ProcessComm(int pid) {
  std::ifstream in(fmt::format("/proc/{}/comm", pid));
  std::string comm;
  std::getline(in, comm);
  return comm;
}

// The processes with a file of `dir` open ("pid 123 (sleep)"): why an instance is busy.
std::string HoldersOf(const std::filesystem::path& dir) {
  std::string holders;
  std::error_code ec;
  // Processes come and go while this runs: every step takes an error code, never throws.
  for (std::filesystem::directory_iterator proc("/proc", ec), end; !ec && proc != end;
       proc.increment(ec)) {
    const std::string pid = proc->path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (!FilesUnderOpen(std::atoi(pid.c_str()), dir).value_or(false)) continue;
    holders += fmt::format("{}pid {} ({})", holders.empty() ? "" : ", ", pid,
                           ProcessComm(std::atoi(pid.c_str())));
  }
  return holders;
}

[[noreturn]] void FailWrite(const std::string& what) {
  throw Error(fmt::format("cannot set {}: {}", what, std::strerror(errno)));
}

}  // namespace

std::string QualifiedEventName(const std::string& spec) {
  if (spec.find(':') != std::string::npos || spec.empty() || spec.find('/') != std::string::npos ||
      !SystemEvents(spec).empty())
    return spec;
  TracefsList list(tracefs_event_systems(nullptr));
  std::vector<std::string> systems;
  for (char** p = list.get(); p && *p; ++p)
    if (EventExists(*p, spec)) systems.emplace_back(*p);
  if (systems.size() > 1) {
    std::sort(systems.begin(), systems.end());
    throw Error(fmt::format("event '{}' is in several systems: {}:{}; name one", spec,
                            fmt::join(systems, ":" + spec + ", "), spec),
                ExitCode::kUsage);
  }
  return systems.empty() ? spec : systems[0] + ":" + spec;
}

void TracefsSession::InstanceDeleter::operator()(tracefs_instance* i) const {
  tracefs_trace_off(i);
  tracefs_instance_destroy(i);
  tracefs_instance_free(i);
}

double CpuStatField(std::string_view stats, std::string_view key) {
  size_t pos = 0;
  while (pos < stats.size()) {
    size_t end = stats.find('\n', pos);
    if (end == std::string_view::npos) end = stats.size();
    const std::string_view line = stats.substr(pos, end - pos);
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ':')
      return std::strtod(std::string(line.substr(key.size() + 1)).c_str(), nullptr);
    pos = end + 1;
  }
  return 0;
}

std::string ReadTopLevelTracingFile(const char* file) {
  int size = 0;
  CString text(tracefs_instance_file_read(nullptr, file, &size));
  if (!text) throw Error(fmt::format("cannot read tracefs file '{}'", file));
  return std::string(text.get(), static_cast<size_t>(std::max(size, 0)));
}

void TracefsSession::CheckAccess(std::string_view denied) {
  // Root, or a user given write access to tracefs (with CAP_PERFMON for the events).
  if (::geteuid() != 0 && ::access("/sys/kernel/tracing/instances", W_OK | X_OK) != 0)
    throw Error(std::string(denied), ExitCode::kUsage);
  if (tracefs_tracing_dir() == nullptr)
    throw Error("tracefs is not available (cannot find or mount /sys/kernel/tracing)",
                ExitCode::kUsage);
}

namespace {

// The owner pid of a cstool instance name, "cstool-<pid>" or "cstool-<pid>-<suffix>";
// 0 for any other name.
int OwnerOf(const std::string& name) {
  const size_t prefix = std::strlen(TracefsSession::kInstancePrefix);
  if (name.rfind(TracefsSession::kInstancePrefix, 0) != 0) return 0;
  const size_t end = name.find_first_not_of("0123456789", prefix);
  if (end == prefix || (end != std::string::npos && (name[end] != '-' || end + 1 == name.size())))
    return 0;
  return std::atoi(name.c_str() + prefix);
}

// Every cstool instance that exists now, with its owner pid.
std::vector<std::pair<std::string, int>> CstoolInstances() {
  std::vector<std::pair<std::string, int>> out;
  const char* tracing = tracefs_tracing_dir();
  if (!tracing) return out;
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(tracing) / "instances", ec)) {
    std::string name = entry.path().filename().string();
    if (const int pid = OwnerOf(name); pid > 0) out.emplace_back(std::move(name), pid);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// What a user can do with a killed recorder's kept instances: both choices, with paths.
std::string RecoveryAdvice(const RecoverableRecording& r) {
  return fmt::format(
      "run `cstool record --recover {0}` to take the events still held there, or remove its "
      "leftovers ('{1}' and the page files '{0}.*.tmp') to give them up",
      r.out.string(), r.note.string());
}

}  // namespace

std::vector<int> TracefsSession::InstanceOwners() {
  std::vector<int> pids;
  for (const auto& [name, pid] : CstoolInstances()) pids.push_back(pid);
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  return pids;
}

std::string TracefsSession::InstanceName(int pid, std::string_view suffix) {
  return suffix.empty() ? fmt::format("{}{}", kInstancePrefix, pid)
                        : fmt::format("{}{}-{}", kInstancePrefix, pid, suffix);
}

std::filesystem::path TracefsSession::InstanceDir(const std::string& name) {
  const char* tracing = tracefs_tracing_dir();
  return tracing == nullptr ? std::filesystem::path()
                            : std::filesystem::path(tracing) / "instances" / name;
}

int TracefsSession::ReapStaleInstances(Messages& messages) {
  int reaped = 0;
  std::set<int> kept;
  for (const auto& [name, pid] : CstoolInstances()) {
    if (pid == ::getpid()) continue;  // handled by the constructor
    const std::filesystem::path dir = InstanceDir(name);
    if (InstanceOwnerRuns(dir, pid)) continue;
    const InstanceHandle inst(tracefs_instance_alloc(nullptr, name.c_str()));
    if (!inst) continue;
    if (const std::optional<RecoverableRecording> r = RecoverableRecordingOf(pid)) {
      // Tracing off: an orphaned command traced on would overwrite the oldest events
      // there, the ones the recorder had not read.
      tracefs_trace_off(inst.get());
      if (kept.insert(pid).second)
        messages.Warning(fmt::format(
            "kept the tracefs instances of the killed recording into '{}' (cstool pid {}, "
            "tracing off): {}",
            r->out.string(), pid, RecoveryAdvice(*r)));
      continue;
    }
    if (tracefs_instance_destroy(inst.get()) == 0) {
      ++reaped;
    } else {
      const int err = errno;
      const std::string holders = err == EBUSY ? HoldersOf(dir) : "";
      messages.Warning(fmt::format("cannot remove stale instance '{}': {}{}", name,
                                   std::strerror(err),
                                   holders.empty() ? "" : "; its files are open in " + holders));
    }
  }
  return reaped;
}

TracefsSession::TracefsSession(const SessionConfig& config, Messages& messages) {
  CheckAccess();
  // Once a process: its other instances (suffixed) come after its first, which reaped.
  if (config.instance_suffix.empty()) ReapStaleInstances(messages);
  ResolveEvents(config, messages);

  name_ = InstanceName(::getpid(), config.instance_suffix);
  if (tracefs_instance_exists(name_.c_str())) {
    // Left by an earlier process that had our pid. A killed recorder's, kept for its
    // recovery (ReapStaleInstances), holds events nothing else does: not ours to remove,
    // and our instance cannot take another name (record --recover looks for this one).
    if (!InstanceOwnerRuns(InstanceDir(name_), ::getpid()))
      if (const std::optional<RecoverableRecording> r = RecoverableRecordingOf(::getpid())) {
        // Tracing off, as ReapStaleInstances leaves the kept ones (it skips our pid): the
        // dead recorder's pid filter now names whoever gets its workload's pids next.
        if (const InstanceHandle kept{tracefs_instance_alloc(nullptr, name_.c_str())})
          tracefs_trace_off(kept.get());
        throw Error(
            fmt::format("the killed recording into '{}' left its tracefs instance '{}' under this "
                        "process's pid, holding events it had not read: {}; then try again",
                        r->out.string(), name_, RecoveryAdvice(*r)));
      }
    if (const InstanceHandle old{tracefs_instance_alloc(nullptr, name_.c_str())})
      tracefs_instance_destroy(old.get());
  }
  instance_.reset(tracefs_instance_create(name_.c_str()));
  if (!instance_)
    throw Error(
        fmt::format("cannot create tracefs instance '{}': {}", name_, std::strerror(errno)));
  if (char* path = tracefs_instance_get_file(instance_.get(), "tracing_on")) {
    held_open_.emplace(::open(path, O_RDONLY | O_CLOEXEC));
    tracefs_put_tracing_file(path);
  }
  Configure(config);
}

TracefsSession::~TracefsSession() = default;

void TracefsSession::ResolveEvents(const SessionConfig& config, Messages& messages) {
  std::set<std::string> seen;
  auto add = [&](const EventName& e) {
    if (seen.insert(e.Full()).second) events_.push_back(e);
  };
  for (const EventName& e : BaseEvents(config.event_set)) {
    if (e.event == "*") {
      auto vectors = VectorEvents();
      if (vectors.empty()) missing_.push_back(e.system + ":*_entry/*_exit");
      for (const auto& v : vectors) add(v);
    } else if (EventExists(e.system, e.event)) {
      add(e);
    } else {
      missing_.push_back(e.Full());
    }
  }
  for (const std::string& spec : config.extra_events) {
    size_t colon = spec.find(':');
    std::string system = spec.substr(0, colon);
    std::string event = colon == std::string::npos ? "*" : spec.substr(colon + 1);
    if (system.empty() || event.empty() || system.find('/') != std::string::npos ||
        event.find('/') != std::string::npos)
      throw Error(fmt::format("invalid event '{}' (-e takes SYSTEM:EVENT, SYSTEM or EVENT)", spec),
                  ExitCode::kUsage);
    if (event == "*") {
      auto names = SystemEvents(system);
      // (A bare event's name was made SYSTEM:EVENT before, when one system had it.)
      if (names.empty() && colon == std::string::npos)
        throw Error(fmt::format("unknown event '{}': neither an event system nor an event's "
                                "name (see /sys/kernel/tracing/available_events; -e takes "
                                "SYSTEM:EVENT, SYSTEM or EVENT)",
                                system),
                    ExitCode::kUsage);
      if (names.empty())
        throw Error(fmt::format("unknown event system '{}' (see "
                                "/sys/kernel/tracing/available_events; -e takes SYSTEM:EVENT, "
                                "SYSTEM or EVENT)",
                                system),
                    ExitCode::kUsage);
      for (const auto& n : names) add({system, n});
    } else if (EventExists(system, event)) {
      add({system, event});
    } else {
      throw Error(
          fmt::format("unknown event '{}' (see /sys/kernel/tracing/available_events)", spec),
          ExitCode::kUsage);
    }
  }
  for (const auto& m : missing_)
    messages.Warning(fmt::format("event {} is not available on this kernel", m));
}

void TracefsSession::Configure(const SessionConfig& config) {
  tracefs_instance* inst = instance_.get();
  if (tracefs_trace_off(inst) != 0) FailWrite("tracing_on");

  std::string kb = fmt::format("{}", config.buffer_kb);
  if (tracefs_instance_file_write(inst, "buffer_size_kb", kb.c_str()) < 0)
    FailWrite(fmt::format("buffer size {} KiB", config.buffer_kb));

  std::string clocks = ReadFile("trace_clock");
  for (const char* c : {"mono", "local"}) {
    if (!HasClock(clocks, c) || tracefs_instance_file_write(inst, "trace_clock", c) < 0) continue;
    clock_ = c;
    break;
  }
  if (clock_.empty()) FailWrite("trace clock");

  if (!config.cpus.empty()) {
    std::string mask = CpuMaskHex(config.cpus);
    if (tracefs_instance_file_write(inst, "tracing_cpumask", mask.c_str()) < 0)
      FailWrite(fmt::format("tracing_cpumask {}", mask));
  }

  if (config.follow_forks && tracefs_option_enable(inst, TRACEFS_OPTION_EVENT_FORK) != 0)
    FailWrite("option event-fork");
  if (tracefs_file_exists(inst, "options/record-tgid"))
    tracefs_option_enable(inst, TRACEFS_OPTION_RECORD_TGID);

  for (const auto& e : events_) {
    if (tracefs_event_enable(inst, e.system.c_str(), e.event.c_str()) != 0)
      FailWrite(fmt::format("event {}", e.Full()));
  }
  if (config.kernel_stacks) AddStackTrigger();
}

// libtracefs (1.6) has no trigger API: the trigger is written to the instance's own
// events/sched/sched_switch/trigger file, and goes with the instance.
void TracefsSession::AddStackTrigger() {
  const bool has_switch = std::any_of(events_.begin(), events_.end(), [](const EventName& e) {
    return e.system == "sched" && e.event == "sched_switch";
  });
  if (!has_switch) throw Error("--stacks needs the sched:sched_switch event", ExitCode::kUsage);
  if (!tracefs_event_file_exists(nullptr, "ftrace", "kernel_stack", "format"))
    throw Error("--stacks: this kernel has no ftrace:kernel_stack event (CONFIG_STACKTRACE)",
                ExitCode::kUsage);
  // The filter names the sleep states by their bits; check them against the format's
  // own table instead of trusting them (S and D have been 1 and 2 since forever).
  const std::string format = ReadEventFormat({"sched", "sched_switch"});
  if (format.find("{ 0x00000001, \"S\" }, { 0x00000002, \"D\" }") == std::string::npos &&
      format.find("{ 0x0001, \"S\" }, { 0x0002, \"D\" }") == std::string::npos)
    throw Error(
        "--stacks: sched_switch's prev_state does not map S and D to bits 1 and 2 on "
        "this kernel");
  if (tracefs_event_file_write(instance_.get(), "sched", "sched_switch", "trigger", kStackTrigger) <
      0)
    FailWrite(fmt::format("sched_switch trigger '{}'", kStackTrigger));
  kernel_stacks_ = true;
}

void TracefsSession::SetEventFilter(const EventName& e, const std::string& filter) {
  if (tracefs_event_file_write(instance_.get(), e.system.c_str(), e.event.c_str(), "filter",
                               filter.c_str()) < 0)
    FailWrite(fmt::format("{} filter '{}'", e.Full(), filter));
}

bool TracefsSession::HasEvent(const EventName& e) { return EventExists(e.system, e.event); }

void TracefsSession::AddPids(const std::vector<int>& tids) {
  if (tids.empty()) return;
  std::string text;
  for (int t : tids) text += fmt::format("{} ", t);
  if (tracefs_instance_file_append(instance_.get(), "set_event_pid", text.c_str()) < 0)
    FailWrite(fmt::format("set_event_pid {}", text));
}

std::set<int> TracefsSession::FollowedPids() const {
  std::set<int> pids;
  int size = 0;
  CString text(tracefs_instance_file_read(instance_.get(), "set_event_pid", &size));
  if (!text || size <= 0) return pids;  // an empty list reads as nothing at all (NULL)
  std::istringstream in(std::string(text.get(), static_cast<size_t>(size)));
  for (int pid = 0; in >> pid;) pids.insert(pid);
  return pids;
}

bool TracefsSession::CanExcludePids() const {
  return tracefs_file_exists(instance_.get(), "set_event_notrace_pid");
}

void TracefsSession::ExcludePids(const std::vector<int>& tids) {
  if (tids.empty() || !CanExcludePids()) return;
  std::string text;
  for (int t : tids) text += fmt::format("{} ", t);
  if (tracefs_instance_file_append(instance_.get(), "set_event_notrace_pid", text.c_str()) < 0)
    FailWrite(fmt::format("set_event_notrace_pid {}", text));
}

void TracefsSession::CopyPidFilters(const TracefsSession& other) {
  for (const char* file : {"set_event_pid", "set_event_notrace_pid"}) {
    // An empty list reads as nothing at all (NULL).
    int size = 0;
    CString text(tracefs_instance_file_read(other.instance(), file, &size));
    if (!text || size <= 0) continue;
    std::string list(text.get(), static_cast<size_t>(size));
    std::replace(list.begin(), list.end(), '\n', ' ');
    if (list.find_first_not_of(' ') == std::string::npos) continue;
    if (tracefs_instance_file_append(instance_.get(), file, list.c_str()) < 0)
      FailWrite(fmt::format("{} {}", file, list));
  }
}

void TracefsSession::ResizeCpuBuffer(int cpu, size_t kb) {
  const std::string file = fmt::format("per_cpu/cpu{}/buffer_size_kb", cpu);
  if (tracefs_instance_file_write(instance_.get(), file.c_str(), fmt::format("{}", kb).c_str()) < 0)
    FailWrite(fmt::format("CPU {} buffer size {} KiB", cpu, kb));
}

void TracefsSession::Start() {
  if (tracefs_trace_on(instance_.get()) != 0) FailWrite("tracing_on");
}

void TracefsSession::Stop() { tracefs_trace_off(instance_.get()); }

std::string TracefsSession::ReadFile(const char* file) const {
  int size = 0;
  CString text(tracefs_instance_file_read(instance_.get(), file, &size));
  if (!text) throw Error(fmt::format("cannot read tracefs file '{}/{}'", name_, file));
  return std::string(text.get(), static_cast<size_t>(std::max(size, 0)));
}

std::string TracefsSession::ReadCpuStats(int cpu) const {
  return ReadFile(fmt::format("per_cpu/cpu{}/stats", cpu).c_str());
}

std::string TracefsSession::ReadEventFormat(const EventName& e) const {
  int size = 0;
  CString text(
      tracefs_event_file_read(instance_.get(), e.system.c_str(), e.event.c_str(), "format", &size));
  if (!text) throw Error(fmt::format("cannot read the format of event {}", e.Full()));
  return std::string(text.get(), static_cast<size_t>(std::max(size, 0)));
}

}  // namespace cstool
