#include "format/v7_trace_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <set>

#include "base/byte_cursor.h"
#include "base/errors.h"
#include "format/compression.h"
#include "format/trace_file_format.h"

namespace cstool {
namespace {

constexpr size_t kMaxNameLength = 4096;
constexpr uint16_t kSectionCompressed = 1;
// A chain of options sections longer than this can only be a loop in a damaged file.
constexpr size_t kMaxOptionsSections = 1024;
// Decompressed metadata larger than this can only come from damage.
constexpr uint32_t kMaxSectionBytes = 1u << 30;

// Section and option ids of v7 (trace-cmd's enum tracecmd_option_id).
constexpr uint16_t kSectionOptions = 0;
constexpr uint16_t kOptionHeaderInfo = 16;
constexpr uint16_t kOptionFtraceEvents = 17;
constexpr uint16_t kOptionEventFormats = 18;
constexpr uint16_t kOptionKallsyms = 19;
constexpr uint16_t kOptionCmdlines = 21;
constexpr uint16_t kOptionBufferText = 22;

}  // namespace

bool V7TraceFile::CanRead(std::string_view head) {
  const size_t m = tracefile::kTraceDatMagic.size();
  if (head.size() < m + 9 || head.substr(0, m) != tracefile::kTraceDatMagic) return false;
  if (head.substr(m, 2) != std::string_view("7\0", 2)) return false;
  const bool file_big = head[m + 2] != 0;
  if (file_big != (std::endian::native == std::endian::big)) return false;
  // endianness, long size, page size (4), then the compression name.
  const std::string_view rest = head.substr(m + 2 + 1 + 1 + 4);
  const size_t nul = rest.find('\0');
  if (nul == std::string_view::npos) return false;
  const std::string_view name = rest.substr(0, nul);
  return name == "none" || IsKnownCompression(name);
}

V7TraceFile::V7TraceFile(const std::string& path, const ReaderOptions& options)
    : FastTraceFile(path, options) {
  Parse(options);
  section_bodies_.clear();
  section_labels_.clear();
}

void V7TraceFile::Parse(const ReaderOptions& options) {
  ByteCursor in(file_.bytes(), path_);
  Sections sections;
  Layout layout;
  const uint64_t options_at = ReadHeader(in);
  ReadOptions(options_at, sections, layout);
  DropAbsentOwnBuffers(layout);
  ReadMetadata(layout, sections);
  ReadFlyrecord(layout, options);
  KeepCpuStats(sections);
  CheckParsed();
}

// Magic, version, sizes, the compression header and where the first options section
// lies; sets up the tep_handle.
uint64_t V7TraceFile::ReadHeader(ByteCursor& in) {
  ReadInitialFormat(in, "7");
  const size_t compression_at = in.pos();
  file_compression_ = std::string(in.CString(kMaxNameLength, "compression name"));
  in.CString(kMaxNameLength, "compression version");
  if (file_compression_ != "none" && !IsKnownCompression(file_compression_))
    in.Fail(compression_at, fmt::format("unknown compression \"{}\"", file_compression_));
  return in.U64("options offset");
}

ByteCursor V7TraceFile::OpenSection(uint64_t offset, uint16_t id, std::string_view what,
                                    std::vector<uint8_t>* storage) {
  ByteCursor in(file_.bytes(), path_);
  in.Seek(offset, fmt::format("{} section", what));
  const uint16_t got = in.U16("section id");
  if (got != id)
    in.Fail(offset, fmt::format("expected the {} section (id {}), found id {}", what, id, got));
  const uint16_t flags = in.U16("section flags");
  in.U32("section description");
  const uint64_t size = in.U64("section size");
  if ((flags & kSectionCompressed) == 0) {
    in.Need(size, what);
    return ByteCursor(file_.bytes().first(in.pos() + size), path_, in.pos(),
                      ByteCursor::Extent::kPart);
  }
  if (file_compression_ == "none")
    in.Fail(offset, fmt::format("{} section is flagged compressed in an uncompressed file", what));
  const size_t block_at = in.pos();
  const uint32_t zsize = in.U32("compressed size");
  const uint32_t usize = in.U32("uncompressed size");
  if (usize > kMaxSectionBytes)
    in.Fail(block_at, fmt::format("implausible uncompressed {} size {}", what, usize));
  std::string_view z = in.Bytes(zsize, what);
  decompressed_bytes_ += usize;
  if (decompressed_bytes_ > kMaxSectionBytes)
    in.Fail(block_at, fmt::format("the metadata sections decompress to more than {} bytes",
                                  kMaxSectionBytes));
  std::vector<uint8_t>& body = storage != nullptr ? *storage : section_bodies_.emplace_back();
  body.assign(usize, 0);
  MakeDecompressor(file_compression_)
      ->Decompress(
          {reinterpret_cast<const uint8_t*>(z.data()), z.size()}, body,
          fmt::format("{}: corrupt file at offset {} ({} section)", path_, block_at, what));
  // Offsets in errors are then within the decompressed section.
  const std::string& label = section_labels_.emplace_back(fmt::format(
      "{} ({} section at offset {}, {}-decompressed)", path_, what, offset, file_compression_));
  return ByteCursor(body, label, ByteCursor::Extent::kPart);
}

// Every options section of the chain: BUFFER, the metadata sections' offsets, and the
// options ReadCommonOption knows; the others are skipped.
void V7TraceFile::ReadOptions(uint64_t offset, Sections& sections, Layout& layout) {
  std::set<uint64_t> visited;
  std::vector<uint8_t> body_storage;  // what an option needs later is copied out of it
  while (offset != 0) {
    if (!visited.insert(offset).second || visited.size() > kMaxOptionsSections)
      throw Error(fmt::format("{}: corrupt file at offset {}: options sections form a loop", path_,
                              offset));
    ByteCursor in = OpenSection(offset, kSectionOptions, "options", &body_storage);
    ++layout.options_sections;
    offset = 0;
    for (;;) {
      const size_t option_at = in.pos();
      const uint16_t id = in.U16("option id");
      const uint32_t size = in.U32("option size");
      std::string_view body = in.Bytes(size, fmt::format("option {} at offset {}", id, option_at));
      ByteCursor opt({reinterpret_cast<const uint8_t*>(body.data()), body.size()}, path_,
                     ByteCursor::Extent::kPart);
      if (id == tracefile::kOptionDone) {  // its payload: the next options section
        if (size >= 8) offset = opt.U64("next options offset");
        break;
      }
      if (ReadCommonOption(id, body, option_at, in, sections)) continue;
      switch (id) {
        case tracefile::kOptionBuffer:
          ReadBufferOption(body, option_at, in, layout);
          break;
        case tracefile::kOptionCstoolBuffer:
          ReadOwnBufferOption(body, option_at, in, layout);
          break;
        case kOptionBufferText:
          layout.has_latency_buffer = true;
          break;
        case tracefile::kOptionCpuCount:
          if (size < 4) in.Fail(option_at, "CPU count option is too short");
          layout.cpu_count = opt.U32("CPU count");
          break;
        case kOptionHeaderInfo:
        case kOptionFtraceEvents:
        case kOptionEventFormats:
        case kOptionKallsyms:
        case kOptionCmdlines:
          if (size < 8) in.Fail(option_at, fmt::format("option {} is too short", id));
          layout.section_at[id] = opt.U64("section offset");
          break;
        default:
          break;  // printk formats, uname, version, date, ...
      }
    }
  }
}

size_t V7TraceFile::ReadBufferOption(std::string_view body, size_t option_at, const ByteCursor& in,
                                     Layout& layout) {
  ByteCursor opt({reinterpret_cast<const uint8_t*>(body.data()), body.size()}, path_,
                 ByteCursor::Extent::kPart);
  BufferOption b;
  std::vector<std::pair<uint32_t, CpuData>> entries;
  try {
    static_cast<BufferOptionHead&>(b) = ReadBufferOptionHead(opt, option_at);
    b.clock = std::string(opt.CString(kMaxNameLength, "buffer clock"));
    b.page_size = opt.U32("buffer page size");
    const uint32_t count = opt.U32("buffer CPU count");
    for (uint32_t i = 0; i < count; ++i) {
      const uint32_t cpu = opt.U32("CPU id");
      CpuData d;
      d.offset = opt.U64("CPU data offset");
      d.size = opt.U64("CPU data size");
      entries.emplace_back(cpu, d);
    }
  } catch (const Error&) {
    in.Fail(option_at, "malformed BUFFER option");
  }
  for (const auto& [cpu, d] : entries) {
    if (cpu >= kMaxCpus) in.Fail(option_at, fmt::format("implausible CPU number {}", cpu));
    if (!b.cpus.emplace(cpu, d).second)
      in.Fail(option_at, fmt::format("BUFFER option names CPU {} twice", cpu));
  }
  b.options_section = layout.options_sections - 1;
  layout.buffers.push_back(std::move(b));
  return opt.pos();
}

// cstool's writer puts its buffers' options in the options section of the trace's BUFFER
// option. One in another section was copied there by a tool that rewrote the file
// (`trace-cmd convert` copies the options it does not know into its first section, and
// writes only the buffers it knows, their options in a section of their own after the
// data): its offsets are the old file's, its data not in this one.
void V7TraceFile::DropAbsentOwnBuffers(Layout& layout) {
  const auto top = std::find_if(layout.buffers.begin(), layout.buffers.end(),
                                [](const BufferOption& b) { return b.name.empty(); });
  if (top == layout.buffers.end()) return;
  const int section = top->options_section;
  std::erase_if(layout.buffers, [&](const BufferOption& b) {
    if (!b.cstool_private || b.options_section == section) return false;
    absent_instance_names_.push_back(b.name);
    return true;
  });
}

// cstool's own buffer: a BUFFER option's payload and the layout version it was written
// for. One that does not parse as such is not this file's: ignored. One for another
// layout was copied by `trace-cmd convert` from a v6 file, without its data: absent.
void V7TraceFile::ReadOwnBufferOption(std::string_view body, size_t option_at, const ByteCursor& in,
                                      Layout& layout) {
  size_t read = 0;
  try {
    read = ReadBufferOption(body, option_at, in, layout);  // adds a buffer only when it parses
  } catch (const Error&) {
    // The v6 layout's option (its table's offset, its name, 6) is no v7 BUFFER payload.
    try {
      ByteCursor opt({reinterpret_cast<const uint8_t*>(body.data()), body.size()}, path_,
                     ByteCursor::Extent::kPart);
      const BufferOptionHead head = ReadBufferOptionHead(opt, option_at);
      if (opt.remaining() == 4 && opt.U32("layout version") == 6)
        absent_instance_names_.push_back(head.name);
    } catch (const Error&) {
    }
    return;
  }
  uint32_t version = 0;
  if (body.size() >= read + 4) std::memcpy(&version, body.data() + read, 4);
  if (version != 7) {
    absent_instance_names_.push_back(layout.buffers.back().name);
    layout.buffers.pop_back();
    return;
  }
  layout.buffers.back().cstool_private = true;
}

// Header page, event formats and kallsyms, wherever the options put them (printk
// formats are not needed; saved cmdlines are read when a thread no event named needs a
// name).
void V7TraceFile::ReadMetadata(const Layout& layout, Sections& sections) {
  auto at = [&](uint16_t id) -> const uint64_t* {
    auto it = layout.section_at.find(id);
    return it == layout.section_at.end() ? nullptr : &it->second;
  };
  const uint64_t* header = at(kOptionHeaderInfo);
  if (header == nullptr)
    throw Error(
        fmt::format("{}: corrupt file: no HEADER_INFO option (ring-buffer page layout)", path_));
  {
    ByteCursor in = OpenSection(*header, kOptionHeaderInfo, "header info");
    ReadHeaderInfo(in);
  }
  if (records_only_) return;  // the CPU data alone: formats and symbols not needed
  if (const uint64_t* p = at(kOptionFtraceEvents)) {
    ByteCursor in = OpenSection(*p, kOptionFtraceEvents, "ftrace events");
    ReadFtraceEventFormats(in, sections);
  }
  if (const uint64_t* p = at(kOptionEventFormats)) {
    ByteCursor in = OpenSection(*p, kOptionEventFormats, "event formats");
    ReadEventFormats(in, sections);
  }
  ParseFormats(sections);
  if (const uint64_t* p = at(kOptionKallsyms)) kallsyms_at_ = *p;
  if (const uint64_t* p = at(kOptionCmdlines)) cmdlines_at_ = *p;
}

// A section read only when needed, once; `read` gets its bytes. Damage there only loses
// what it holds (`lost` says what), so it is no error, but it is said.
void V7TraceFile::ReadDeferredSection(std::optional<uint64_t>& at, uint16_t id,
                                      std::string_view what, std::string_view lost,
                                      const std::function<void(ByteCursor&)>& read) {
  if (!at) return;
  const uint64_t offset = *at;
  at.reset();
  try {
    std::vector<uint8_t> storage;
    ByteCursor in = OpenSection(offset, id, what, &storage);
    read(in);
  } catch (const Error& e) {
    damaged_sections_.push_back(
        fmt::format("the file's {} section is damaged ({}): {}", what, e.what(), lost));
  }
}

// Names only threads no event named: a damaged section leaves them unnamed.
void V7TraceFile::ReadDeferredCmdlines() {
  ReadDeferredSection(cmdlines_at_, kOptionCmdlines, "saved cmdlines",
                      "threads no event named are shown without a name",
                      [this](ByteCursor& in) { KeepSavedCmdlines(in); });
}

// Symbols only name the addresses of kernel stacks (record --stacks): a damaged section
// leaves them as addresses (report shows "0x..." frames) instead of failing.
void V7TraceFile::ReadDeferredKallsyms() {
  ReadDeferredSection(kallsyms_at_, kOptionKallsyms, "kallsyms",
                      "kernel stacks show addresses instead of function names",
                      [this](ByteCursor& in) { ReadKallsyms(in); });
}

// The buffer asked for, else the top instance if it holds data, else the first other
// instance (trace-cmd extract -B stores instances beside an empty top). The CPU count is
// the file's (CPUCOUNT), as in libtracecmd, or more if the CPU table names a CPU beyond
// it: a table lists only the CPUs with data (trace-cmd record -F, -P).
void V7TraceFile::ReadFlyrecord(const Layout& layout, const ReaderOptions& options) {
  auto has_data = [](const BufferOption& b) {
    for (const auto& [cpu, d] : b.cpus)
      if (d.size > 0) return true;
    return false;
  };
  const BufferOption* top = nullptr;
  const BufferOption* first_instance = nullptr;
  const BufferOption* chosen = nullptr;
  for (const auto& b : layout.buffers) {
    if (!b.name.empty()) instance_names_.push_back(b.name);
    if (b.name.empty() && top == nullptr) top = &b;
    if (!b.name.empty() && !b.cstool_private && first_instance == nullptr) first_instance = &b;
    if (!options.buffer.empty() && b.name == options.buffer) chosen = &b;
  }
  if (!options.buffer.empty() && chosen == nullptr) ThrowNoBuffer(options.buffer);
  if (chosen == nullptr) chosen = (top != nullptr && has_data(*top)) ? top : first_instance;
  if (chosen == nullptr) chosen = top;
  if (chosen == nullptr) {
    if (layout.has_latency_buffer)
      throw Error(fmt::format("{}: latency-format trace holds no raw events", path_));
    throw Error(fmt::format("{}: corrupt file: no BUFFER option (no trace data)", path_));
  }
  // The clock: the TRACECLOCK option's, else the top instance's.
  if (trace_clock_.empty() && top != nullptr) trace_clock_ = ParseTraceClock(top->clock);

  const std::string label = chosen->name.empty() ? "" : fmt::format("buffer \"{}\" ", chosen->name);
  if (chosen->page_size != 0 && chosen->page_size != page_size_)
    throw FastPathUnsupported(
        fmt::format("{}: corrupt file at offset {}: {}page size {} differs from the file's {}",
                    path_, chosen->option_at, label, chosen->page_size, page_size_));
  ByteCursor in(file_.bytes(), path_);
  in.Seek(chosen->offset, label + "flyrecord section");
  const uint16_t id = in.U16("section id");
  const uint16_t expected =
      chosen->cstool_private ? tracefile::kOptionCstoolBuffer : tracefile::kOptionBuffer;
  if (id != expected)
    in.Fail(chosen->offset, fmt::format("expected the {}flyrecord section (id {}), found id {}",
                                        label, expected, id));
  const uint16_t flags = in.U16("section flags");
  if ((flags & kSectionCompressed) != 0) {
    if (file_compression_ == "none")
      in.Fail(chosen->offset, "flyrecord section is flagged compressed in an uncompressed file");
    data_compression_ = file_compression_;
  }

  const uint32_t cpus =
      std::max(layout.cpu_count, chosen->cpus.empty() ? 0 : chosen->cpus.rbegin()->first + 1);
  SetCpus(cpus, in, chosen->option_at);
  cpu_data_.assign(cpus, CpuData{});
  for (const auto& [cpu, d] : chosen->cpus) {
    CpuData& out = cpu_data_[cpu];
    out = d;
    if (data_compression_.empty()) {
      CheckPagesInPlace(out, cpu, label, in, chosen->option_at);
      continue;
    }
    // Chunks are bounded by the file's end as they are read (their table says how long
    // they are).
    if (d.size > 0 && d.offset > file_.size()) {
      if (!salvage_)
        throw DamagedDataError(
            fmt::format("{}: truncated at offset {} ({}CPU {} data at offset {})", path_,
                        file_.size(), label, cpu, d.offset));
      salvage_log_.AddCut(
          cpu, fmt::format("{}: truncated at offset {} ({}CPU {} data at offset {}); CPU {} "
                           "not read",
                           path_, file_.size(), label, cpu, d.offset, cpu));
      out.size = 0;
    }
  }
  buffer_name_ = chosen->name;
}

}  // namespace cstool
