#include "tests/support/synthetic_trace.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/errors.h"
#include "format/trace_file_format.h"

namespace cstool {
namespace {

constexpr uint32_t kHeaderSize = 16;  // u64 timestamp + 8-byte commit
constexpr uint32_t kMaxSmallData = 28 * 4;

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot read", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

template <typename T>
void Put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}
template <typename T>
void PutAt(std::vector<uint8_t>& buf, size_t at, T v) {
  std::memcpy(buf.data() + at, &v, sizeof(T));
}

}  // namespace

SyntheticTrace::SyntheticTrace(std::string events_dir, int cpus, uint32_t page_size)
    : events_dir_(std::move(events_dir)), cpus_(cpus), page_size_(page_size), tep_(tep_alloc()) {
  tep_set_long_size(tep_.get(), 8);
  tep_set_page_size(tep_.get(), static_cast<int>(page_size_));
  pages_.resize(static_cast<size_t>(cpus));
}

int SyntheticTrace::AddEvent(std::string_view system, std::string_view event) {
  return AddEventFormat(system,
                        ReadText(fmt::format("{}/{}/{}/format", events_dir_, system, event)));
}

int SyntheticTrace::AddEventFormat(std::string_view system, std::string format_text) {
  const std::string sys(system);
  tep_event* ev = nullptr;
  if (tep_parse_format(tep_.get(), &ev, format_text.data(), format_text.size(), sys.c_str()) != 0 ||
      ev == nullptr)
    throw Error(fmt::format("synthetic trace: cannot parse a {} format", sys));
  formats_[sys].push_back(std::move(format_text));
  return ev->id;
}

SyntheticTrace::Record SyntheticTrace::NewRecord(int type_id, int32_t pid, uint8_t flags,
                                                 uint8_t preempt_count) const {
  Record r;
  r.event_ = tep_find_event(tep_.get(), type_id);
  if (r.event_ == nullptr) throw Error(fmt::format("synthetic trace: no event id {}", type_id));
  size_t size = 0;
  for (tep_format_field* f = r.event_->format.common_fields; f; f = f->next)
    size = std::max(size, static_cast<size_t>(f->offset + f->size));
  for (tep_format_field* f = r.event_->format.fields; f; f = f->next)
    size = std::max(size, static_cast<size_t>(f->offset + f->size));
  r.bytes_.assign(size, 0);
  r.Set("common_type", type_id);
  r.Set("common_flags", flags);
  r.Set("common_preempt_count", preempt_count);
  r.Set("common_pid", pid);
  return r;
}

SyntheticTrace::Record& SyntheticTrace::Record::Set(std::string_view field, int64_t value) {
  const std::string name(field);
  tep_format_field* f = tep_find_any_field(event_, name.c_str());
  if (f == nullptr) throw Error(fmt::format("synthetic trace: no field {}", name));
  std::memcpy(bytes_.data() + f->offset, &value, static_cast<size_t>(std::min(f->size, 8)));
  return *this;
}

SyntheticTrace::Record& SyntheticTrace::Record::SetString(std::string_view field,
                                                          std::string_view value) {
  const std::string name(field);
  tep_format_field* f = tep_find_any_field(event_, name.c_str());
  if (f == nullptr) throw Error(fmt::format("synthetic trace: no field {}", name));
  if (f->flags & TEP_FIELD_IS_DYNAMIC) {
    const uint32_t off = static_cast<uint32_t>(bytes_.size());
    bytes_.insert(bytes_.end(), value.begin(), value.end());
    bytes_.push_back(0);
    uint32_t loc_off = off;
    if (f->flags & TEP_FIELD_IS_RELATIVE) loc_off -= static_cast<uint32_t>(f->offset + f->size);
    const uint32_t loc = (static_cast<uint32_t>(value.size() + 1) << 16) | loc_off;
    std::memcpy(bytes_.data() + f->offset, &loc, 4);
  } else {
    std::memset(bytes_.data() + f->offset, 0, static_cast<size_t>(f->size));
    std::memcpy(bytes_.data() + f->offset, value.data(),
                std::min(value.size(), static_cast<size_t>(f->size - 1)));
  }
  return *this;
}

void SyntheticTrace::StartPage(CpuPages& c, uint64_t ts) {
  c.page.assign(page_size_, 0);
  PutAt<uint64_t>(c.page, 0, ts);
  c.commit = 0;
  c.last_ts = ts;
  c.open = true;
}

void SyntheticTrace::FlushPage(CpuPages& c) const {
  if (!c.open) return;
  uint64_t commit = c.commit;
  if (c.lost_pending) {
    commit |= tracefile::kPageMissedEvents;
    if (c.pending_lost > 0 && c.commit + 8 <= page_size_ - kHeaderSize) {
      commit |= tracefile::kPageMissedStored;
      PutAt<uint64_t>(c.page, kHeaderSize + c.commit, static_cast<uint64_t>(c.pending_lost));
    }
    c.lost_pending = false;
    c.pending_lost = 0;
  }
  PutAt<uint64_t>(c.page, 8, commit);
  c.data.insert(c.data.end(), c.page.begin(), c.page.end());
  c.open = false;
}

void SyntheticTrace::MarkLost(int cpu, int64_t count) {
  CpuPages& c = pages_.at(static_cast<size_t>(cpu));
  FlushPage(c);
  c.lost_pending = true;
  c.pending_lost = count;
}

