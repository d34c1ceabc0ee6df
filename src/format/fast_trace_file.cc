#include "format/fast_trace_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/byte_cursor.h"
#include "base/errors.h"
#include "base/isolated_call.h"
#include "base/library_leaks.h"
#include "base/text_fields.h"
#include "format/compression.h"
#include "format/page_stream.h"
#include "format/trace_file_format.h"

namespace cstool {
namespace {

// Sanity limits: larger values can only come from a corrupt file.
constexpr uint32_t kMaxFormats = 1u << 20;
constexpr size_t kMaxNameLength = 4096;
// The merge takes from every CPU's stream in turn, so what all CPUs hold at once should
// fit in the caches, and memory should not grow with the CPUs: a file of many CPUs is read
// in shorter runs and less far ahead. Measured on a synthetic 4M-event file of 64 CPUs,
// report -j 1: 256 KiB runs each took 12 % longer than 16 KiB ones, and 16 MiB more.
// On 2 CPUs too, 128 KiB runs each beat 256 KiB (a 4.3 M-event ping-pong, AMD VM, plain
// build, alternated medians of 15: -j 2 115.5 against 111.6 ms, -j 1 189.6 against 185.5).
constexpr uint64_t kReadRunBytes = 256 * 1024;
constexpr uint64_t kReadRunBytesAllCpus = 256 * 1024;
constexpr uint64_t kReadRunBytesMin = 16 * 1024;  // shorter: a syscall every few pages
// Compressed chunks are read this much at a time (ChunkPageSource), a CPU's share as for
// the runs above: trace-cmd's chunks are a few KiB each.
constexpr uint64_t kCompressedReadBytes = 128 * 1024;
constexpr uint64_t kCompressedReadBytesAllCpus = 1024 * 1024;
constexpr uint64_t kCompressedReadBytesMin = 16 * 1024;
// How far a prefetching reader decompresses each CPU ahead (report -j).
// A CPU's chunks are consumed in tens of microseconds each and decompressed faster:
// 256 KiB ahead took the same time as 1 MiB (report -j 2, 4.3M-event v7+zstd file), and
// the megabyte more made peak RSS depend on the file's size.
constexpr uint32_t kChunksAhead = 64;
constexpr uint64_t kChunkBytesAhead = 256 * 1024;
constexpr uint64_t kChunkBytesAheadAllCpus = 4 * 1024 * 1024;
constexpr uint64_t kChunkBytesAheadMin = 64 * 1024;

// A CPU's share of `all_cpus`, within [least, most].
uint64_t PerCpuShare(uint64_t all_cpus, int cpus, uint64_t least, uint64_t most) {
  return std::clamp<uint64_t>(all_cpus / static_cast<uint64_t>(std::max(cpus, 1)), least, most);
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

// The name and ID a format text starts with ("name: NAME\nID: N\n"), when both are
// plain: enough to register its event without its fields and print format.
struct FormatIdentity {
  std::string_view name;
  int id = 0;
};
std::optional<FormatIdentity> IdentityOf(std::string_view text) {
  constexpr std::string_view kName = "name: ", kId = "\nID: ";
  if (!text.starts_with(kName)) return std::nullopt;
  text.remove_prefix(kName.size());
  const size_t name_end = text.find('\n');
  if (name_end == 0 || name_end == std::string_view::npos) return std::nullopt;
  const std::string_view name = text.substr(0, name_end);
  if (!IsEventName(name)) return std::nullopt;
  text.remove_prefix(name_end);
  if (!text.starts_with(kId)) return std::nullopt;
  text.remove_prefix(kId.size());
  int id = -1;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, id);
  if (ec != std::errc{} || id < 0 || p == end || *p != '\n') return std::nullopt;
  return FormatIdentity{name, id};
}

// Parses `formats` in a throw-away child; throws, naming the format, if the parser
// crashed on one.
template <typename Format>
void TrialParse(tep_handle* tep, const std::vector<const Format*>& formats,
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
      const Format& f = *formats[i];
      tep_parse_event(trial.get(), f.text.data(), f.text.size(), f.system.c_str());
    }
  });
  const uint32_t at = *current;
  ::munmap(shared, sizeof(uint32_t));
  if (crash && at < formats.size())
    throw Error(fmt::format("{}: damaged {} event format at offset {}: libtraceevent's parser {}",
                            path, formats[at]->system, formats[at]->offset, *crash));
}

