#include "analysis/timeline.h"

#include <fmt/core.h>

#include "analysis/report_view.h"

namespace cstool {
namespace {

// Short slice names: a timeline has about one slice per traced event, so every byte
// of a frequent name counts. Indexed by Microstate.
constexpr std::string_view kSliceNames[kMicrostateCount] = {
    "user",      "sys",     "irq",    "softirq", "runnable",
    "preempted", "sleep",   "futex",  "poll",    "uninterruptible",
    "paging",    "stopped", "zombie", "unknown",
};

// Whether a thread in state m is on a CPU for the timeline: a switch-out is where a
// thread goes from such a state to one that is not.
constexpr bool OnCpuForSwitches(Microstate m) {
  return !IsSleeping(m) && !IsWaitingForCpu(m) && m != Microstate::kZombie;
}

// At most this many switch-outs wait for their segments (more means segments that
// never show the switch, e.g. around lost events: the oldest are dropped).
constexpr size_t kMaxUnplaced = 16;
// A slice whose switch-out has not been delivered yet is held until this many follow.
constexpr size_t kMaxAwaiting = 4;

}  // namespace

// The name of a state slice, refined by the switch-out that started it: a sleep in a
// syscall is named like that switch's cause ("sleep:read"), a yield "yield".
std::string TimelineObserver::SliceName(const Slice& s) const {
  if (s.has_after && s.after.cause.kind == CauseKind::kSleepSyscall && s.after.cause.syscall >= 0) {
    switch (s.state) {
      case Microstate::kSleep:
      case Microstate::kSleepFutex:
      case Microstate::kSleepPoll:
        return syscalls_.CauseLabel(s.after.cause);
      case Microstate::kSleepUninterruptible:
        return "uninterruptible:" + syscalls_.Name(s.after.cause.syscall);
      default:
        break;
    }
  }
  if (s.has_after && s.state == Microstate::kWaitCpuPreempted &&
      s.after.cause.kind == CauseKind::kYield)
    return "yield";
  return std::string(kSliceNames[static_cast<size_t>(s.state)]);
}

// `cause` holds the label the slice points to.
void TimelineObserver::SetSwitchOut(TimelineSlice& slice, std::string& cause, SwitchCause c,
                                    bool voluntary, PreemptedAt at) const {
  cause = syscalls_.CauseLabel(c);
  slice.switched_out = true;
  slice.cause = cause;
  if (!voluntary) slice.preempted_at = kPreemptedAtKeys[static_cast<size_t>(at)];
}

TimelineObserver::TimelineObserver(TimelineSink& sink, const SyscallTable& syscalls,
                                   ThreadFilter selected)
    : sink_(sink),
      syscalls_(syscalls),
      selected_(std::move(selected)),
      occupancy_([this](const CpuRun& r) { WriteCpuRun(r); }) {}

TimelineObserver::Track& TimelineObserver::TrackOf(const Thread& t) {
  if (t.id >= tracks_.size()) {
    tracks_.resize(t.id + 1);
    threads_.resize(t.id + 1, nullptr);
  }
  threads_[t.id] = &t;
  return tracks_[t.id];
}

void TimelineObserver::NameThread(const Thread& t, Track& tr) {
  const int32_t pid = TrackPid(t);
  if (!tr.named || tr.comm != t.comm) {
    sink_.ThreadName(pid, t.tid, fmt::format("{} {}", t.comm, t.tid));
    if (!tr.named) sink_.ThreadSortIndex(pid, t.tid, t.id);
    tr.named = true;
    tr.comm = t.comm;
  }
  // A process is named after its first thread seen, and again after its leader, each time
  // the leader's name changes (an exec: the workload was named "cstool", the recorder
  // that forked it); a thread of an unknown process has a group of its own, named so.
  auto [it, inserted] = processes_.try_emplace(pid);
  const bool own_group = !PidKnown(t);
  const bool names_it = own_group || t.tid == pid;
  if (inserted || (names_it && it->second != t.comm)) {
    sink_.ProcessName(pid, own_group ? fmt::format("{} (process unknown)", t.comm) : t.comm);
    it->second = names_it ? t.comm : std::string();
  }
}

void TimelineObserver::WriteSlice(const Thread& t, Track& tr, const Slice& s) {
  NameThread(t, tr);
  const std::string name = SliceName(s);
  TimelineSlice slice{
      .pid = TrackPid(t), .tid = t.tid, .name = name, .start = s.start, .end = s.end};
  std::string cause;
  if (s.has_out) SetSwitchOut(slice, cause, s.out.cause, s.out.voluntary, s.out.preempted_at);
  sink_.Slice(slice);
}

void TimelineObserver::Flush(const Thread& t, Track& tr, size_t keep) {
  while (tr.held.size() > keep) {
    // Its OnSwitch may come just after the segment that showed the switch (an exit's:
    // the thread is a zombie from sched_process_exit to its last switch). A switch that
    // was not traced (lost events) must not hold slices for long.
    if (keep > 0 && tr.held.front().awaits_out && tr.held.size() <= kMaxAwaiting) break;
    WriteSlice(t, tr, tr.held.front());
    tr.held.pop_front();
  }
}

void TimelineObserver::OnStateSegment(const Thread& t, Microstate s, int32_t /*cpu*/, int64_t start,
                                      int64_t end) {
  if (!selected_(t)) return;
  Track& tr = TrackOf(t);
  // The state machine reports a lost-events gap, where it began, before the unknown time
  // it makes from there.
  Slice slice{s, start, end};
  const bool gap_start =
      s == Microstate::kUnknown && std::binary_search(lost_ts_.begin(), lost_ts_.end(), start);
  if (!tr.held.empty() && tr.held.back().end == start) {
    Slice& last = tr.held.back();
    const bool into_gap = gap_start && last.state != Microstate::kUnknown;
    if (into_gap && OnCpuForSwitches(last.state)) {
      // A run that meets a lost-events gap ends with a switch only if one is traced right
      // at the gap's start (the CPU's last record); one inside the gap was lost.
      while (!tr.unplaced.empty() && tr.unplaced.front().ts < start) tr.unplaced.pop_front();
      if (!tr.unplaced.empty() && tr.unplaced.front().ts == start) {
        last.has_out = slice.has_after = true;
        last.out = slice.after = tr.unplaced.front();
        tr.unplaced.pop_front();
      } else {
        last.awaits_out = !t.pending_switches.empty();  // its cause waits for the syscall
      }
    } else if (OnCpuForSwitches(last.state) && !OnCpuForSwitches(s)) {
      // A switch-out at `start`: traced at or after it. Unknown time (lost events, or
      // before the thread was seen) is no sign of one still to come, unless a switch
      // waits for the thread's syscall.
      while (!tr.unplaced.empty() && tr.unplaced.front().ts < start) tr.unplaced.pop_front();
      if (tr.unplaced.empty()) {
        last.awaits_out = last.state != Microstate::kUnknown || !t.pending_switches.empty();
      } else {
        last.has_out = slice.has_after = true;
        last.out = slice.after = tr.unplaced.front();
        tr.unplaced.pop_front();
      }
    } else if (last.state == s && !last.awaits_out && !last.has_out) {
      last.end = end;
      return;
    }
  }
  tr.held.push_back(slice);
  // While switches of this thread wait for its syscall to be resolved, their causes
  // are not known yet: keep the slices they will label.
  if (t.pending_switches.empty()) Flush(t, tr, 1);
}

void TimelineObserver::OnCpuCurrent(const CpuCurrentEvent& e) { occupancy_.OnCpuCurrent(e); }

void TimelineObserver::OnSwitch(const SwitchEvent& e) {
  occupancy_.OnSwitch(e);
  if (!e.prev || !selected_(*e.prev)) return;
  Track& tr = TrackOf(*e.prev);
  const SwitchInfo info{e.ts, e.cause, e.preempted_at, e.voluntary};
  // The segments may have shown the switch already (its cause waited for the syscall).
  for (size_t i = 0; i < tr.held.size(); ++i) {
    if (!tr.held[i].awaits_out) continue;
    tr.held[i].awaits_out = false;
    tr.held[i].has_out = true;
    tr.held[i].out = info;
    if (i + 1 < tr.held.size()) {
      tr.held[i + 1].has_after = true;
      tr.held[i + 1].after = info;
    }
    return;
  }
  tr.unplaced.push_back(info);
  if (tr.unplaced.size() > kMaxUnplaced) tr.unplaced.pop_front();
}

void TimelineObserver::OnWakeup(const WakeupEvent& w) {
  if (!w.wakee || !selected_(*w.wakee)) return;
  const uint64_t id = next_flow_++;
  TimelineFlowEnd from{.ts = w.ts};
  if (w.waker && selected_(*w.waker)) {
    from.ts = w.waker_ts;
    from.pid = TrackPid(*w.waker);
    from.tid = w.waker->tid;
  } else {
    NameCpu(w.cpu);
    from.pid = kCpuPid;
    from.tid = CpuTid(w.cpu);
  }
  // One nanosecond in, so that it lands inside the wakee's "Runnable (wakeup)" slice
  // rather than on the boundary with the sleep before it.
  sink_.Flow(id, from, {.pid = TrackPid(*w.wakee), .tid = w.wakee->tid, .ts = w.ts + 1});
}

void TimelineObserver::NameCpu(int32_t cpu) {
  if (cpu < 0) return;
  if (!cpus_process_named_) {
    sink_.ProcessName(kCpuPid, "CPUs");
    sink_.ProcessSortIndex(kCpuPid, -1);
    cpus_process_named_ = true;
  }
  if (static_cast<size_t>(cpu) >= cpu_named_.size()) cpu_named_.resize(cpu + 1, false);
  if (cpu_named_[cpu]) return;
  cpu_named_[cpu] = true;
  sink_.ThreadName(kCpuPid, CpuTid(cpu), fmt::format("CPU {}", cpu));
  sink_.ThreadSortIndex(kCpuPid, CpuTid(cpu), cpu);
}

// Named "comm tid" whether the thread is selected or not: the name is all that tells
// whose run it is.
void TimelineObserver::WriteCpuRun(const CpuRun& r) {
  NameCpu(r.cpu);
  const Thread& t = *r.thread;
  const std::string name = fmt::format("{} {}", t.comm, t.tid);
  TimelineSlice slice{
      .pid = kCpuPid, .tid = CpuTid(r.cpu), .name = name, .start = r.start, .end = r.end};
  std::string cause;
  if (r.switched_out) SetSwitchOut(slice, cause, r.cause, r.voluntary, r.preempted_at);
  sink_.Slice(slice);
}

// Nested in the CPU track's slice of the thread they interrupted.
void TimelineObserver::OnIrq(const IrqInterval& iv) {
  if (iv.end <= iv.start) return;
  NameCpu(iv.cpu);
  sink_.Slice(
      {.pid = kCpuPid, .tid = CpuTid(iv.cpu), .name = iv.name, .start = iv.start, .end = iv.end});
}

void TimelineObserver::OnLostEvents(int32_t cpu, int64_t ts, int64_t count) {
  auto at = std::lower_bound(lost_ts_.begin(), lost_ts_.end(), ts);  // at the end, in time order
  if (at == lost_ts_.end() || *at != ts) lost_ts_.insert(at, ts);
  NameCpu(cpu);
  sink_.Instant({.pid = kCpuPid,
                 .tid = CpuTid(cpu),
                 .name = "lost events",
                 .ts = ts,
                 .arg_key = "count",
                 .arg_value = count});
}

void TimelineObserver::OnTraceEnd(int64_t ts) {
  occupancy_.OnTraceEnd(ts);
  for (size_t id = 0; id < tracks_.size(); ++id) {
    if (!threads_[id]) continue;
    Track& tr = tracks_[id];
    // A life that ends with a switch-out (exit) has no segment after it to show it.
    if (!tr.held.empty() && OnCpuForSwitches(tr.held.back().state) && !tr.held.back().has_out) {
      Slice& last = tr.held.back();
      while (!tr.unplaced.empty() && tr.unplaced.front().ts < last.end) tr.unplaced.pop_front();
      if (!tr.unplaced.empty()) {
        last.has_out = true;
        last.out = tr.unplaced.front();
      }
    }
    Flush(*threads_[id], tr, 0);
  }
  if (!keep_open_) sink_.Close();
}

void TimelineObserver::WriteCriticalPath(const CriticalPath& path) {
  if (path.segments.empty()) return;
  sink_.ProcessName(kPathPid,
                    fmt::format("Critical path of {} {}", path.target->comm, path.target->tid));
  sink_.ProcessSortIndex(kPathPid, -2);
  sink_.ThreadName(kPathPid, kPathPid, "critical path");
  const PathSegment* prev = nullptr;
  for (const PathSegment& s : path.segments) {
    const std::string name =
        fmt::format("{} {}: {}{}", s.thread->comm, s.thread->tid, MicrostateKey(s.state),
                    s.lost_events ? " (lost events)" : "");
    std::string ends(s.ends != PathEnd::kNone ? PathEndLabel(s.ends) : std::string_view{});
    if (!s.source.empty()) ends += fmt::format("{}{}", ends.empty() ? "" : " ", s.source);
    sink_.Slice({.pid = kPathPid,
                 .tid = kPathPid,
                 .name = name,
                 .start = s.start,
                 .end = s.end,
                 .switched_out = !ends.empty(),
                 .cause = ends});
    // Where the path changes thread, an arrow between the two threads' tracks, each end
    // one nanosecond inside its own segment.
    if (prev && prev->thread != s.thread && selected_(*prev->thread) && selected_(*s.thread))
      sink_.Flow(next_flow_++,
                 {.pid = TrackPid(*prev->thread), .tid = prev->thread->tid, .ts = prev->end - 1},
                 {.pid = TrackPid(*s.thread), .tid = s.thread->tid, .ts = s.start + 1});
    prev = &s;
  }
}

}  // namespace cstool
