#include "format/trace_event_writer.h"

#include <fmt/format.h>

#include <string>

namespace cstool {

namespace {

// fmt::format_int is header-only: format_to() into a string needs an fmt template that
// clang and gcc mangle differently (fmt 9), so a clang build would not link against
// Debian's gcc-built libfmt.
template <typename Int>
void AppendInt(std::string& out, Int v) {
  const fmt::format_int f(v);
  out.append(f.data(), f.size());
}

constexpr size_t kFlushBytes = 1 << 16;

}  // namespace

void TraceEventArgs::Key(std::string_view key) {
  if (!body_.empty()) body_ += ',';
  TraceEventWriter::AppendJsonString(body_, key);
  body_ += ':';
}

TraceEventArgs& TraceEventArgs::Add(std::string_view key, std::string_view value) {
  Key(key);
  TraceEventWriter::AppendJsonString(body_, value);
  return *this;
}

TraceEventArgs& TraceEventArgs::Add(std::string_view key, int64_t value) {
  Key(key);
  AppendInt(body_, value);
  return *this;
}

TraceEventArgs& TraceEventArgs::Add(std::string_view key, bool value) {
  Key(key);
  body_ += value ? "true" : "false";
  return *this;
}

void TraceEventWriter::AppendJsonString(std::string& out, std::string_view s) {
  out += '"';
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c >= 0x7f) {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += ch;
    }
  }
  out += '"';
}

void TraceEventWriter::AppendMicros(std::string& out, int64_t ns) {
  if (ns < 0) {
    out += '-';
    ns = -ns;
  }
  AppendInt(out, ns / 1000);
  int frac = static_cast<int>(ns % 1000);
  if (frac == 0) return;
  out += '.';
  for (int digit = 100; frac != 0; digit /= 10) {
    out += static_cast<char>('0' + frac / digit);
    frac %= digit;
  }
}

TraceEventWriter::TraceEventWriter(std::ostream& os) : os_(os) {
  buf_.reserve(kFlushBytes + 4096);
  buf_ += "{\"traceEvents\":[\n";
}

TraceEventWriter::~TraceEventWriter() { Close(); }

void TraceEventWriter::Close() {
  if (closed_) return;
  closed_ = true;
  buf_ += "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"cstool\"}}\n";
  os_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
  os_.flush();
  buf_.clear();
}

void TraceEventWriter::BeginEvent(char ph, int64_t pid, int64_t tid) {
  if (events_ > 0) buf_ += ",\n";
  ++events_;
  buf_ += "{\"ph\":\"";
  buf_ += ph;
  buf_ += "\",\"pid\":";
  AppendInt(buf_, pid);
  buf_ += ",\"tid\":";
  AppendInt(buf_, tid);
}

void TraceEventWriter::Name(std::string_view name) {
  buf_ += ",\"name\":";
  AppendJsonString(buf_, name);
}

void TraceEventWriter::EndEvent() {
  buf_ += '}';
  if (buf_.size() >= kFlushBytes) {
    os_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }
}

void TraceEventWriter::Complete(std::string_view name, int64_t pid, int64_t tid, int64_t ts,
                                int64_t dur, const TraceEventArgs& args) {
  if (closed_) return;
  BeginEvent('X', pid, tid);
  Name(name);
  buf_ += ",\"ts\":";
  AppendMicros(buf_, ts);
  buf_ += ",\"dur\":";
  AppendMicros(buf_, dur);
  if (!args.empty()) buf_ += ",\"args\":{" + args.body() + "}";
  EndEvent();
}

void TraceEventWriter::Instant(std::string_view name, int64_t pid, int64_t tid, int64_t ts,
                               const TraceEventArgs& args) {
  if (closed_) return;
  BeginEvent('i', pid, tid);
  Name(name);
  buf_ += ",\"s\":\"t\",\"ts\":";
  AppendMicros(buf_, ts);
  if (!args.empty()) buf_ += ",\"args\":{" + args.body() + "}";
  EndEvent();
}

void TraceEventWriter::FlowStart(uint64_t id, int64_t pid, int64_t tid, int64_t ts) {
  if (closed_) return;
  BeginEvent('s', pid, tid);
  buf_ += ",\"id\":";
  AppendInt(buf_, id);
  buf_ += ",\"ts\":";
  AppendMicros(buf_, ts);
  EndEvent();
}

void TraceEventWriter::FlowEnd(uint64_t id, int64_t pid, int64_t tid, int64_t ts) {
  if (closed_) return;
  BeginEvent('f', pid, tid);
  buf_ += ",\"bp\":\"e\",\"id\":";
  AppendInt(buf_, id);
  buf_ += ",\"ts\":";
  AppendMicros(buf_, ts);
  EndEvent();
}

void TraceEventWriter::Metadata(std::string_view name, int64_t pid, int64_t tid,
                                std::string_view arg_key, const std::string& arg_value_json) {
  if (closed_) return;
  BeginEvent('M', pid, tid);
  Name(name);
  buf_ += ",\"args\":{";
  AppendJsonString(buf_, arg_key);
  buf_ += ':';
  buf_ += arg_value_json;
  buf_ += '}';
  EndEvent();
}

void TraceEventWriter::ProcessName(int64_t pid, std::string_view name) {
  std::string v;
  AppendJsonString(v, name);
  Metadata("process_name", pid, 0, "name", v);
}

void TraceEventWriter::ProcessSortIndex(int64_t pid, int64_t index) {
  Metadata("process_sort_index", pid, 0, "sort_index", std::to_string(index));
}

void TraceEventWriter::ThreadName(int64_t pid, int64_t tid, std::string_view name) {
  std::string v;
  AppendJsonString(v, name);
  Metadata("thread_name", pid, tid, "name", v);
}

void TraceEventWriter::ThreadSortIndex(int64_t pid, int64_t tid, int64_t index) {
  Metadata("thread_sort_index", pid, tid, "sort_index", std::to_string(index));
}

}  // namespace cstool