// libtraceevent's format parser can crash on a damaged format (a NULL dereference in
// libtraceevent 1.7, found by the fuzzer) that still passes CheckFormatText. So the
// formats are parsed once in a throw-away child first, in the same order; a crash there
// names the format and its offset instead of killing cstool. Then they are parsed here
// for real (failures of tep_parse_event itself only make that event unusable). When
// `trusts` vouches for every one (the running kernel's own text) in a file of this
// machine's byte order and word size, they are the texts libtraceevent parses whenever a
// tool records here, and no child is needed.
// With `decodes`, only the formats of the events it names are parsed so; the others are
// registered by name and ID alone (a text of ours, which cannot crash the parser). A
// file with none of those events has all its formats parsed whole: the common fields'
// layout is read from them.
template <typename Format>
void ParseEventFormats(tep_handle* tep, const std::vector<Format>& formats, const std::string& path,
                       const ReaderOptions::DecodesEvent& decodes,
                       const ReaderOptions::TrustsFormat& trusts) {
  std::vector<const Format*> whole;
  std::vector<std::pair<const Format*, std::string>> by_name;  // the format, its stand-in
  for (const Format& f : formats) {
    const std::optional<FormatIdentity> identity = decodes ? IdentityOf(f.text) : std::nullopt;
    if (!identity || decodes(f.system, identity->name)) {
      whole.push_back(&f);
    } else {  // no common fields, no fields (one blank line less marks the event failed)
      by_name.emplace_back(&f, fmt::format("name: {}\nID: {}\nformat:\n\n\nprint fmt: \"\"\n",
                                           identity->name, identity->id));
    }
  }
  if (whole.empty()) {
    for (const auto& [f, stand_in] : by_name) whole.push_back(f);
    by_name.clear();
  }
  for (const Format* f : whole)
    if (auto bad = CheckFormatText(f->text, true))
      ByteCursor({}, f->in).Fail(f->offset + bad->first,
                                 fmt::format("{} event format: {}", f->system, bad->second));
  const bool this_machines_layout =
      tep_is_file_bigendian(tep) == (std::endian::native == std::endian::big) &&
      tep_get_long_size(tep) == static_cast<int>(sizeof(long));
  // Asked in order until the first "no": then the child runs anyway.
  const bool all_trusted = trusts && this_machines_layout &&
                           std::all_of(whole.begin(), whole.end(), [&](const Format* f) {
                             const std::optional<FormatIdentity> identity = IdentityOf(f->text);
                             return identity && trusts(f->system, identity->name, f->text);
                           });
  if (!all_trusted) TrialParse(tep, whole, path);
  LibraryLeaksIgnored known_leaks;
  for (const Format* f : whole)
    tep_parse_event(tep, f->text.data(), f->text.size(), f->system.c_str());
  for (const auto& [f, stand_in] : by_name)
    tep_parse_event(tep, stand_in.data(), stand_in.size(), f->system.c_str());
}

}  // namespace

FastTraceFile::FastTraceFile(const std::string& path, const ReaderOptions& options)
    : file_(path),
      data_fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)),
      tep_(tep_alloc()),
      salvage_(options.salvage),
      jobs_(options.jobs),
      records_only_(options.records_only),
      decodes_event_(options.decodes_event),
      trusts_format_(options.trusts_format) {
  path_ = path;
  if (data_fd_.get() < 0)
    throw Error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  if (!tep_) throw Error(fmt::format("{}: out of memory allocating a tep_handle", path));
}

