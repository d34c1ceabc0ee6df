// What `report --timeline` shows, as TimelineObserver produces it: named processes and
// threads (the CPU tracks are threads of a synthetic process), slices on them, instants
// and wakeup flows. Writers of a file format implement it (output/timeline_output.h:
// Chrome/Perfetto JSON, Perfetto protobuf), so both formats carry the same content.
//
// A track is a thread (pid, tid). Its slices arrive in time order, except on CPU tracks,
// where a run may come after the interrupts nested in it or after later runs (its cause
// waited for the thread's syscall); a flow may come before the slices it binds to.
#pragma once

#include <cstdint>
#include <string_view>

namespace cstool {

struct TimelineSlice {
  int64_t pid = 0;
  int64_t tid = 0;
  std::string_view name;
  int64_t start = 0;
  int64_t end = 0;
  // The switch-out that ends the slice, when one does: its cause label, and where it
  // was preempted when involuntary ("" when voluntary).
  bool switched_out = false;
  std::string_view cause;
  std::string_view preempted_at;
};

// A point event with one integer argument ("lost events", count).
struct TimelineInstant {
  int64_t pid = 0;
  int64_t tid = 0;
  std::string_view name;
  int64_t ts = 0;
  std::string_view arg_key;
  int64_t arg_value = 0;
};

// One end of a flow arrow: it binds to the slice enclosing ts on the track.
struct TimelineFlowEnd {
  int64_t pid = 0;
  int64_t tid = 0;
  int64_t ts = 0;
};

class TimelineSink {
 public:
  virtual ~TimelineSink() = default;
  // Names may be given again (a thread renamed by exec, a process by its leader).
  virtual void ProcessName(int64_t pid, std::string_view name) = 0;
  virtual void ProcessSortIndex(int64_t pid, int64_t index) = 0;
  virtual void ThreadName(int64_t pid, int64_t tid, std::string_view name) = 0;
  virtual void ThreadSortIndex(int64_t pid, int64_t tid, int64_t index) = 0;
  virtual void Slice(const TimelineSlice& s) = 0;
  virtual void Instant(const TimelineInstant& i) = 0;
  // A wakeup arrow; ids are unique.
  virtual void Flow(uint64_t id, const TimelineFlowEnd& from, const TimelineFlowEnd& to) = 0;
  // The tracefs clock the times are read on ("mono", "boot", ...), before any event;
  // unknown (not called) for files that do not say.
  virtual void TraceClock(std::string_view /*clock*/) {}
  // Writes what is held and ends the file; later calls are ignored.
  virtual void Close() = 0;
};

}  // namespace cstool
