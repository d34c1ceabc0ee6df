// Streaming writer of the Chrome/Perfetto trace-event JSON format ("JSON Object
// Format": {"traceEvents": [...]}), as ui.perfetto.dev and chrome://tracing open it.
// Events go to the stream as they are written (through a small buffer); nothing is
// kept per event. Times are nanoseconds in, microseconds with ns precision out.
//
// The output is compact because a timeline has about one record per traced event:
// only the keys the importers use ("ph", "name", "pid", "tid", "ts", "dur", "id",
// "bp", "s", "args"), no "cat", no empty "args", times without trailing zeros
// ("12.5", "7"). Threads and processes are named once, by 'M' metadata.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

namespace cstool {

// A JSON object's members, built one by one: {"cause":"sleep:read","count":3}.
class TraceEventArgs {
 public:
  TraceEventArgs& Add(std::string_view key, std::string_view value);
  TraceEventArgs& Add(std::string_view key, int64_t value);
  TraceEventArgs& Add(std::string_view key, bool value);
  // Without this, a string literal would pick the bool overload.
  TraceEventArgs& Add(std::string_view key, const char* value) {
    return Add(key, std::string_view(value));
  }
  bool empty() const { return body_.empty(); }
  const std::string& body() const { return body_; }  // members without the braces

 private:
  void Key(std::string_view key);
  std::string body_;
};

class TraceEventWriter {
 public:
  explicit TraceEventWriter(std::ostream& os);
  ~TraceEventWriter();
  TraceEventWriter(const TraceEventWriter&) = delete;
  TraceEventWriter& operator=(const TraceEventWriter&) = delete;

  // 'X': a slice [ts, ts + dur) on thread (pid, tid).
  void Complete(std::string_view name, int64_t pid, int64_t tid, int64_t ts, int64_t dur,
                const TraceEventArgs& args = {});
  // 'i' with thread scope.
  void Instant(std::string_view name, int64_t pid, int64_t tid, int64_t ts,
               const TraceEventArgs& args = {});
  // A flow arrow (v1 flow events, matched by id): 's' binds to the slice enclosing ts
  // on (pid, tid); 'f' with "bp":"e" to the slice enclosing its ts on the other track.
  // Both ends have no name and no category, which the importers then match on.
  void FlowStart(uint64_t id, int64_t pid, int64_t tid, int64_t ts);
  void FlowEnd(uint64_t id, int64_t pid, int64_t tid, int64_t ts);
  // 'M' metadata.
  void ProcessName(int64_t pid, std::string_view name);
  void ProcessSortIndex(int64_t pid, int64_t index);
  void ThreadName(int64_t pid, int64_t tid, std::string_view name);
  void ThreadSortIndex(int64_t pid, int64_t tid, int64_t index);

  // Ends the array and the object and flushes; later writes are ignored.
  void Close();
  uint64_t events() const { return events_; }

  // Appends s as a JSON string (quotes included). Bytes outside ASCII are written as
  // \u00XX so that any comm (not necessarily UTF-8) gives valid JSON.
  static void AppendJsonString(std::string& out, std::string_view s);
  // Appends ns as microseconds, exact, without trailing zeros: "1234.567", "1234.5",
  // "1234".
  static void AppendMicros(std::string& out, int64_t ns);

 private:
  void BeginEvent(char ph, int64_t pid, int64_t tid);
  void Name(std::string_view name);
  void EndEvent();
  void Metadata(std::string_view name, int64_t pid, int64_t tid, std::string_view arg_key,
                const std::string& arg_value_json);

  std::ostream& os_;
  std::string buf_;
  uint64_t events_ = 0;
  bool closed_ = false;
};

}  // namespace cstool