void FastTraceFile::ReadInitialFormat(ByteCursor& in, std::string_view version) {
  if (in.remaining() < tracefile::kTraceDatMagic.size() ||
      in.Bytes(tracefile::kTraceDatMagic.size(), "magic") != tracefile::kTraceDatMagic)
    throw Error(fmt::format("{}: not a trace.dat file (bad magic at offset 0)", path_));
  const size_t version_at = in.pos();
  const std::string_view got = in.CString(16, "version string");
  if (got != version)
    throw Error(fmt::format("{}: file version \"{}\" at offset {} is not v{}", path_, got,
                            version_at, version));
  file_version_ = version == "7" ? 7 : 6;
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

void FastTraceFile::ThrowNoBuffer(const std::string& name) const {
  const std::vector<std::string>& absent = absent_instance_names();
  if (std::find(absent.begin(), absent.end(), name) != absent.end())
    throw Error(
        fmt::format("{}: holds none of buffer \"{}\"'s data: its option was copied by a tool that "
                    "rewrote the file without it (trace-cmd convert does), or the file was cut "
                    "where the trace's data end",
                    path_, VisibleText(name)));
  TraceFileReader::ThrowNoBuffer(name);
}

FastTraceFile::BufferOptionHead FastTraceFile::ReadBufferOptionHead(ByteCursor& opt,
                                                                    size_t option_at) {
  BufferOptionHead b;
  b.option_at = option_at;
  b.offset = opt.U64("buffer offset");
  b.name = std::string(opt.CString(kMaxNameLength, "buffer name"));
  return b;
}

void FastTraceFile::ReadHeaderInfo(ByteCursor& in) {
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

// `count` format texts of `system`, kept for ParseFormats (which checks those it parses);
// the labels name its size field and its text in errors.
void FastTraceFile::ReadFormatTexts(ByteCursor& in, uint32_t count, const std::string& system,
                                    std::string_view size_label, std::string_view text_label,
                                    Sections& sections) {
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t size = in.U64(size_label);
    std::string_view text = in.Bytes(size, text_label);
    sections.formats.push_back({text, system, in.pos() - size, in.file()});
  }
}

void FastTraceFile::ReadFtraceEventFormats(ByteCursor& in, Sections& sections) {
  const size_t nr_ftrace_at = in.pos();
  const uint32_t nr_ftrace = in.U32("ftrace format count");
  if (nr_ftrace > kMaxFormats)
    in.Fail(nr_ftrace_at, fmt::format("implausible ftrace format count {}", nr_ftrace));
  ReadFormatTexts(in, nr_ftrace, "ftrace", "ftrace format size", "ftrace event format", sections);
}

void FastTraceFile::ReadEventFormats(ByteCursor& in, Sections& sections) {
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

void FastTraceFile::ParseFormats(const Sections& sections) {
  if (records_only_) return;
  ParseEventFormats(tep_.get(), sections.formats, path_, decodes_event_, trusts_format_);
}

void FastTraceFile::ReadKallsyms(ByteCursor& in) {
  const std::string_view text = in.Bytes(in.U32("kallsyms size"), "kallsyms");
  if (!records_only_) kallsyms_ = KeepText(text, kallsyms_storage_);
}

std::string_view FastTraceFile::KeepText(std::string_view text, std::string& storage) const {
  const auto at = reinterpret_cast<uintptr_t>(text.data());
  const auto file = reinterpret_cast<uintptr_t>(file_.data());
  if (at >= file && at - file <= file_.size() && text.size() <= file_.size() - (at - file))
    return text;
  storage = text;
  return storage;
}

// saved_cmdlines (pid -> comm as the kernel last saw it): kept as text for SavedComm,
// not registered with libtraceevent (some 4 000 lines took 0.7 ms of a small file's
// 23 ms report); a report's names come from the events but for threads none named.
void FastTraceFile::KeepSavedCmdlines(ByteCursor& in) {
  saved_cmdlines_ =
      KeepText(in.Bytes(in.U64("saved cmdlines size"), "saved cmdlines"), saved_cmdlines_storage_);
}

void FastTraceFile::PrepareSavedComms() {
  if (saved_comms_prepared_) return;
  ReadDeferredCmdlines();
  saved_comms_prepared_ = true;
}

// Neither a map of strings nor an index at once: a recording's thousands of lines (the
// kernel keeps 6 552 here) as one node and one string each took a sixth of a small
// file's report in allocations and page faults, and a report looks up a few pids, often
// one. Those are searched for in the text (some 70 k instructions on 100 KiB, against
// 2 M to index it); a report that looks up many gets an index of offsets.
std::string FastTraceFile::ScanSavedComm(int32_t pid) const {
  const std::string_view text = saved_cmdlines_;
  const std::string needle = fmt::format("\n{} ", pid);
  size_t at = 0;
  if (!text.starts_with(std::string_view(needle).substr(1))) {
    at = text.find(needle);
    if (at == std::string_view::npos) return {};
    ++at;  // the line's start
  }
  const size_t comm_at = at + needle.size() - 1;
  return std::string(text.substr(comm_at, text.find('\n', comm_at) - comm_at));
}

void FastTraceFile::IndexSavedComms() {
  saved_comms_indexed_ = true;
  const std::string_view text = saved_cmdlines_;
  size_t line_at = 0;
  while (line_at < text.size()) {
    const size_t end = std::min(text.find('\n', line_at), text.size());
    const std::string_view line = text.substr(line_at, end - line_at);
    const size_t this_line = line_at;
    line_at = end + 1;
    int32_t pid = 0;
    const auto [at, ec] = std::from_chars(line.data(), line.data() + line.size(), pid);
    if (ec != std::errc() || at == line.data() + line.size() || *at != ' ') continue;
    const size_t comm_at = this_line + static_cast<size_t>(at - line.data()) + 1;
    const size_t comm_size = std::min<size_t>(end - comm_at, UINT32_MAX);
    saved_comm_lines_.push_back({pid, static_cast<uint32_t>(comm_size), comm_at});
  }
  // A pid's first line counts: ties keep their place.
  std::stable_sort(saved_comm_lines_.begin(), saved_comm_lines_.end(),
                   [](const SavedCommLine& a, const SavedCommLine& b) { return a.pid < b.pid; });
}

std::string FastTraceFile::SavedComm(int32_t pid) {
  PrepareSavedComms();
  if (saved_comm_scans_ < kSavedCommScans) {
    ++saved_comm_scans_;
    return ScanSavedComm(pid);
  }
  if (!saved_comms_indexed_) IndexSavedComms();
  const auto it =
      std::lower_bound(saved_comm_lines_.begin(), saved_comm_lines_.end(), pid,
                       [](const SavedCommLine& line, int32_t p) { return line.pid < p; });
  if (it == saved_comm_lines_.end() || it->pid != pid) return {};
  return std::string(saved_cmdlines_.substr(it->at, it->size));
}

void FastTraceFile::LoadKernelSymbols() {
  ReadDeferredKallsyms();
  if (kallsyms_.empty()) return;
  // Lines libtraceevent cannot parse are skipped by it: symbols are a convenience.
  // (A copy only of text in the mapping, which no NUL ends.)
  if (kallsyms_storage_.data() != kallsyms_.data()) kallsyms_storage_ = kallsyms_;
  tep_parse_kallsyms(tep_.get(), kallsyms_storage_.c_str());
  kallsyms_ = {};
  kallsyms_storage_ = {};
}

void FastTraceFile::SetCpus(uint32_t cpus, const ByteCursor& in, size_t at) {
  if (cpus > kMaxCpus) in.Fail(at, fmt::format("implausible CPU count {}", cpus));
  cpus_ = static_cast<int>(cpus);
  tep_set_cpus(tep_.get(), cpus_);
}

bool FastTraceFile::ReadCommonOption(uint16_t id, std::string_view body, size_t option_at,
                                     const ByteCursor& in, Sections& sections) {
  switch (id) {
    case tracefile::kOptionCpuStat: {
      std::string name;
      CpuStatOption stat;
      if (ParseCpuStatBufferMarker(body, &name)) {
        sections.stats_buffer = name;
      } else if (ParseCpuStat(body, &stat)) {
        sections.stats_by_buffer[sections.stats_buffer][stat.cpu] = stat;
      }
      return true;
    }
    case tracefile::kOptionTraceClock:
      trace_clock_ = ParseTraceClock(body);
      return true;
    case tracefile::kOptionDate:
    case tracefile::kOptionOffset:
    case tracefile::kOptionTimeShift:
    case tracefile::kOptionTsc2Nsec:
      timestamp_option_ = id;
      return true;
    case tracefile::kOptionCstoolInfo: {
      if (records_only_) return true;
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
      return true;
    }
    default:
      return false;
  }
}

void FastTraceFile::CheckParsed() const {
  if (timestamp_option_ != 0)
    throw FastPathUnsupported(fmt::format(
        "{}: option {} shifts or converts the timestamps (trace-cmd record --date, --ts-offset, "
        "tsc2nsec or a guest's time sync), which only libtracecmd applies",
        path_, timestamp_option_));
  if (!data_compression_.empty()) return;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const CpuData& d : cpu_data_)
    if (d.size > 0) ranges.emplace_back(d.offset, d.offset + d.size);
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second)
      throw Error(fmt::format("{}: corrupt file: CPU data at offset {} overlaps another CPU's",
                              path_, ranges[i].first));
}

