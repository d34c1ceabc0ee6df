#include "format/trace_file_writer.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <string_view>

#include "base/errors.h"
#include "base/unique_fd.h"
#include "format/compression.h"
#include "format/trace_file_format.h"
#include "format/trace_file_reader.h"

namespace cstool {
namespace {

static_assert(std::endian::native == std::endian::little,
              "trace_file_writer writes host-endian numbers and flags little endian");

// Accumulates the file header in memory; it is small (formats, cmdlines, options).
class HeaderBuffer {
 public:
  void Bytes(std::string_view s) { out_.append(s); }
  void CString(std::string_view s) {
    out_.append(s);
    out_.push_back('\0');
  }
  template <typename T>
  void Number(T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out_.append(b, sizeof(T));
  }
  void Sized64(std::string_view s) {
    Number<uint64_t>(s.size());
    Bytes(s);
  }
  void Sized32(std::string_view s) {
    Number<uint32_t>(static_cast<uint32_t>(s.size()));
    Bytes(s);
  }
  void Option(uint16_t id, std::string_view payload) {
    Number<uint16_t>(id);
    Sized32(payload);
  }
  size_t size() const { return out_.size(); }
  const std::string& str() const { return out_; }
  char* data() { return out_.data(); }

 private:
  std::string out_;
};

// Owns the temporary output file; removes it unless Commit() renamed it.
class TempOutput {
 public:
  TempOutput(std::filesystem::path final_path)
      : final_(std::move(final_path)), tmp_(final_.string() + ".tmp") {
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) Fail(final_, "cannot create");
  }
  ~TempOutput() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(tmp_.c_str());
  }
  TempOutput(const TempOutput&) = delete;
  TempOutput& operator=(const TempOutput&) = delete;

  void Write(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) Fail(final_, "cannot write");
      data.remove_prefix(static_cast<size_t>(n));
    }
  }

  void CopyFrom(const std::filesystem::path& src, uint64_t size) {
    int in = ::open(src.c_str(), O_RDONLY | O_CLOEXEC);
    if (in < 0) Fail(src, "cannot open");
    uint64_t left = size;
    while (left > 0) {
      ssize_t n = ::copy_file_range(in, nullptr, fd_, nullptr, left, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS)) {
        CopyByRead(in, left);
        break;
      }
      if (n <= 0) {
        int e = n == 0 ? EIO : errno;
        ::close(in);
        errno = e;
        Fail(final_, "cannot write");
      }
      left -= static_cast<uint64_t>(n);
    }
    ::close(in);
  }

  void Commit() {
    if (::fsync(fd_) != 0 && errno != EINVAL) Fail(final_, "cannot write");
    int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) Fail(final_, "cannot write");
    if (::rename(tmp_.c_str(), final_.c_str()) != 0) Fail(final_, "cannot create");
    committed_ = true;
  }

 private:
  void CopyByRead(int in, uint64_t left) {
    std::string buf(1 << 16, '\0');
    while (left > 0) {
      ssize_t n = ::read(in, buf.data(), std::min<uint64_t>(buf.size(), left));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(in);
        errno = n == 0 ? EIO : errno;
        Fail(final_, "cannot read back");
      }
      Write(std::string_view(buf.data(), static_cast<size_t>(n)));
      left -= static_cast<uint64_t>(n);
    }
  }

  [[noreturn]] static void Fail(const std::filesystem::path& p, const char* what) {
    throw Error(fmt::format("{} '{}': {}", what, p.string(), std::strerror(errno)));
  }

  std::filesystem::path final_;
  std::filesystem::path tmp_;
  int fd_ = -1;
  bool committed_ = false;
};

uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

uint64_t FileSize(const std::filesystem::path& file) {
  if (file.empty()) return 0;
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0)
    throw Error(fmt::format("cannot read '{}': {}", file.string(), std::strerror(errno)));
  return static_cast<uint64_t>(st.st_size);
}

