// What `cstool record` knows about a recording beyond the ring-buffer pages: the
// target, per-CPU loss accounting, thread identities and (later) the kernel's own
// counters. It travels inside the trace.dat file (see trace_file_writer.h) as JSON.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cstool {

struct CpuRecordStats {
  int32_t cpu = 0;
  uint64_t events = 0;       // records written for this CPU
  uint64_t pages = 0;        // ring-buffer pages written
  uint64_t bytes = 0;        // bytes of event data in those pages
  uint64_t lost_events = 0;  // sum of counts the ring buffer reported as missed
  uint64_t lost_pages = 0;   // pages flagged "events missed before this page"
  uint64_t overrun = 0;      // per_cpu/cpuN/stats "overrun" at stop
  uint64_t dropped = 0;      // per_cpu/cpuN/stats "dropped events" at stop
};

struct ThreadIdentity {
  int32_t tid = 0;
  int32_t tgid = 0;
  std::string comm;
};

// The kernel's own switch counters for the `-- CMD` child process: a baseline read
// from /proc while the child was blocked waiting to be released (its switch-out is
// already counted there), and wait4()'s rusage when it was reaped. exit - baseline is
// what the trace window saw, up to the one uncounted final switch of each exited
// non-leader thread.
struct ChildCounters {
  int32_t pid = 0;
  bool reaped = false;
  int32_t wait_status = 0;
  uint64_t baseline_nvcsw = 0;
  uint64_t baseline_nivcsw = 0;
  uint64_t exit_nvcsw = 0;   // ru_nvcsw from wait4 (all threads of the process)
  uint64_t exit_nivcsw = 0;  // ru_nivcsw from wait4
  int64_t utime_ns = 0;
  int64_t stime_ns = 0;
};

struct RecordingInfo {
  std::string tool_version;
  std::vector<std::string> command;  // argv of `-- CMD`, empty otherwise
  std::vector<int32_t> target_pids;  // processes followed (the child, or -p PIDs)
  bool system_wide = false;          // -a
  std::string trace_clock;           // e.g. "mono"
  int64_t start_ts = 0;              // trace-clock time tracing went live
  int64_t end_ts = 0;                // trace-clock time tracing stopped
  std::vector<CpuRecordStats> cpus;
  std::vector<ThreadIdentity> threads;      // tid -> tgid for threads known to the recorder
  std::vector<std::string> missing_events;  // default events this kernel lacks
  ChildCounters child;                      // pid 0 when there was no `-- CMD`
  nlohmann::json kernel_counters;           // ground-truth counters (issue #4), null when absent

  // In overwrite mode one overwritten event shows both in the page headers
  // (lost_events) and in the stop-time `overrun`; dropped events only in the stats.
  uint64_t TotalLostEvents() const {
    uint64_t n = 0;
    for (const auto& c : cpus) n += LostEvents(c);
    return n;
  }
  static uint64_t LostEvents(const CpuRecordStats& c) {
    return std::max(c.lost_events, c.overrun) + c.dropped;
  }
};

inline void to_json(nlohmann::json& j, const CpuRecordStats& s) {
  j = {{"cpu", s.cpu},         {"events", s.events},           {"pages", s.pages},
       {"bytes", s.bytes},     {"lost_events", s.lost_events}, {"lost_pages", s.lost_pages},
       {"overrun", s.overrun}, {"dropped", s.dropped}};
}
inline void from_json(const nlohmann::json& j, CpuRecordStats& s) {
  s.cpu = j.value("cpu", 0);
  s.events = j.value("events", uint64_t{0});
  s.pages = j.value("pages", uint64_t{0});
  s.bytes = j.value("bytes", uint64_t{0});
  s.lost_events = j.value("lost_events", uint64_t{0});
  s.lost_pages = j.value("lost_pages", uint64_t{0});
  s.overrun = j.value("overrun", uint64_t{0});
  s.dropped = j.value("dropped", uint64_t{0});
}
inline void to_json(nlohmann::json& j, const ThreadIdentity& t) {
  j = {{"tid", t.tid}, {"tgid", t.tgid}, {"comm", t.comm}};
}
inline void from_json(const nlohmann::json& j, ThreadIdentity& t) {
  t.tid = j.value("tid", 0);
  t.tgid = j.value("tgid", 0);
  t.comm = j.value("comm", std::string{});
}
inline void to_json(nlohmann::json& j, const ChildCounters& c) {
  j = {{"pid", c.pid},
       {"reaped", c.reaped},
       {"wait_status", c.wait_status},
       {"baseline_nvcsw", c.baseline_nvcsw},
       {"baseline_nivcsw", c.baseline_nivcsw},
       {"exit_nvcsw", c.exit_nvcsw},
       {"exit_nivcsw", c.exit_nivcsw},
       {"utime_ns", c.utime_ns},
       {"stime_ns", c.stime_ns}};
}
inline void from_json(const nlohmann::json& j, ChildCounters& c) {
  c.pid = j.value("pid", 0);
  c.reaped = j.value("reaped", false);
  c.wait_status = j.value("wait_status", 0);
  c.baseline_nvcsw = j.value("baseline_nvcsw", uint64_t{0});
  c.baseline_nivcsw = j.value("baseline_nivcsw", uint64_t{0});
  c.exit_nvcsw = j.value("exit_nvcsw", uint64_t{0});
  c.exit_nivcsw = j.value("exit_nivcsw", uint64_t{0});
  c.utime_ns = j.value("utime_ns", int64_t{0});
  c.stime_ns = j.value("stime_ns", int64_t{0});
}
inline void to_json(nlohmann::json& j, const RecordingInfo& r) {
  j = {{"tool_version", r.tool_version},
       {"command", r.command},
       {"target_pids", r.target_pids},
       {"system_wide", r.system_wide},
       {"trace_clock", r.trace_clock},
       {"start_ts", r.start_ts},
       {"end_ts", r.end_ts},
       {"cpus", r.cpus},
       {"threads", r.threads},
       {"missing_events", r.missing_events},
       {"child", r.child},
       {"kernel_counters", r.kernel_counters}};
}
inline void from_json(const nlohmann::json& j, RecordingInfo& r) {
  r.tool_version = j.value("tool_version", std::string{});
  r.command = j.value("command", std::vector<std::string>{});
  r.target_pids = j.value("target_pids", std::vector<int32_t>{});
  r.system_wide = j.value("system_wide", false);
  r.trace_clock = j.value("trace_clock", std::string{});
  r.start_ts = j.value("start_ts", int64_t{0});
  r.end_ts = j.value("end_ts", int64_t{0});
  r.cpus = j.value("cpus", std::vector<CpuRecordStats>{});
  r.threads = j.value("threads", std::vector<ThreadIdentity>{});
  r.missing_events = j.value("missing_events", std::vector<std::string>{});
  if (j.contains("child")) r.child = j["child"].get<ChildCounters>();
  r.kernel_counters = j.contains("kernel_counters") ? j["kernel_counters"] : nlohmann::json{};
}

}  // namespace cstool