void FastTraceFile::CheckPagesInPlace(CpuData& d, size_t cpu, const std::string& label,
                                      const ByteCursor& in, size_t at) {
  if (d.size == 0) return;
  if (d.size % page_size_ != 0)
    in.Fail(at, fmt::format("{}CPU {} data size {} is not a multiple of the page size {}", label,
                            cpu, d.size, page_size_));
  if (d.offset <= file_.size() && d.size <= file_.size() - d.offset) return;
  const std::string what = fmt::format(
      "{}: truncated at offset {} ({}CPU {} data: expected {} bytes at offset {}, file ends)",
      path_, file_.size(), label, cpu, d.size, d.offset);
  if (!salvage_) throw DamagedDataError(what);
  // Keep the whole pages that are there.
  const uint64_t have = d.offset < file_.size() ? file_.size() - d.offset : 0;
  const uint64_t keep = have / page_size_ * page_size_;
  salvage_log_.AddCut(cpu,
                      fmt::format("{}; read CPU {} up to offset {} ({} of {} pages)", what, cpu,
                                  d.offset + keep, keep / page_size_, d.size / page_size_));
  d.size = keep;
}

void FastTraceFile::KeepCpuStats(const Sections& sections) {
  if (auto it = sections.stats_by_buffer.find(buffer_name_); it != sections.stats_by_buffer.end())
    cpu_stats_ = it->second;
}

