#include "format/v6_trace_file.h"

#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/byte_cursor.h"
#include "base/errors.h"
#include "base/isolated_call.h"
#include "base/library_leaks.h"
#include "format/ring_page.h"
#include "format/trace_file_format.h"

namespace cstool {
namespace {

// Sanity limits: larger values can only come from a corrupt file.
constexpr uint32_t kMaxFormats = 1u << 20;
constexpr uint32_t kMaxCpus = 1u << 16;
constexpr size_t kMaxNameLength = 4096;
constexpr uint32_t kBatchBytes = 16 * 1024;
constexpr uint64_t kReleaseBytes = uint64_t{1} << 20;  // release consumed data in 1 MiB steps

void RegisterCmdlines(tep_handle* tep, std::string_view text) {
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    int pid = 0;
    auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), pid);
    if (ec != std::errc{} || p == line.data() + line.size() || *p != ' ') continue;
    std::string comm(p + 1, line.data() + line.size());
    tep_register_comm(tep, comm.c_str(), pid);
  }
}

// libtraceevent's format parser is not hardened against damaged text (it can crash),
// so format texts are checked first: printable ASCII, the expected section lines, and
// balanced brackets and quotes. Returns the index of the first bad byte and why.
std::optional<std::pair<size_t, std::string>> CheckFormatText(std::string_view text,
                                                              bool event_format) {
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char ch = static_cast<unsigned char>(text[i]);
    if (!(ch == '\n' || ch == '\t' || (ch >= 0x20 && ch < 0x7f)))
      return std::make_pair(i, fmt::format("byte 0x{:02x} in a format text", ch));
  }
  if (!event_format) return std::nullopt;
  if (!text.starts_with("name: ")) return std::make_pair(size_t{0}, std::string("no \"name:\""));
  for (std::string_view key : {"\nID: ", "\nformat:\n", "\nprint fmt: "})
    if (text.find(key) == std::string_view::npos)
      return std::make_pair(size_t{0},
                            fmt::format("no \"{}\" line", key.substr(1, key.size() - 2)));
  std::string stack;
  bool in_string = false, in_char = false;
  for (size_t i = text.find("\nprint fmt: "); i < text.size(); ++i) {
    const char ch = text[i];
    if (in_string || in_char) {
      if (ch == '\\') {
        ++i;
      } else if ((in_string && ch == '"') || (in_char && ch == '\'')) {
        in_string = in_char = false;
      }
      continue;
    }
    switch (ch) {
      case '"':
        in_string = true;
        break;
      case '\'':
        in_char = true;
        break;
      case '(':
        stack.push_back(')');
        break;
      case '[':
        stack.push_back(']');
        break;
      case '{':
        stack.push_back('}');
        break;
      case ')':
      case ']':
      case '}':
        if (stack.empty() || stack.back() != ch)
          return std::make_pair(i, std::string("unbalanced brackets in print fmt"));
        stack.pop_back();
        break;
      default:
        break;
    }
  }
  if (in_string || in_char || !stack.empty())
    return std::make_pair(text.size(), std::string("unterminated print fmt"));
  return std::nullopt;
}

struct EventFormatText {
  std::string_view text;
  std::string system;
  size_t offset;  // in the file
};

