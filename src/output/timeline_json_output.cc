// The timeline as Chrome/Perfetto trace-event JSON (format/trace_event_writer.h): one
// 'X' record per slice, 'i' per instant, an 's'/'f' pair per flow, 'M' for names.
#include "format/trace_event_writer.h"
#include "output/timeline_output.h"

namespace cstool {
namespace {

class JsonTimelineWriter : public TimelineSink {
 public:
  explicit JsonTimelineWriter(std::ostream& os) : writer_(os) {}

  void ProcessName(int64_t pid, std::string_view name) override { writer_.ProcessName(pid, name); }
  void ProcessSortIndex(int64_t pid, int64_t index) override {
    writer_.ProcessSortIndex(pid, index);
  }
  void ThreadName(int64_t pid, int64_t tid, std::string_view name) override {
    writer_.ThreadName(pid, tid, name);
  }
  void ThreadSortIndex(int64_t pid, int64_t tid, int64_t index) override {
    writer_.ThreadSortIndex(pid, tid, index);
  }
  void Slice(const TimelineSlice& s) override {
    TraceEventArgs args;
    if (s.switched_out) {
      args.Add("cause", s.cause);
      if (!s.preempted_at.empty()) args.Add("preempted_at", s.preempted_at);
    }
    writer_.Complete(s.name, s.pid, s.tid, s.start, s.end - s.start, args);
  }
  void Instant(const TimelineInstant& i) override {
    TraceEventArgs args;
    args.Add(i.arg_key, i.arg_value);
    writer_.Instant(i.name, i.pid, i.tid, i.ts, args);
  }
  void Flow(uint64_t id, const TimelineFlowEnd& from, const TimelineFlowEnd& to) override {
    writer_.FlowStart(id, from.pid, from.tid, from.ts);
    writer_.FlowEnd(id, to.pid, to.tid, to.ts);
  }
  void Close() override { writer_.Close(); }

 private:
  TraceEventWriter writer_;
};

}  // namespace

std::unique_ptr<TimelineSink> MakeJsonTimelineWriter(std::ostream& os) {
  return std::make_unique<JsonTimelineWriter>(os);
}

}  // namespace cstool
