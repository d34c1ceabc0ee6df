// Counts chosen trace events of one CPU live, straight from the session's ring buffer
// (per_cpu/cpuN/trace_pipe_raw), without writing them anywhere: `nmi-inject` uses it
// to measure the interrupt rate it really achieved.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "tracefs/tracefs_session.h"

struct kbuffer;

namespace cstool {

class TracePipeRaw;

class CpuEventCounter {
 public:
  // Opens the ring buffer of `cpu` in `session`. Throws cstool::Error.
  CpuEventCounter(const TracefsSession& session, int cpu);
  ~CpuEventCounter();
  CpuEventCounter(const CpuEventCounter&) = delete;
  CpuEventCounter& operator=(const CpuEventCounter&) = delete;

  // Counts records of `event` (one of the session's events); returns its index for
  // Poll's callback. With `field`, only records whose unsigned field equals `value`.
  int Watch(const EventName& event);
  int WatchWhere(const EventName& event, std::string_view field, uint64_t value);

  // Drains what the ring buffer holds now (or everything, with `flush` after tracing
  // stopped), calling `on_event(index, ts)` for every watched record.
  using Callback = std::function<void(int index, int64_t ts)>;
  void Poll(const Callback& on_event, bool flush = false);

  uint64_t lost_events() const { return lost_; }
  size_t page_size() const { return page_.size(); }  // the ring buffer's sub-buffer size

  // Hands every non-empty sub-buffer Poll reads to `sink` as it is, before counting it
  // (e.g. to keep them for a trace.dat file: nmi-inject --noise).
  using PageSink = std::function<void(std::string_view page)>;
  void SetPageSink(PageSink sink) { sink_ = std::move(sink); }

 private:
  struct Watched {
    int type = 0;
    int field_offset = -1;  // -1: no field condition
    int field_size = 0;
    uint64_t value = 0;
  };
  struct KbufferDeleter {
    void operator()(kbuffer* k) const;
  };
  void Count(int bytes, const Callback& on_event);

  const TracefsSession& session_;
  int cpu_;
  std::unique_ptr<TracePipeRaw> pipe_;
  std::unique_ptr<kbuffer, KbufferDeleter> kbuf_;
  std::vector<char> page_;
  std::vector<Watched> watched_;
  PageSink sink_;
  uint64_t lost_ = 0;
};

// The "ID:" of an event format, and a field's offset and size ("field:... name;").
// Exposed for tests; return -1 / false when absent.
int FormatEventId(std::string_view format);
bool FormatField(std::string_view format, std::string_view field, int* offset, int* size);

}  // namespace cstool
