#include "analysis/critical_path.h"

#include <algorithm>

namespace cstool {
namespace {

// A cycle of wakers at one instant (only a damaged trace has one) must not loop: after
// this many hand-offs without time going back, the chain ends as unknown.
constexpr int kMaxHandoffsAtOneInstant = 64;

}  // namespace

std::string_view PathEndLabel(PathEnd e) {
  switch (e) {
    case PathEnd::kNone:
      return "";
    case PathEnd::kIrqWaker:
      return "woken by interrupt";
    case PathEnd::kIdleWaker:
      return "woken by idle";
    case PathEnd::kUnknownWaker:
      return "waker unknown";
    case PathEnd::kNotWoken:
      return "not woken in the trace";
    case PathEnd::kNotTraced:
      return "not traced";
    case PathEnd::kTraceStart:
      return "unknown since the trace start";
  }
  return "";
}

void CriticalPathRecorder::OnStateSegment(const Thread& t, Microstate state, int32_t /*cpu*/,
                                          int64_t start, int64_t end) {
  if (end <= start) return;
  if (t.id >= timelines_.size()) timelines_.resize(t.id + 1);
  std::vector<Segment>& segs = timelines_[t.id].segments;
  if (!segs.empty() && segs.back().state == state && segs.back().end == start) {
    segs.back().end = end;  // one state cut in parts: one segment
    return;
  }
  segs.push_back({state, start, end});
}

void CriticalPathRecorder::OnWakeup(const WakeupEvent& w) {
  if (w.new_task) return;  // ends no sleep
  if (w.wakee->id >= timelines_.size()) timelines_.resize(w.wakee->id + 1);
  timelines_[w.wakee->id].wakes.push_back(
      {w.ts, w.waker_ts, w.waker, w.from_irq, w.waker_known, w.irq_source});
}

// Sorted for LostWithin: a loss before a CPU's first record is dated at the trace's
// start, after later losses of other CPUs may have come.
void CriticalPathRecorder::OnLostEvents(int32_t /*cpu*/, int64_t ts, int64_t /*count*/) {
  lost_ts_.insert(std::upper_bound(lost_ts_.begin(), lost_ts_.end(), ts), ts);
}

const CriticalPathRecorder::Segment* CriticalPathRecorder::SegmentBefore(const Thread& t,
                                                                         int64_t ts) const {
  const Timeline* tl = Of(t);
  if (!tl || tl->segments.empty()) return nullptr;
  auto it = std::lower_bound(tl->segments.begin(), tl->segments.end(), ts,
                             [](const Segment& s, int64_t v) { return s.start < v; });
  if (it == tl->segments.begin()) return nullptr;  // nothing starts before ts
  return &*std::prev(it);
}

const CriticalPathRecorder::Wake* CriticalPathRecorder::WakeAt(const Thread& t, int64_t ts) const {
  const Timeline* tl = Of(t);
  if (!tl) return nullptr;
  auto it = std::upper_bound(tl->wakes.begin(), tl->wakes.end(), ts,
                             [](int64_t v, const Wake& w) { return v < w.ts; });
  if (it == tl->wakes.begin()) return nullptr;
  return &*std::prev(it);  // the last wakeup at or before ts
}

bool CriticalPathRecorder::LostWithin(int64_t start, int64_t end) const {
  auto it = std::lower_bound(lost_ts_.begin(), lost_ts_.end(), start);
  return it != lost_ts_.end() && *it <= end;
}

CriticalPath CriticalPathRecorder::Walk(const Thread& target, int64_t from, int64_t to) const {
  CriticalPath path;
  path.target = &target;
  path.from = std::max(from, target.first_ts);
  path.to = target.end_ts >= 0 ? std::min(to, target.end_ts) : to;
  if (path.to <= path.from) {
    path.to = path.from;
    return path;
  }
  struct Frame {
    const Thread* thread;
    int64_t floor;  // this thread explains time back to here, then the one below resumes
  };
  std::vector<Frame> stack{{&target, path.from}};
  std::vector<PathSegment> reversed;
  int64_t t = path.to;
  int handoffs = 0;
  auto emit = [&](const Thread* th, Microstate s, int64_t start, PathEnd ends = PathEnd::kNone,
                  std::string_view source = {}) {
    reversed.push_back({th, s, start, t, ends, source, false});
    t = start;
    handoffs = 0;
  };
  while (!stack.empty()) {
    const Frame f = stack.back();
    if (t <= f.floor) {
      stack.pop_back();
      continue;
    }
    const Segment* seg = SegmentBefore(*f.thread, t);
    if (!seg) {  // before its first event
      emit(f.thread, Microstate::kUnknown, f.floor, PathEnd::kNotTraced);
      continue;
    }
    if (seg->end < t) {  // a gap in its segments (past its end)
      emit(f.thread, Microstate::kUnknown, std::max(seg->end, f.floor), PathEnd::kNotTraced);
      continue;
    }
    const int64_t start = std::max(seg->start, f.floor);
    const bool asleep = IsSleeping(seg->state) && seg->state != Microstate::kStopped;
    if (!asleep && seg->state != Microstate::kUnknown) {
      emit(f.thread, seg->state, start);
      continue;
    }
    // A sleep (or a state unknown since the trace began) is owed to whoever ended it,
    // also when that was after `t` (the interval ends inside the sleep): what the waker
    // did until `t` is what the sleeper waited for.
    const Wake* w = WakeAt(*f.thread, seg->end);
    if (w && w->ts <= seg->start) w = nullptr;
    if (!w) {
      const bool since_trace_start =
          !asleep && seg->start == f.thread->first_ts && !f.thread->created_in_trace;
      emit(f.thread, seg->state, start,
           asleep              ? PathEnd::kNotWoken
           : since_trace_start ? PathEnd::kTraceStart
                               : PathEnd::kNone);
    } else if (w->waker && w->waker != f.thread && handoffs < kMaxHandoffsAtOneInstant) {
      // A wakeup completed after the waker did its part (on the wakee's CPU, once it was
      // off it): the time since is the wakeup's own latency, the sleeper's; the waker then
      // was elsewhere (asleep, often on the sleeper), and following it would go in circles.
      if (w->waker_ts < t) emit(f.thread, seg->state, std::max(w->waker_ts, start));
      if (t > start) {
        stack.push_back({w->waker, start});
        ++handoffs;
      }
    } else if (w->from_irq) {
      emit(f.thread, seg->state, start, PathEnd::kIrqWaker, w->source);
    } else {
      emit(f.thread, seg->state, start,
           w->waker_known && !w->waker ? PathEnd::kIdleWaker : PathEnd::kUnknownWaker);
    }
  }
  path.segments.assign(reversed.rbegin(), reversed.rend());
  for (PathSegment& s : path.segments) s.lost_events = LostWithin(s.start, s.end);
  for (int64_t ts : lost_ts_) path.lost_events += ts >= path.from && ts <= path.to;
  return path;
}

}  // namespace cstool