std::string FastTraceFile::DataLabel() const {
  return buffer_name_.empty() ? path_
                              : fmt::format("{} (buffer {})", path_, VisibleText(buffer_name_));
}

void FastTraceFile::ReadAheadOnCallers() {
  read_ahead_on_callers_ = true;
  // Made now, on the thread that opens the streams: ReadAheadOnce may come from another.
  if (data_compressed() && !prefetcher_) prefetcher_ = std::make_unique<PagePrefetcher>(jobs_ - 1);
}

std::unique_ptr<CpuRecordStream> FastTraceFile::OpenCpuRecords(int cpu) {
  if (cpu < 0 || cpu >= cpus_)
    throw Error(fmt::format("{}: no CPU {} in this file ({} CPUs)", path_, cpu, cpus_));
  const CpuData& d = cpu_data_[static_cast<size_t>(cpu)];
  SalvageLog* salvage = salvage_ ? &salvage_log_ : nullptr;
  const uint32_t per_batch = PagesPerBatch(page_size_);
  // Compressed chunks: the caller's thread merges, decodes and analyses, the other jobs
  // decompress ahead. Pages in place are read by the thread that decodes them: the pread
  // leaves them in its caches, where a worker's pread handed them over cold (decode_bench,
  // read + merge + decode with one worker against none: 2 CPUs 46 -> 40 M events/s, 64
  // CPUs 12.3 -> 9.5). The workers start only now, when the file is parsed: the parse
  // forks (ParseEventFormats), and a child forked beside running threads can deadlock on
  // a lock one of them held.
  const bool in_place = data_compression_.empty() || d.size == 0;
  const bool prefetch = (jobs_ > 1 || read_ahead_on_callers_) && !in_place;
  if (prefetch && !prefetcher_) prefetcher_ = std::make_unique<PagePrefetcher>(jobs_ - 1);
  // With a prefetcher, the source's salvage notes go through a log of its own, so that
  // they reach the file's log in reading order, not when a worker met them.
  std::unique_ptr<SalvageLog> own_log =
      prefetch && salvage != nullptr ? std::make_unique<SalvageLog>() : nullptr;
  SalvageLog* source_log = own_log ? own_log.get() : salvage;
  std::unique_ptr<PageSource> source;
  // Pages in place are read with pread into a buffer of their own: walking them in the
  // mapping instead cost a third more time (page faults, page-table churn, releases).
  // A run holds whole pages, at least one whatever page size the file claims: the next
  // run starts where it ends, and a page cut in two would be lost to both.
  if (in_place) {
    const uint64_t share =
        PerCpuShare(kReadRunBytesAllCpus, cpus_, kReadRunBytesMin, kReadRunBytes);
    const uint64_t run_bytes = std::max<uint64_t>(share / page_size_ * page_size_, page_size_);
    source =
        std::make_unique<ReadPageSource>(data_fd_.get(), DataLabel(), d.offset, d.size, run_bytes);
  } else {
    auto chunks = std::make_unique<ChunkPageSource>(
        data_fd_.get(), file_.size(), DataLabel(), d.offset, page_size_, data_compression_, cpu,
        source_log, ChunkBudget{&chunk_bytes_held_, kMaxChunkBytesHeld},
        PerCpuShare(kCompressedReadBytesAllCpus, cpus_, kCompressedReadBytesMin,
                    kCompressedReadBytes));
    // trace-cmd's chunks are a page or a few: many of them make a queue worth a wake-up.
    const PagePrefetcher::Depth depth{
        kChunksAhead,
        PerCpuShare(kChunkBytesAheadAllCpus, cpus_, kChunkBytesAheadMin, kChunkBytesAhead)};
    if (prefetch)
      source = prefetcher_->Wrap(std::move(chunks), std::move(own_log), depth, salvage);
    else
      source = std::move(chunks);
  }
  auto stream = std::make_unique<PageRecordStream>(std::move(source), cpu, long_size_, page_size_,
                                                   per_batch, DataLabel(), salvage);
  // None of a damaged CPU's data could be read: everything it recorded is lost, which the
  // report shows as a loss from the start rather than as a CPU where nothing ran.
  const std::vector<int>& cut = salvage_log_.cut_cpus();
  if (salvage != nullptr && d.size == 0 && std::find(cut.begin(), cut.end(), cpu) != cut.end())
    stream->LoseTheStart();
  return stream;
}

}  // namespace cstool