// libtraceevent's format parser can crash on a damaged format (a NULL dereference in
// libtraceevent 1.7, found by the fuzzer) that still passes CheckFormatText. So the
// formats are parsed once in a throw-away child first; a crash there names the format
// and its offset instead of killing cstool. Then they are parsed here for real
// (failures of tep_parse_event itself only make that event unusable).
void ParseEventFormats(tep_handle* tep, const std::vector<EventFormatText>& formats,
                       const std::string& path) {
  // Shared with the child: the index of the format it is parsing.
  void* shared =
      ::mmap(nullptr, sizeof(uint32_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) throw Error(fmt::format("mmap: {}", std::strerror(errno)));
  auto* current = static_cast<volatile uint32_t*>(shared);
  *current = 0;
  std::optional<std::string> crash = CrashOfIsolatedCall([&] {
    TepHandlePtr trial(tep_alloc());
    if (!trial) return;
    tep_set_file_bigendian(trial.get(),
                           tep_is_file_bigendian(tep) ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
    tep_set_long_size(trial.get(), tep_get_long_size(tep));
    for (uint32_t i = 0; i < formats.size(); ++i) {
      *current = i;
      const EventFormatText& f = formats[i];
      tep_parse_event(trial.get(), f.text.data(), f.text.size(), f.system.c_str());
    }
  });
  const uint32_t at = *current;
  ::munmap(shared, sizeof(uint32_t));
  if (crash && at < formats.size())
    throw Error(fmt::format("{}: damaged {} event format at offset {}: libtraceevent's parser {}",
                            path, formats[at].system, formats[at].offset, *crash));
  LibraryLeaksIgnored known_leaks;
  for (const EventFormatText& f : formats)
    tep_parse_event(tep, f.text.data(), f.text.size(), f.system.c_str());
}

// Combines two loss counts (-1 = unknown).
int64_t AddLost(int64_t a, int64_t b) {
  if (a < 0 || b < 0) return -1;
  return a + b;
}

class V6CpuStream final : public CpuRecordStream {
 public:
  // `salvage` (nullable): log corrupt pages there and skip them instead of throwing.
  V6CpuStream(const MappedFile& mapped, uint64_t offset, uint64_t size, int cpu, int long_size,
              uint32_t page_size, const std::string& path, SalvageLog* salvage)
      : mapped_(mapped),
        file_(mapped.data()),
        offset_(offset),
        released_(offset),
        end_(offset + size),
        cpu_(cpu),
        pages_(long_size, page_size, path),
        salvage_(salvage),
        pages_per_batch_(std::clamp<uint32_t>(kBatchBytes / page_size, 1, 4)) {}

  int cpu() const override { return cpu_; }

  std::span<const RawRecord> NextBatch() override {
    // The previous batch is no longer referenced: let its pages leave memory, so that
    // reading a large file needs memory bounded by the batch, not by the file.
    ReleaseConsumed();
    const uint32_t page_size = pages_.page_size();
    // Records are read once, so every line is a cache miss, and the hardware prefetcher
    // stops at 4 KiB boundaries: ask now for the pages of the next batch, which then
    // arrive while this batch's records are merged and analysed.
    {
      const uint64_t span = uint64_t{pages_per_batch_} * page_size;
      const uint64_t ahead = offset_ + span;
      const uint64_t ahead_end = std::min(end_, ahead + span);
      for (uint64_t line = ahead; line < ahead_end; line += 64) __builtin_prefetch(file_ + line);
    }
    size_t n = 0;
    // Whole pages until the batch holds records: pages without any (empty, or skipped
    // by --salvage) must not end the stream, since an empty batch means "no more".
    for (uint32_t pages = 0; offset_ < end_ && (n == 0 || pages < pages_per_batch_); ++pages) {
      if (n == 0) ReleaseConsumed();  // also inside a long run of empty pages
      RawRecord* out = Buffer();
      const uint64_t page_offset = offset_;
      offset_ += page_size;
      int64_t lost = 0;
      uint32_t got = 0;
      try {
        got = pages_.Decode(file_ + page_offset, page_offset, cpu_, out + n, &lost);
      } catch (const Error& e) {
        if (salvage_ == nullptr) throw;
        // The page's events are gone: a gap of unknown size, like a ring-buffer loss.
        salvage_->Add(fmt::format("{}; page skipped, counted as lost events", e.what()));
        lost = -1;
        got = 0;
      }
      if (lost != 0) pending_lost_ = pending_lost_ == 0 ? lost : AddLost(pending_lost_, lost);
      if (got == 0) continue;
      if (pending_lost_ != 0) {  // rare: shift the page's records to put the marker first
        std::memmove(out + n + 1, out + n, got * sizeof(RawRecord));
        out[n] = RawRecord{out[n + 1].ts, nullptr, 0, cpu_, pending_lost_};
        pending_lost_ = 0;
        ++n;
      }
      n += got;
      last_ts_ = out[n - 1].ts;
    }
    if (n == 0 && pending_lost_ != 0) {  // losses after the last record
      Buffer()[0] = RawRecord{last_ts_, nullptr, 0, cpu_, pending_lost_};
      pending_lost_ = 0;
      n = 1;
    }
    return {buf_.get(), n};
  }

 private:
  const MappedFile& mapped_;
  const uint8_t* file_;
  uint64_t offset_;
  uint64_t released_;  // pages before this offset were handed back to the kernel
  uint64_t end_;
  int cpu_;
  RingPageDecoder pages_;
  SalvageLog* salvage_;
  int64_t pending_lost_ = 0;
  int64_t last_ts_ = 0;
  // About 16 KiB of pages per batch (four 4 KiB pages; one for larger pages), so the
  // records buffer stays small whatever page size a (possibly damaged) file claims.
  uint32_t pages_per_batch_;
  std::unique_ptr<RawRecord[]> buf_;  // allocated when the first page is decoded

  // Hands the pages read so far back to the kernel, in kReleaseBytes steps.
  void ReleaseConsumed() {
    if (offset_ - released_ < kReleaseBytes) return;
    mapped_.Release(released_, offset_ - released_);
    released_ = offset_;
  }

  // Room for pages_per_batch_ pages of records plus one loss marker per page.
  RawRecord* Buffer() {
    if (!buf_)
      buf_ = std::make_unique_for_overwrite<RawRecord[]>(
          size_t{pages_per_batch_} * (pages_.max_records() + 1) + 1);
    return buf_.get();
  }
};

}  // namespace

bool V6TraceFile::CanRead(std::string_view head) {
  if (head.size() < tracefile::kTraceDatMagic.size() + 3) return false;
  if (head.substr(0, tracefile::kTraceDatMagic.size()) != tracefile::kTraceDatMagic) return false;
  if (head.substr(tracefile::kTraceDatMagic.size(), 2) != std::string_view("6\0", 2)) return false;
  const bool file_big = head[tracefile::kTraceDatMagic.size() + 2] != 0;
  return file_big == (std::endian::native == std::endian::big);
}

V6TraceFile::V6TraceFile(const std::string& path, const ReaderOptions& options)
    : file_(path), tep_(tep_alloc()) {
  path_ = path;
  salvage_ = options.salvage;
  if (!tep_) throw Error(fmt::format("{}: out of memory allocating a tep_handle", path));
  Parse(options);
}

// What a section of the file tells a later one.
struct V6TraceFile::Sections {
  std::vector<EventFormatText> formats;  // ftrace and event formats, parsed together
  uint32_t cpus = 0;
  struct BufferOption {
    std::string name;
    uint64_t offset = 0;
    size_t option_at = 0;
  };
  std::vector<BufferOption> buffers;  // BUFFER options: instances' data tables
  std::map<std::string, std::map<int32_t, CpuStatOption>> stats_by_buffer;
  std::string stats_buffer;  // CPUSTAT options follow a "Buffer: NAME" marker per instance
};

void V6TraceFile::Parse(const ReaderOptions& options) {
  ByteCursor in(file_.bytes(), path_);
  Sections sections;
  ReadInitialFormat(in);
  ReadHeaderInfo(in);
  ReadFtraceEventFormats(in, sections);
  ReadEventFormats(in, sections);
  ParseEventFormats(tep_.get(), sections.formats, path_);
  ReadKallsyms(in);
  ReadPrintkFormats(in);
  ReadProcessInfo(in);
  ReadCpuCount(in, sections);

  size_t section_at = in.pos();
  std::string_view section = in.Bytes(10, "section marker");
  if (section == std::string_view("options  \0", 10)) {
    ReadOptions(in, sections);
    section_at = in.pos();
    section = in.Bytes(10, "section marker");
  }
  if (section == std::string_view("latency  \0", 10))
    throw Error(
        fmt::format("{}: latency-format trace (offset {}) holds no raw events", path_, section_at));
  if (section != std::string_view("flyrecord\0", 10))
    in.Fail(section_at, "expected \"flyrecord\" section");
  ReadFlyrecord(in, sections, options);
}

// Magic, version, endianness, long size and page size; sets up the tep_handle for them.
void V6TraceFile::ReadInitialFormat(ByteCursor& in) {
  if (in.remaining() < tracefile::kTraceDatMagic.size() ||
      in.Bytes(tracefile::kTraceDatMagic.size(), "magic") != tracefile::kTraceDatMagic)
    throw Error(fmt::format("{}: not a trace.dat file (bad magic at offset 0)", path_));
  const size_t version_at = in.pos();
  std::string_view version = in.CString(16, "version string");
  if (version != "6")
    throw Error(
        fmt::format("{}: file version \"{}\" at offset {} is not v6", path_, version, version_at));
  file_version_ = 6;
  const size_t endian_at = in.pos();
  big_endian_ = in.U8("endianness") != 0;
  if (big_endian_ != (std::endian::native == std::endian::big))
    throw Error(
        fmt::format("{}: byte order at offset {} differs from the host's", path_, endian_at));
  const size_t long_at = in.pos();
  long_size_ = in.U8("long size");
  if (long_size_ != 4 && long_size_ != 8)
    in.Fail(long_at, fmt::format("long size {} is neither 4 nor 8", long_size_));
  const size_t page_at = in.pos();
  page_size_ = in.U32("page size");
  if (page_size_ < 256 || page_size_ > (1u << 24) || (page_size_ & (page_size_ - 1)) != 0)
    in.Fail(page_at, fmt::format("implausible page size {}", page_size_));

  tep_handle* tep = tep_.get();
  tep_set_file_bigendian(tep, big_endian_ ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
  tep_set_local_bigendian(
      tep, std::endian::native == std::endian::big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
  tep_set_long_size(tep, long_size_);
  tep_set_page_size(tep, static_cast<int>(page_size_));
}

// header_page (the ring-buffer page header, parsed) and header_event (skipped).
void V6TraceFile::ReadHeaderInfo(ByteCursor& in) {
  in.Expect(std::string_view("header_page\0", 12), "header_page");
  const uint64_t header_page_size = in.U64("header_page size");
  std::string header_page(in.Bytes(header_page_size, "header_page"));
  if (auto bad = CheckFormatText(header_page, false))
    in.Fail(in.pos() - header_page_size + bad->first, "header_page: " + bad->second);
  if (tep_parse_header_page(tep_.get(), header_page.data(), header_page.size(), long_size_) != 0)
    in.Fail(in.pos() - header_page_size, "cannot parse header_page");
  in.Expect(std::string_view("header_event\0", 13), "header_event");
  const uint64_t header_event_size = in.U64("header_event size");
  in.Bytes(header_event_size, "header_event");
}

// `count` format texts of `system`, each checked and kept for parsing; the labels name
// its size field and its text in errors.
void V6TraceFile::ReadFormatTexts(ByteCursor& in, uint32_t count, const std::string& system,
                                  std::string_view size_label, std::string_view text_label,
                                  Sections& sections) {
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t size = in.U64(size_label);
    std::string_view text = in.Bytes(size, text_label);
    if (auto bad = CheckFormatText(text, true))
      in.Fail(in.pos() - size + bad->first,
              fmt::format("{} event format: {}", system, bad->second));
    sections.formats.push_back({text, system, in.pos() - size});
  }
}

// The ftrace plugins' event formats (checked here, parsed with the other formats).
void V6TraceFile::ReadFtraceEventFormats(ByteCursor& in, Sections& sections) {
  const size_t nr_ftrace_at = in.pos();
  const uint32_t nr_ftrace = in.U32("ftrace format count");
  if (nr_ftrace > kMaxFormats)
    in.Fail(nr_ftrace_at, fmt::format("implausible ftrace format count {}", nr_ftrace));
  ReadFormatTexts(in, nr_ftrace, "ftrace", "ftrace format size", "ftrace event format", sections);
}

// Every event system's event formats (checked here, parsed with the ftrace formats).
void V6TraceFile::ReadEventFormats(ByteCursor& in, Sections& sections) {
  const size_t nr_systems_at = in.pos();
  const uint32_t nr_systems = in.U32("event system count");
  if (nr_systems > kMaxFormats)
    in.Fail(nr_systems_at, fmt::format("implausible event system count {}", nr_systems));
  for (uint32_t s = 0; s < nr_systems; ++s) {
    std::string system(in.CString(kMaxNameLength, "event system name"));
    const size_t count_at = in.pos();
    const uint32_t nr_events = in.U32("event count");
    if (nr_events > kMaxFormats)
      in.Fail(count_at, fmt::format("implausible event count {}", nr_events));
    ReadFormatTexts(in, nr_events, system, "event format size", "event format", sections);
  }
}

// /proc/kallsyms: not needed (skipped).
void V6TraceFile::ReadKallsyms(ByteCursor& in) { in.Bytes(in.U32("kallsyms size"), "kallsyms"); }

// printk_formats: not needed (skipped).
void V6TraceFile::ReadPrintkFormats(ByteCursor& in) {
  in.Bytes(in.U32("printk formats size"), "printk formats");
}

// saved_cmdlines: pid -> comm, registered with the tep_handle.
void V6TraceFile::ReadProcessInfo(ByteCursor& in) {
  const uint64_t cmdlines_size = in.U64("saved cmdlines size");
  RegisterCmdlines(tep_.get(), in.Bytes(cmdlines_size, "saved cmdlines"));
}

void V6TraceFile::ReadCpuCount(ByteCursor& in, Sections& sections) {
  const size_t cpus_at = in.pos();
  const uint32_t cpus = in.U32("CPU count");
  if (cpus > kMaxCpus) in.Fail(cpus_at, fmt::format("implausible CPU count {}", cpus));
  sections.cpus = cpus;
  cpus_ = static_cast<int>(cpus);
  tep_set_cpus(tep_.get(), cpus_);
}

// The options up to the DONE option: CPUSTAT, TRACECLOCK, BUFFER and cstool's
// recording info; the others are skipped.
void V6TraceFile::ReadOptions(ByteCursor& in, Sections& sections) {
  for (;;) {
    const size_t option_at = in.pos();
    const uint16_t id = in.U16("option id");
    if (id == tracefile::kOptionDone) break;
    const uint32_t size = in.U32("option size");
    std::string_view body = in.Bytes(size, fmt::format("option {} at offset {}", id, option_at));
    switch (id) {
      case tracefile::kOptionCpuStat: {
        std::string name;
        CpuStatOption stat;
        if (ParseCpuStatBufferMarker(body, &name)) {
          sections.stats_buffer = name;
        } else if (ParseCpuStat(body, &stat)) {
          sections.stats_by_buffer[sections.stats_buffer][stat.cpu] = stat;
        }
        break;
      }
      case tracefile::kOptionTraceClock:
        trace_clock_ = ParseTraceClock(body);
        break;
      case tracefile::kOptionBuffer: {
        ByteCursor opt({reinterpret_cast<const uint8_t*>(body.data()), body.size()}, path_);
        Sections::BufferOption b;
        b.option_at = option_at;
        try {
          b.offset = opt.U64("buffer offset");
          b.name = std::string(opt.CString(kMaxNameLength, "buffer name"));
        } catch (const Error&) {
          in.Fail(option_at, "malformed BUFFER option");
        }
        sections.buffers.push_back(std::move(b));
        break;
      }
      case tracefile::kOptionCstoolInfo: {
        std::string_view text = body;
        while (!text.empty() && text.back() == '\0') text.remove_suffix(1);
        nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
        if (j.is_discarded() || !j.is_object())
          in.Fail(option_at, "cstool recording info is not a JSON object");
        try {
          info_ = j.get<RecordingInfo>();
        } catch (const std::exception& e) {
          in.Fail(option_at, fmt::format("bad cstool recording info: {}", e.what()));
        }
        break;
      }
      default:
        break;  // options cstool does not need (uname, version, date, ...)
    }
  }
}

// One (offset, size) entry per CPU; with --salvage, data cut short by the end of the
// file is kept up to its last whole page.
std::vector<V6TraceFile::CpuData> V6TraceFile::ReadCpuTable(ByteCursor& c, uint32_t cpus,
                                                            const std::string& label,
                                                            bool salvage) {
  std::vector<CpuData> table(cpus);
  for (uint32_t cpu = 0; cpu < cpus; ++cpu) {
    const size_t entry_at = c.pos();
    table[cpu].offset = c.U64("CPU data offset");
    table[cpu].size = c.U64("CPU data size");
    CpuData& d = table[cpu];
    if (d.size == 0) continue;
    if (d.size % page_size_ != 0)
      c.Fail(entry_at, fmt::format("{}CPU {} data size {} is not a multiple of the page size {}",
                                   label, cpu, d.size, page_size_));
    if (d.offset > file_.size() || d.size > file_.size() - d.offset) {
      const std::string what = fmt::format(
          "{}: truncated at offset {} ({}CPU {} data: expected {} bytes at offset {}, file ends)",
          path_, file_.size(), label, cpu, d.size, d.offset);
      if (!salvage) throw Error(what);
      // Keep the whole pages that are there.
      const uint64_t have = d.offset < file_.size() ? file_.size() - d.offset : 0;
      const uint64_t keep = have / page_size_ * page_size_;
      salvage_log_.Add(fmt::format("{}; read CPU {} up to offset {} ({} of {} pages)", what, cpu,
                                   d.offset + keep, keep / page_size_, d.size / page_size_));
      d.size = keep;
    }
  }
  return table;
}

// The per-CPU data table of the top instance, or of a buffer instance: the one asked
// for, else the first when the top instance holds no data.
void V6TraceFile::ReadFlyrecord(ByteCursor& in, const Sections& sections,
                                const ReaderOptions& options) {
  std::vector<CpuData> top = ReadCpuTable(in, sections.cpus, "", options.salvage);

  const Sections::BufferOption* chosen = nullptr;
  if (!options.buffer.empty()) {
    for (const auto& b : sections.buffers)
      if (b.name == options.buffer) chosen = &b;
    if (chosen == nullptr)
      throw Error(fmt::format("{}: no buffer instance named \"{}\"", path_, options.buffer));
  }
  auto has_data = [](const std::vector<CpuData>& t) {
    for (const auto& d : t)
      if (d.size > 0) return true;
    return false;
  };
  cpu_data_ = top;
  if (chosen == nullptr && !has_data(top) && !sections.buffers.empty())
    chosen = &sections.buffers.front();
  if (chosen != nullptr) {
    ByteCursor c(file_.bytes(), path_);
    const std::string label = fmt::format("buffer \"{}\" ", chosen->name);
    c.Seek(chosen->offset, label + "data table");
    if (c.remaining() >= 10 && c.Bytes(10, "marker") != std::string_view("flyrecord\0", 10))
      c.Seek(chosen->offset, label + "data table");
    cpu_data_ = ReadCpuTable(c, sections.cpus, label, options.salvage);
    buffer_name_ = chosen->name;
  }
  if (auto it = sections.stats_by_buffer.find(buffer_name_); it != sections.stats_by_buffer.end())
    cpu_stats_ = it->second;
}

std::unique_ptr<CpuRecordStream> V6TraceFile::OpenCpu(int cpu) {
  if (cpu < 0 || cpu >= cpus_)
    throw Error(fmt::format("{}: no CPU {} in this file ({} CPUs)", path_, cpu, cpus_));
  const CpuData& d = cpu_data_[static_cast<size_t>(cpu)];
  return std::make_unique<V6CpuStream>(file_, d.offset, d.size, cpu, long_size_, page_size_, path_,
                                       salvage_ ? &salvage_log_ : nullptr);
}

}  // namespace cstool
