// `report --critical-path TID`: the chain of threads that explains one thread's wall
// time, walked back from its end through its wakers (Perfetto's thread_executing_span
// critical path, wprof's compound delay).
//
// From the end of the interval backwards, a stretch of the thread on a CPU or waiting
// for one is its own; a sleep that a thread's wakeup ended is explained by the waker:
// the walk continues on the waker from the wakeup (or the interval's end, when that
// comes first) back to the start of the sleep (and, the waker's own sleeps, through
// their wakers), then returns to the sleeper. Where the
// chain of wakers ends, the sleep stays on the sleeper, labelled with why:
//   - woken from an interrupt: the sleep waited for the device (or timer) named;
//   - woken by the idle task or an unknown waker (lost events on the waker's CPU, its
//     first events): the chain cannot go on;
//   - not woken within the trace (a sleep that lasts to its end);
//   - a thread whose state is unknown from the trace start until its first event (no
//     wakeup ended it): "unknown since the trace start"; before a thread's first event
//     at all: "not traced";
//   - a stretch that contains lost events (on any CPU) is kept as the states show it and
//     marked: the chain may be wrong there.
// The segments tile the interval exactly: their durations sum to its wall time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/microstate.h"
#include "sched/observer.h"

namespace cstool {

// Why a segment ends the chain of wakers, when it does.
enum class PathEnd : uint8_t {
  kNone,       // the thread's own time, or explained further back
  kIrqWaker,   // a sleep an interrupt ended (`source` names it)
  kIdleWaker,  // a sleep the idle task ended
  kUnknownWaker,
  kNotWoken,    // a sleep no traced wakeup ended
  kNotTraced,   // before the thread's first event
  kTraceStart,  // its state unknown since the trace began, and no wakeup ended it
};
std::string_view PathEndLabel(PathEnd e);

struct PathSegment {
  const Thread* thread = nullptr;
  Microstate state = Microstate::kUnknown;
  int64_t start = 0;
  int64_t end = 0;
  PathEnd ends = PathEnd::kNone;
  std::string_view source;   // the interrupt, for kIrqWaker
  bool lost_events = false;  // lost events were recorded during it
};

struct CriticalPath {
  const Thread* target = nullptr;
  int64_t from = 0;
  int64_t to = 0;
  std::vector<PathSegment> segments;  // in time order, tiling [from, to)
  uint64_t lost_events = 0;           // lost-events records within [from, to)
};

// Keeps what a critical path needs (every thread's segments and wakeups); attached
// only when one is asked for.
class CriticalPathRecorder : public Observer {
 public:
  uint32_t Hooks() const override {
    return HookBit(Hook::kStateSegment) | HookBit(Hook::kWakeup) | HookBit(Hook::kLostEvents);
  }
  void OnStateSegment(const Thread& t, Microstate state, int32_t cpu, int64_t start,
                      int64_t end) override;
  void OnWakeup(const WakeupEvent& w) override;
  void OnLostEvents(int32_t cpu, int64_t ts, int64_t count) override;

  // The path of `target` over [from, to), clamped to its observed lifetime.
  CriticalPath Walk(const Thread& target, int64_t from, int64_t to) const;

 private:
  struct Segment {
    Microstate state;
    int64_t start;
    int64_t end;
  };
  struct Wake {
    int64_t ts;
    int64_t waker_ts;  // WakeupEvent::waker_ts
    const Thread* waker;
    bool from_irq;
    bool waker_known;
    std::string_view source;
  };
  struct Timeline {
    std::vector<Segment> segments;
    std::vector<Wake> wakes;
  };
  const Timeline* Of(const Thread& t) const {
    return t.id < timelines_.size() ? &timelines_[t.id] : nullptr;
  }
  const Segment* SegmentBefore(const Thread& t, int64_t ts) const;
  const Wake* WakeAt(const Thread& t, int64_t ts) const;
  bool LostWithin(int64_t start, int64_t end) const;

  std::vector<Timeline> timelines_;  // by Thread::id
  std::vector<int64_t> lost_ts_;     // every lost-events record's time, in order
};

}  // namespace cstool
