#include "format/v6_trace_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <utility>

#include "base/byte_cursor.h"
#include "base/errors.h"
#include "base/text_fields.h"
#include "format/trace_file_format.h"

namespace cstool {
bool V6TraceFile::CanRead(std::string_view head) {
  if (head.size() < tracefile::kTraceDatMagic.size() + 3) return false;
  if (head.substr(0, tracefile::kTraceDatMagic.size()) != tracefile::kTraceDatMagic) return false;
  if (head.substr(tracefile::kTraceDatMagic.size(), 2) != std::string_view("6\0", 2)) return false;
  const bool file_big = head[tracefile::kTraceDatMagic.size() + 2] != 0;
  return file_big == (std::endian::native == std::endian::big);
}

V6TraceFile::V6TraceFile(const std::string& path, const ReaderOptions& options)
    : FastTraceFile(path, options) {
  Parse(options);
}

void V6TraceFile::Parse(const ReaderOptions& options) {
  ByteCursor in(file_.bytes(), path_);
  Sections sections;
  std::vector<BufferOption> buffers;
  ReadInitialFormat(in, "6");
  ReadHeaderInfo(in);
  ReadFtraceEventFormats(in, sections);
  ReadEventFormats(in, sections);
  ParseFormats(sections);
  ReadKallsyms(in);
  ReadPrintkFormats(in);
  KeepSavedCmdlines(in);
  ReadCpuCount(in);

  size_t section_at = in.pos();
  std::string_view section = in.Bytes(10, "section marker");
  if (section == std::string_view("options  \0", 10)) {
    ReadOptions(in, sections, buffers);
    section_at = in.pos();
    section = in.Bytes(10, "section marker");
  }
  if (section == std::string_view("latency  \0", 10))
    throw Error(
        fmt::format("{}: latency-format trace (offset {}) holds no raw events", path_, section_at));
  if (section != std::string_view("flyrecord\0", 10))
    in.Fail(section_at, "expected \"flyrecord\" section");
  ReadFlyrecord(in, std::move(buffers), options);
  KeepCpuStats(sections);
  CheckParsed();
}

// printk_formats: not needed (skipped).
void V6TraceFile::ReadPrintkFormats(ByteCursor& in) {
  in.Bytes(in.U32("printk formats size"), "printk formats");
}

void V6TraceFile::ReadCpuCount(ByteCursor& in) {
  const size_t cpus_at = in.pos();
  SetCpus(in.U32("CPU count"), in, cpus_at);
}

// The options up to the DONE option: BUFFER and those ReadCommonOption knows; the others
// are skipped.
void V6TraceFile::ReadOptions(ByteCursor& in, Sections& sections,
                              std::vector<BufferOption>& buffers) {
  for (;;) {
    const size_t option_at = in.pos();
    const uint16_t id = in.U16("option id");
    if (id == tracefile::kOptionDone) break;
    const uint32_t size = in.U32("option size");
    std::string_view body = in.Bytes(size, fmt::format("option {} at offset {}", id, option_at));
    if (ReadCommonOption(id, body, option_at, in, sections)) continue;
    if (id != tracefile::kOptionBuffer && id != tracefile::kOptionCstoolBuffer)
      continue;  // uname, version, date, ...
    ByteCursor opt({reinterpret_cast<const uint8_t*>(body.data()), body.size()}, path_,
                   ByteCursor::Extent::kPart);
    const bool own = id == tracefile::kOptionCstoolBuffer;
    try {
      BufferOption b = ReadBufferOptionHead(opt, option_at);
      b.cstool_private = own;
      // cstool's own buffer, unless copied from a file of another layout: a tool that
      // rewrote the file (trace-cmd convert from v7) left its data out.
      if (own && (opt.remaining() < 4 || opt.U32("layout version") != 6)) {
        absent_instance_names_.push_back(b.name);
        continue;
      }
      buffers.push_back(std::move(b));
    } catch (const Error&) {
      if (!own) in.Fail(option_at, "malformed BUFFER option");
    }
  }
}

// One (offset, size) entry per CPU; with --salvage, data cut short by the end of the
// file is kept up to its last whole page.
std::vector<V6TraceFile::CpuData> V6TraceFile::ReadCpuTable(ByteCursor& c, const std::string& label,
                                                            uint64_t* data_end) {
  std::vector<CpuData> table(static_cast<size_t>(cpus_));
  for (size_t cpu = 0; cpu < table.size(); ++cpu) {
    const size_t entry_at = c.pos();
    table[cpu].offset = c.U64("CPU data offset");
    table[cpu].size = c.U64("CPU data size");
    if (data_end != nullptr && table[cpu].size > 0)
      *data_end = std::max(*data_end, table[cpu].offset + table[cpu].size);
    CheckPagesInPlace(table[cpu], cpu, label, c, entry_at);
  }
  return table;
}

// cstool's writer puts its buffers' pages, then their tables, after the trace's data. A
// file that ends exactly where the trace's data do holds none of them, while an option
// names one past the end: `trace-cmd convert` copies the options it does not know as they
// are and writes only the buffers it knows. (A copy cut right there holds none of them
// either.) Those buffers are absent, not damage: the trace is whole. A file that ends
// before the trace's data does is cut: damage, which the tables' reading says.
void V6TraceFile::DropAbsentOwnBuffers(uint64_t trace_data_end,
                                       std::vector<BufferOption>& buffers) {
  const uint64_t size = file_.size();
  if (size != trace_data_end) return;
  std::erase_if(buffers, [&](const BufferOption& b) {
    if (!b.cstool_private || b.offset < size) return false;
    absent_instance_names_.push_back(b.name);
    return true;
  });
}

// The per-CPU data table of the top instance, or of a buffer instance: the one asked
// for, else the first when the top instance holds no data.
void V6TraceFile::ReadFlyrecord(ByteCursor& in, std::vector<BufferOption> buffers,
                                const ReaderOptions& options) {
  uint64_t trace_data_end = 0;
  std::vector<CpuData> top = ReadCpuTable(in, "", &trace_data_end);
  DropAbsentOwnBuffers(trace_data_end, buffers);
  for (const auto& b : buffers) instance_names_.push_back(b.name);

  const BufferOption* chosen = nullptr;
  if (!options.buffer.empty()) {
    for (const auto& b : buffers)
      if (b.name == options.buffer) chosen = &b;
    if (chosen == nullptr) ThrowNoBuffer(options.buffer);
  }
  auto has_data = [](const std::vector<CpuData>& t) {
    for (const auto& d : t)
      if (d.size > 0) return true;
    return false;
  };
  cpu_data_ = top;
  if (chosen == nullptr && !has_data(top))
    for (const auto& b : buffers)
      if (!b.cstool_private && chosen == nullptr) chosen = &b;
  if (chosen != nullptr) {
    ByteCursor c(file_.bytes(), path_);
    const std::string label = fmt::format("buffer \"{}\" ", VisibleText(chosen->name));
    c.Seek(chosen->offset, label + "data table");
    if (c.remaining() >= 10 && c.Bytes(10, "marker") != std::string_view("flyrecord\0", 10))
      c.Seek(chosen->offset, label + "data table");
    cpu_data_ = ReadCpuTable(c, label);
    buffer_name_ = chosen->name;
  }
}

}  // namespace cstool
