#include "tracefs/cpu_event_counter.h"

#include <fmt/core.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "base/errors.h"
#include "tracefs/trace_pipe_raw.h"
#include "tracefs/tracefs_api.h"

namespace cstool {
namespace {

int NumberAfter(std::string_view text, std::string_view key) {
  size_t pos = text.find(key);
  if (pos == std::string_view::npos) return -1;
  std::string_view rest = text.substr(pos + key.size());
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  int v = -1;
  auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
  return ec == std::errc() ? v : -1;
}

}  // namespace

int FormatEventId(std::string_view format) {
  size_t pos = format.find("\nID:");
  if (format.rfind("ID:", 0) == 0)
    pos = 0;
  else if (pos != std::string_view::npos)
    ++pos;
  else
    return -1;
  return NumberAfter(format.substr(pos), "ID:");
}

bool FormatField(std::string_view format, std::string_view field, int* offset, int* size) {
  size_t pos = 0;
  while ((pos = format.find("field:", pos)) != std::string_view::npos) {
    size_t semi = format.find(';', pos);
    if (semi == std::string_view::npos) return false;
    std::string_view decl = format.substr(pos, semi - pos);
    size_t end = format.find('\n', semi);
    std::string_view line = format.substr(pos, end == std::string_view::npos ? end : end - pos);
    pos = semi;
    // The name is the last identifier of the declaration ("void * function").
    size_t name_end = decl.size();
    if (!decl.empty() && decl.back() == ']') name_end = decl.rfind('[');
    size_t name_start = decl.find_last_of(" *", name_end - 1);
    std::string_view name = decl.substr(name_start + 1, name_end - name_start - 1);
    if (name != field) continue;
    *offset = NumberAfter(line, "offset:");
    *size = NumberAfter(line, "size:");
    return *offset >= 0 && *size > 0;
  }
  return false;
}

void CpuEventCounter::KbufferDeleter::operator()(kbuffer* k) const { kbuffer_free(k); }

CpuEventCounter::CpuEventCounter(const TracefsSession& session, int cpu)
    : session_(session), cpu_(cpu) {
  pipe_ = std::make_unique<TracePipeRaw>(session.instance(), cpu);
  page_.resize(pipe_->subbuf_size());
  kbuf_.reset(
      kbuffer_alloc(sizeof(long) == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4, KBUFFER_ENDIAN_LITTLE));
  if (!kbuf_) throw Error("out of memory (kbuffer)");
}

CpuEventCounter::~CpuEventCounter() = default;

int CpuEventCounter::Watch(const EventName& event) { return WatchWhere(event, {}, 0); }

int CpuEventCounter::WatchWhere(const EventName& event, std::string_view field, uint64_t value) {
  std::string format = session_.ReadEventFormat(event);
  Watched w;
  w.type = FormatEventId(format);
  if (w.type < 0) throw Error(fmt::format("no ID in the format of {}", event.Full()));
  if (!field.empty()) {
    if (!FormatField(format, field, &w.field_offset, &w.field_size) || w.field_size > 8)
      throw Error(fmt::format("event {} has no numeric field '{}'", event.Full(), field));
    w.value = value;
  }
  watched_.push_back(w);
  return static_cast<int>(watched_.size()) - 1;
}

void CpuEventCounter::Poll(const Callback& on_event, bool flush) {
  for (;;) {
    int n = flush ? tracefs_cpu_flush(pipe_->get(), page_.data())
                  : tracefs_cpu_read(pipe_->get(), page_.data(), /*nonblock=*/true);
    if (n <= 0) break;
    Count(n, on_event);
  }
}

void CpuEventCounter::Count(int bytes, const Callback& on_event) {
  if (static_cast<size_t>(bytes) < page_.size())
    std::memset(page_.data() + bytes, 0, page_.size() - static_cast<size_t>(bytes));
  if (sink_) {
    // The sub-buffer header: a u64 timestamp, then the commit (data size, flags above).
    uint64_t commit = 0;
    std::memcpy(&commit, page_.data() + 8, sizeof(long));
    if ((commit & ((uint64_t{1} << 30) - 1)) != 0)
      sink_(std::string_view(page_.data(), page_.size()));
  }
  if (kbuffer_load_subbuffer(kbuf_.get(), page_.data()) != 0) return;
  int missed = kbuffer_missed_events(kbuf_.get());
  if (missed > 0) lost_ += static_cast<uint64_t>(missed);
  unsigned long long ts = 0;
  for (void* rec = kbuffer_read_event(kbuf_.get(), &ts); rec;
       rec = kbuffer_next_event(kbuf_.get(), &ts)) {
    const auto* data = static_cast<const unsigned char*>(rec);
    int size = kbuffer_event_size(kbuf_.get());
    if (size < 2) continue;
    uint16_t type = 0;
    std::memcpy(&type, data, sizeof(type));
    for (size_t i = 0; i < watched_.size(); ++i) {
      const Watched& w = watched_[i];
      if (w.type != type) continue;
      if (w.field_offset >= 0) {
        if (w.field_offset + w.field_size > size) continue;
        uint64_t v = 0;
        std::memcpy(&v, data + w.field_offset, static_cast<size_t>(w.field_size));
        if (v != w.value) continue;
      }
      on_event(static_cast<int>(i), static_cast<int64_t>(ts));
    }
  }
}

}  // namespace cstool
