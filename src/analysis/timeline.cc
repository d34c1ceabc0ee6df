#include "analysis/timeline.h"

#include <fmt/core.h>

#include "analysis/report_view.h"
#include "analysis/state_labels.h"

namespace cstool {

TimelineObserver::TimelineObserver(std::ostream& os, const SyscallTable& syscalls,
                                   ThreadFilter selected)
    : writer_(os),
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
    writer_.ThreadName(pid, t.tid, fmt::format("{} {}", t.comm, t.tid));
    if (!tr.named) writer_.ThreadSortIndex(pid, t.tid, t.id);
    tr.named = true;
    tr.comm = t.comm;
  }
  // A process is named after its first thread seen, and again after its leader; a thread
  // of an unknown process has a group of its own, named so.
  auto [it, inserted] = processes_.try_emplace(pid, false);
  const bool leader = PidKnown(t) && t.tid == pid;
  if (inserted || (!it->second && leader)) {
    writer_.ProcessName(pid, PidKnown(t) ? t.comm : fmt::format("{} (process unknown)", t.comm));
    it->second = leader;
  }
}

void TimelineObserver::WriteSlice(const Thread& t, Track& tr, const Slice& s) {
  NameThread(t, tr);
  TraceEventArgs args;
  args.Add("state", MicrostateKey(s.state));
  if (s.has_after) args.Add("after", syscalls_.CauseLabel(s.after.cause));
  if (s.has_out) {
    args.Add("switch_out", s.out.voluntary ? "voluntary" : "involuntary");
    args.Add("cause", syscalls_.CauseLabel(s.out.cause));
    if (!s.out.voluntary)
      args.Add("preempted_at", kPreemptedAtKeys[static_cast<size_t>(s.out.preempted_at)]);
  }
  writer_.Complete(SliceLabel(s.state, s.has_after, s.after.cause, syscalls_),
                   MicrostateKey(s.state), TrackPid(t), t.tid, s.start, s.end - s.start, args);
}

void TimelineObserver::Flush(const Thread& t, Track& tr, size_t keep) {
  while (tr.held.size() > keep) {
    WriteSlice(t, tr, tr.held.front());
    tr.held.pop_front();
  }
}

void TimelineObserver::OnStateSegment(const Thread& t, Microstate s, int64_t start, int64_t end) {
  if (!selected_(t)) return;
  Track& tr = TrackOf(t);
  Slice slice{s, start, end};
  if (tr.last_switch.ts == start) {
    slice.has_after = true;
    slice.after = tr.last_switch;
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
  SwitchInfo info{e.ts, e.cause, e.preempted_at, e.voluntary};
  tr.last_switch = info;
  for (Slice& s : tr.held) {
    if (s.end == e.ts) {
      s.has_out = true;
      s.out = info;
    }
    if (s.start == e.ts) {
      s.has_after = true;
      s.after = info;
    }
  }
}

void TimelineObserver::OnWakeup(const WakeupEvent& w) {
  if (!w.wakee || !selected_(*w.wakee)) return;
  const uint64_t id = next_flow_++;
  if (w.waker && selected_(*w.waker)) {
    writer_.FlowStart("wakeup", id, TrackPid(*w.waker), w.waker->tid, w.ts);
  } else {
    NameCpu(w.cpu);
    writer_.FlowStart("wakeup", id, kCpuPid, CpuTid(w.cpu), w.ts);
  }
  // One nanosecond in, so that it lands inside the wakee's "Runnable (wakeup)" slice
  // rather than on the boundary with the sleep before it.
  writer_.FlowEnd("wakeup", id, TrackPid(*w.wakee), w.wakee->tid, w.ts + 1);
}

void TimelineObserver::NameCpu(int32_t cpu) {
  if (cpu < 0) return;
  if (!cpus_process_named_) {
    writer_.ProcessName(kCpuPid, "CPUs");
    writer_.ProcessSortIndex(kCpuPid, -1);
    cpus_process_named_ = true;
  }
  if (static_cast<size_t>(cpu) >= cpu_named_.size()) cpu_named_.resize(cpu + 1, false);
  if (cpu_named_[cpu]) return;
  cpu_named_[cpu] = true;
  writer_.ThreadName(kCpuPid, CpuTid(cpu), fmt::format("CPU {}", cpu));
  writer_.ThreadSortIndex(kCpuPid, CpuTid(cpu), cpu);
}

void TimelineObserver::WriteCpuRun(const CpuRun& r) {
  NameCpu(r.cpu);
  const Thread& t = *r.thread;
  const bool sel = selected_(t);
  TraceEventArgs args;
  args.Add("tid", int64_t{t.tid});
  if (PidKnown(t)) args.Add("pid", int64_t{t.tgid});
  args.Add("comm", t.comm);
  if (r.switched_out) {
    args.Add("switch_out", r.voluntary ? "voluntary" : "involuntary");
    args.Add("cause", syscalls_.CauseLabel(r.cause));
    if (!r.voluntary)
      args.Add("preempted_at", kPreemptedAtKeys[static_cast<size_t>(r.preempted_at)]);
  }
  writer_.Complete(sel ? fmt::format("{} {}", t.comm, t.tid) : std::string("other"),
                   sel ? "thread" : "other", kCpuPid, CpuTid(r.cpu), r.start, r.end - r.start,
                   args);
}

void TimelineObserver::OnIrq(const IrqInterval& iv) {
  if (iv.end <= iv.start) return;
  NameCpu(iv.cpu);
  static constexpr std::string_view kKinds[] = {"hardirq", "vector", "softirq", "nmi"};
  TraceEventArgs args;
  if (iv.interrupted) args.Add("interrupted_tid", int64_t{iv.interrupted->tid});
  writer_.Complete(iv.name, kKinds[static_cast<size_t>(iv.kind)], kCpuPid, CpuTid(iv.cpu), iv.start,
                   iv.end - iv.start, args);
}

void TimelineObserver::OnLostEvents(int32_t cpu, int64_t ts, int64_t count) {
  NameCpu(cpu);
  TraceEventArgs args;
  args.Add("count", count);
  writer_.Instant("lost events", "lost", kCpuPid, CpuTid(cpu), ts, args);
}

void TimelineObserver::OnTraceEnd(int64_t ts) {
  occupancy_.OnTraceEnd(ts);
  for (size_t id = 0; id < tracks_.size(); ++id)
    if (threads_[id]) Flush(*threads_[id], tracks_[id], 0);
  writer_.Close();
}

}  // namespace cstool