// The CPUSTAT options of the top buffer's CPUs (trace-cmd would take an instance's for
// a buffer it does not see).
void WriteCpuStats(HeaderBuffer& h, const TraceFileContents& c) {
  for (size_t cpu = 0; cpu < c.cpus.size(); ++cpu)
    h.Option(tracefile::kOptionCpuStat, fmt::format("CPU: {}\n{}", cpu, c.cpus[cpu].stats));
}

void WriteV6(const std::filesystem::path& path, const TraceFileContents& c);
void WriteV7(const std::filesystem::path& path, const TraceFileContents& c);

}  // namespace

void AppendChunk(Compressor& compressor, std::string_view pages, std::string& out) {
  const size_t at = out.size();
  out.resize(at + 8 + compressor.Bound(pages.size()));
  const size_t n =
      compressor.Compress({reinterpret_cast<const uint8_t*>(pages.data()), pages.size()},
                          {reinterpret_cast<uint8_t*>(out.data() + at + 8), out.size() - at - 8});
  const uint32_t sizes[2] = {static_cast<uint32_t>(n), static_cast<uint32_t>(pages.size())};
  std::memcpy(out.data() + at, sizes, 8);
  out.resize(at + 8 + n);
}

ChunkExtent ScanChunks(const std::filesystem::path& file) {
  const UniqueFd owner(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  const int fd = owner.get();
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0)
    throw Error(fmt::format("cannot read '{}': {}", file.string(), std::strerror(errno)));
  ChunkExtent e;
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  for (;;) {
    uint32_t header[2];
    if (size - e.bytes < 8 || ::pread(fd, header, 8, static_cast<off_t>(e.bytes)) != 8 ||
        size - e.bytes - 8 < header[0])
      break;
    e.bytes += 8 + uint64_t{header[0]};
    ++e.chunks;
  }
  return e;
}

void WriteTraceFile(const std::filesystem::path& path, const TraceFileContents& c) {
  if (c.page_size == 0 || (c.page_size & (c.page_size - 1)) != 0)
    throw Error(fmt::format("invalid page size {}", c.page_size));
  if (c.compression.empty())
    WriteV6(path, c);
  else
    WriteV7(path, c);
}