void SyntheticTrace::Append(int cpu, uint64_t ts, std::span<const uint8_t> payload) {
  CpuPages& c = pages_.at(static_cast<size_t>(cpu));
  const uint32_t len = static_cast<uint32_t>((payload.size() + 3) & ~size_t{3});
  const bool small = len <= kMaxSmallData && len > 0;
  const uint32_t need = len + (small ? 4 : 8);
  const uint32_t capacity = page_size_ - kHeaderSize - (c.lost_pending ? 8 : 0);
  if (need + 8 > capacity) throw Error("synthetic trace: record larger than a page");
  if (!c.open) StartPage(c, ts);
  uint64_t delta = ts >= c.last_ts ? ts - c.last_ts : 0;
  const uint32_t extend = delta >= (uint64_t{1} << tracefile::kRbTsShift) ? 8 : 0;
  if (c.commit + extend + need > capacity) {
    FlushPage(c);
    StartPage(c, ts);
    delta = 0;
  } else if (extend) {
    uint8_t* p = c.page.data() + kHeaderSize + c.commit;
    const uint32_t hdr =
        tracefile::kRbTypeTimeExtend | static_cast<uint32_t>((delta & ((1u << 27) - 1)) << 5);
    const uint32_t hi = static_cast<uint32_t>(delta >> tracefile::kRbTsShift);
    std::memcpy(p, &hdr, 4);
    std::memcpy(p + 4, &hi, 4);
    c.commit += 8;
    delta = 0;
  }
  uint8_t* p = c.page.data() + kHeaderSize + c.commit;
  const uint32_t hdr_delta = static_cast<uint32_t>(delta) << 5;
  if (small) {
    const uint32_t hdr = (len / 4) | hdr_delta;
    std::memcpy(p, &hdr, 4);
    std::memcpy(p + 4, payload.data(), payload.size());
  } else {
    const uint32_t hdr = hdr_delta;  // type_len 0: length in array[0]
    const uint32_t array0 = len + 4;
    std::memcpy(p, &hdr, 4);
    std::memcpy(p + 4, &array0, 4);
    std::memcpy(p + 8, payload.data(), payload.size());
  }
  c.commit += need;
  c.last_ts = ts;
  ++records_;
}

std::string SyntheticTrace::Serialize() const {
  // Flush copies of the open pages.
  std::vector<CpuPages> pages = pages_;
  for (auto& c : pages) FlushPage(c);

  std::string out;
  out.append(tracefile::kTraceDatMagic);
  out.append("6", 2);
  out.push_back(0);  // little endian
  out.push_back(8);  // long size
  Put<uint32_t>(out, page_size_);
  auto section = [&](std::string_view marker, const std::string& text) {
    out.append(marker);
    Put<uint64_t>(out, text.size());
    out.append(text);
  };
  section(std::string_view("header_page\0", 12), ReadText(events_dir_ + "/header_page"));
  section(std::string_view("header_event\0", 13), ReadText(events_dir_ + "/header_event"));
  Put<uint32_t>(out, 0);  // ftrace formats
  Put<uint32_t>(out, static_cast<uint32_t>(formats_.size()));
  for (const auto& [sys, texts] : formats_) {
    out.append(sys);
    out.push_back('\0');
    Put<uint32_t>(out, static_cast<uint32_t>(texts.size()));
    for (const auto& t : texts) {
      Put<uint64_t>(out, t.size());
      out.append(t);
    }
  }
  Put<uint32_t>(out, 0);  // kallsyms
  Put<uint32_t>(out, 0);  // printk formats
  std::string cmdlines;
  for (const auto& [pid, comm] : cmdlines_) cmdlines += fmt::format("{} {}\n", pid, comm);
  Put<uint64_t>(out, cmdlines.size());
  out.append(cmdlines);
  Put<uint32_t>(out, static_cast<uint32_t>(cpus_));
  out.append("options  \0", 10);
  auto option = [&](uint16_t id, const std::string& body) {
    Put<uint16_t>(out, id);
    Put<uint32_t>(out, static_cast<uint32_t>(body.size()));
    out.append(body);
  };
  option(tracefile::kOptionTraceClock, fmt::format("[{}] global\n", trace_clock_));
  for (const auto& [cpu, text] : cpustats_) option(tracefile::kOptionCpuStat, text);
  if (info_) option(tracefile::kOptionCstoolInfo, nlohmann::json(*info_).dump());
  Put<uint16_t>(out, tracefile::kOptionDone);
  out.append("flyrecord\0", 10);
  const size_t table_at = out.size();
  out.append(static_cast<size_t>(cpus_) * 16, '\0');
  out.resize((out.size() + page_size_ - 1) / page_size_ * page_size_, '\0');
  for (int cpu = 0; cpu < cpus_; ++cpu) {
    const auto& data = pages[static_cast<size_t>(cpu)].data;
    const uint64_t offset = data.empty() ? 0 : out.size();
    const uint64_t size = data.size();
    std::memcpy(out.data() + table_at + static_cast<size_t>(cpu) * 16, &offset, 8);
    std::memcpy(out.data() + table_at + static_cast<size_t>(cpu) * 16 + 8, &size, 8);
    out.append(reinterpret_cast<const char*>(data.data()), data.size());
  }
  return out;
}

void SyntheticTrace::Write(const std::string& path) const {
  const std::string image = Serialize();
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(image.data(), static_cast<std::streamsize>(image.size()));
  f.close();
  if (!f) throw Error(fmt::format("{}: cannot write", path));
}

bool ConvertToV7Zstd(const std::string& path, const std::string& v7_path) {
  const std::string convert = fmt::format(
      "trace-cmd convert -i '{}' -o '{}' --file-version 7 --compression zstd >/dev/null 2>&1", path,
      v7_path);
  if (std::system(convert.c_str()) == 0 && std::filesystem::exists(v7_path)) return true;
  std::error_code ec;
  std::filesystem::remove(v7_path, ec);
  return false;
}

}  // namespace cstool