namespace {

void WriteV6(const std::filesystem::path& path, const TraceFileContents& c) {
  HeaderBuffer h;
  h.Bytes(tracefile::kMagic);
  h.Bytes(tracefile::kTracing);
  h.CString(tracefile::kVersion);
  h.Number<uint8_t>(0);  // little endian
  h.Number<uint8_t>(sizeof(long));
  h.Number<uint32_t>(c.page_size);

  h.CString(tracefile::kHeaderPage);
  h.Sized64(c.header_page);
  h.CString(tracefile::kHeaderEvent);
  h.Sized64(c.header_event);

  h.Number<uint32_t>(static_cast<uint32_t>(c.ftrace_formats.size()));
  for (const auto& f : c.ftrace_formats) h.Sized64(f);

  h.Number<uint32_t>(static_cast<uint32_t>(c.systems.size()));
  for (const auto& sys : c.systems) {
    h.CString(sys.system);
    h.Number<uint32_t>(static_cast<uint32_t>(sys.formats.size()));
    for (const auto& f : sys.formats) h.Sized64(f);
  }

  h.Sized32(c.kallsyms);
  h.Sized32(c.printk_formats);
  h.Sized64(c.saved_cmdlines);

  h.Number<uint32_t>(static_cast<uint32_t>(c.cpus.size()));
  h.Bytes(tracefile::kOptionsTag);
  WriteCpuStats(h, c);
  if (!c.trace_clock.empty()) h.Option(tracefile::kOptionTraceClock, c.trace_clock);
  if (!c.cstool_info_json.empty()) h.Option(tracefile::kOptionCstoolInfo, c.cstool_info_json);
  // Each instance's BUFFER option: the offset of its CPU data table (filled in below when
  // the header's size is known) and its name.
  std::vector<size_t> instance_offset_at;
  for (const InstanceTraceData& inst : c.instances) {
    h.Number<uint16_t>(tracefile::kOptionCstoolBuffer);
    h.Number<uint32_t>(static_cast<uint32_t>(8 + inst.name.size() + 1 + 4));
    instance_offset_at.push_back(h.size());
    h.Number<uint64_t>(0);
    h.CString(inst.name);
    h.Number<uint32_t>(6);  // the layout it is for (see kOptionCstoolBuffer)
  }
  h.Number<uint16_t>(tracefile::kOptionDone);
  h.Bytes(tracefile::kFlyrecordTag);

  // The top buffer's table here, then every CPU's pages (the sizes of the page files
  // decide the offsets in the tables), then each instance's table behind a flyrecord tag
  // of its own. Nothing of the instances comes before the pages: libtracecmd reads on
  // after the top table and took an instance's tag there for a size.
  std::vector<const CpuTraceData*> data;
  for (const auto& cpu : c.cpus) data.push_back(&cpu);
  for (const InstanceTraceData& inst : c.instances)
    for (const auto& cpu : inst.cpus) data.push_back(&cpu);
  const uint64_t header_end = h.size() + 16 * c.cpus.size();
  std::vector<uint64_t> sizes;
  sizes.reserve(data.size());
  for (const CpuTraceData* d : data) sizes.push_back(FileSize(d->pages_file));
  uint64_t offset = AlignUp(header_end, c.page_size);
  uint64_t data_end = header_end;
  std::vector<uint64_t> offsets;
  for (uint64_t size : sizes) {
    offsets.push_back(offset);
    if (size > 0) data_end = offset + size;
    offset = AlignUp(offset + size, c.page_size);
  }
  size_t next = 0;
  auto table = [&](HeaderBuffer& to, size_t cpus) {
    for (size_t i = 0; i < cpus; ++i, ++next) {
      to.Number<uint64_t>(offsets[next]);
      to.Number<uint64_t>(sizes[next]);
    }
  };
  table(h, c.cpus.size());
  HeaderBuffer tables;
  const uint64_t tables_at = AlignUp(data_end, c.page_size);
  for (size_t i = 0; i < c.instances.size(); ++i) {
    const uint64_t table_at = tables_at + tables.size();
    std::memcpy(h.data() + instance_offset_at[i], &table_at, 8);
    tables.Bytes(tracefile::kFlyrecordTag);
    table(tables, c.instances[i].cpus.size());
  }

  TempOutput out(path);
  out.Write(h.str());
  uint64_t written = h.size();
  for (size_t i = 0; i < data.size(); ++i) {
    if (sizes[i] == 0) continue;
    out.Write(std::string(offsets[i] - written, '\0'));
    out.CopyFrom(data[i]->pages_file, sizes[i]);
    written = offsets[i] + sizes[i];
  }
  if (tables.size() > 0) {
    out.Write(std::string(tables_at - written, '\0'));
    out.Write(tables.str());
    written = tables_at + tables.size();
  }
  uint64_t end = AlignUp(written, c.page_size);
  if (end > written) out.Write(std::string(end - written, '\0'));
  out.Commit();
}

// v7: the initial header, then sections back to back (libtracecmd walks them one after
// the other): the metadata (compressed), the options, a flyrecord section per buffer (the
// top one, then the instances) with each CPU's chunks, and the strings that name the
// sections.
void WriteV7(const std::filesystem::path& path, const TraceFileContents& c) {
  std::unique_ptr<Compressor> compressor = MakeCompressor(c.compression);
  // Section descriptions, by offset in the strings section.
  std::string strings;
  auto describe = [&](std::string_view what) {
    const size_t at = strings.size();
    strings.append(what);
    strings.push_back('\0');
    return static_cast<uint32_t>(at);
  };
  auto section = [](HeaderBuffer& out, uint16_t id, uint16_t flags, uint32_t desc, uint64_t size) {
    out.Number<uint16_t>(id);
    out.Number<uint16_t>(flags);
    out.Number<uint32_t>(desc);
    out.Number<uint64_t>(size);
  };
  constexpr uint16_t kCompressed = 1;
  auto compressed_section = [&](HeaderBuffer& out, uint16_t id, std::string_view what,
                                const std::string& body) {
    std::string block;
    AppendChunk(*compressor, body, block);
    section(out, id, kCompressed, describe(what), block.size());
    out.Bytes(block);
  };

  HeaderBuffer h;
  h.Bytes(tracefile::kMagic);
  h.Bytes(tracefile::kTracing);
  h.CString("7");
  h.Number<uint8_t>(0);  // little endian
  h.Number<uint8_t>(sizeof(long));
  h.Number<uint32_t>(c.page_size);
  h.CString(compressor->name());
  h.CString(compressor->version());
  const size_t options_offset_at = h.size();
  h.Number<uint64_t>(0);  // filled in below

  std::map<uint16_t, uint64_t> metadata_at;  // option id -> section offset
  auto metadata = [&](uint16_t id, std::string_view what, const HeaderBuffer& body) {
    metadata_at[id] = h.size();
    compressed_section(h, id, what, body.str());
  };
  {
    HeaderBuffer b;
    b.CString(tracefile::kHeaderPage);
    b.Sized64(c.header_page);
    b.CString(tracefile::kHeaderEvent);
    b.Sized64(c.header_event);
    metadata(16, "headers", b);
  }
  {
    HeaderBuffer b;
    b.Number<uint32_t>(static_cast<uint32_t>(c.ftrace_formats.size()));
    for (const auto& f : c.ftrace_formats) b.Sized64(f);
    metadata(17, "ftrace events", b);
  }
  {
    HeaderBuffer b;
    b.Number<uint32_t>(static_cast<uint32_t>(c.systems.size()));
    for (const auto& sys : c.systems) {
      b.CString(sys.system);
      b.Number<uint32_t>(static_cast<uint32_t>(sys.formats.size()));
      for (const auto& f : sys.formats) b.Sized64(f);
    }
    metadata(18, "events format", b);
  }
  HeaderBuffer kallsyms, printk, cmdlines;
  kallsyms.Sized32(c.kallsyms);
  metadata(19, "kallsyms", kallsyms);
  printk.Sized32(c.printk_formats);
  metadata(20, "printk", printk);
  cmdlines.Sized64(c.saved_cmdlines);
  metadata(21, "command lines", cmdlines);

  // The buffers: the top one, then the instances (under cstool's id). Each CPU's whole
  // chunks; the options need their offsets, which follow the options.
  struct Buffer {
    uint16_t id;
    std::string_view name;
    const std::vector<CpuTraceData>* cpus;
    std::vector<ChunkExtent> extents;
    uint64_t flyrecord_at = 0;      // its section's header
    std::vector<uint64_t> data_at;  // per CPU
    uint64_t end = 0;               // of its section
  };
  std::vector<Buffer> buffers{{tracefile::kOptionBuffer, "", &c.cpus, {}, 0, {}, 0}};
  for (const InstanceTraceData& inst : c.instances)
    buffers.push_back({tracefile::kOptionCstoolBuffer, inst.name, &inst.cpus, {}, 0, {}, 0});
  for (Buffer& b : buffers) {
    for (const auto& cpu : *b.cpus)
      b.extents.push_back(cpu.pages_file.empty() ? ChunkExtent{} : ScanChunks(cpu.pages_file));
    b.data_at.assign(b.cpus->size(), 0);
  }
  const std::string clock_name = ParseTraceClock(c.trace_clock);
  auto options_body = [&]() {
    HeaderBuffer o;
    uint32_t cpus = static_cast<uint32_t>(c.cpus.size());
    o.Option(tracefile::kOptionCpuCount, std::string_view(reinterpret_cast<char*>(&cpus), 4));
    WriteCpuStats(o, c);
    if (!c.trace_clock.empty()) o.Option(tracefile::kOptionTraceClock, c.trace_clock);
    if (!c.cstool_info_json.empty()) o.Option(tracefile::kOptionCstoolInfo, c.cstool_info_json);
    for (const auto& [id, at] : metadata_at)
      o.Option(id, std::string_view(reinterpret_cast<const char*>(&at), 8));
    for (const Buffer& b : buffers) {
      HeaderBuffer buffer;
      buffer.Number<uint64_t>(b.flyrecord_at);
      buffer.CString(b.name);
      buffer.CString(clock_name.empty() ? "local" : clock_name);
      buffer.Number<uint32_t>(c.page_size);
      buffer.Number<uint32_t>(static_cast<uint32_t>(b.cpus->size()));
      for (uint32_t cpu = 0; cpu < b.cpus->size(); ++cpu) {
        const bool has = b.extents[cpu].chunks > 0;
        buffer.Number<uint32_t>(cpu);
        buffer.Number<uint64_t>(has ? b.data_at[cpu] : 0);
        buffer.Number<uint64_t>(has ? 4 + b.extents[cpu].bytes : 0);
      }
      if (b.id == tracefile::kOptionCstoolBuffer)
        buffer.Number<uint32_t>(7);  // the layout it is for (see kOptionCstoolBuffer)
      o.Option(b.id, buffer.str());
    }
    o.Number<uint16_t>(tracefile::kOptionDone);
    o.Number<uint32_t>(8);
    o.Number<uint64_t>(0);  // no further options section
    return o.str();
  };
  const uint32_t options_desc = describe("options");
  const uint32_t flyrecord_desc = describe("buffer flyrecord ");
  const uint32_t strings_desc = describe("strings");
  const uint64_t options_at = h.size();
  // Each buffer's section: its header, then its CPU data from the next page boundary.
  uint64_t at = options_at + 16 + options_body().size();
  for (Buffer& b : buffers) {
    b.flyrecord_at = at;
    uint64_t end = AlignUp(at + 16, c.page_size);
    for (size_t cpu = 0; cpu < b.extents.size(); ++cpu) {
      b.data_at[cpu] = end;
      if (b.extents[cpu].chunks > 0) end += 4 + b.extents[cpu].bytes;
    }
    b.end = end;
    at = end;
  }
  const std::string options = options_body();
  section(h, 0, 0, options_desc, options.size());
  h.Bytes(options);
  std::memcpy(h.data() + options_offset_at, &options_at, 8);

  TempOutput out(path);
  out.Write(h.str());
  uint64_t written = h.size();
  for (const Buffer& b : buffers) {
    HeaderBuffer head;
    section(head, b.id, kCompressed, flyrecord_desc, b.end - (b.flyrecord_at + 16));
    out.Write(head.str());
    written += head.size();
    out.Write(std::string(AlignUp(written, c.page_size) - written, '\0'));
    written = AlignUp(written, c.page_size);
    for (size_t cpu = 0; cpu < b.extents.size(); ++cpu) {
      if (b.extents[cpu].chunks == 0) continue;
      out.Write(std::string_view(reinterpret_cast<const char*>(&b.extents[cpu].chunks), 4));
      out.CopyFrom((*b.cpus)[cpu].pages_file, b.extents[cpu].bytes);
      written += 4 + b.extents[cpu].bytes;
    }
  }
  // Last, as it names every section (itself included).
  std::string block;
  AppendChunk(*compressor, strings, block);
  HeaderBuffer tail;
  section(tail, 15, kCompressed, strings_desc, block.size());
  tail.Bytes(block);
  out.Write(tail.str());
  out.Commit();
}

}  // namespace
}  // namespace cstool
