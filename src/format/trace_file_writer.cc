#include "format/trace_file_writer.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "base/errors.h"
#include "format/trace_file_format.h"

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

 private:
  std::string out_;
};

// Owns the temporary output file; removes it unless Commit() renamed it.
class TempOutput {
 public:
  TempOutput(std::filesystem::path final_path)
      : final_(std::move(final_path)), tmp_(final_.string() + ".tmp") {
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) Fail(tmp_, "cannot create");
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
      if (n <= 0) Fail(tmp_, "cannot write");
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
        Fail(tmp_, "cannot write");
      }
      left -= static_cast<uint64_t>(n);
    }
    ::close(in);
  }

  void Commit() {
    if (::fsync(fd_) != 0 && errno != EINVAL) Fail(tmp_, "cannot write");
    int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) Fail(tmp_, "cannot write");
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
        Fail(tmp_, "cannot read back");
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

}  // namespace

void WriteTraceFile(const std::filesystem::path& path, const TraceFileContents& c) {
  if (c.page_size == 0 || (c.page_size & (c.page_size - 1)) != 0)
    throw Error(fmt::format("invalid page size {}", c.page_size));

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
  for (size_t cpu = 0; cpu < c.cpus.size(); ++cpu)
    h.Option(tracefile::kOptionCpuStat, fmt::format("CPU: {}\n{}", cpu, c.cpus[cpu].stats));
  if (!c.trace_clock.empty()) h.Option(tracefile::kOptionTraceClock, c.trace_clock);
  if (!c.cstool_info_json.empty()) h.Option(tracefile::kOptionCstoolInfo, c.cstool_info_json);
  h.Number<uint16_t>(tracefile::kOptionDone);
  h.Bytes(tracefile::kFlyrecordTag);

  // Sizes of the page files decide the offsets in the flyrecord table.
  std::vector<uint64_t> sizes;
  for (const auto& cpu : c.cpus) {
    uint64_t size = 0;
    if (!cpu.pages_file.empty()) {
      struct stat st {};
      if (::stat(cpu.pages_file.c_str(), &st) != 0)
        throw Error(
            fmt::format("cannot read '{}': {}", cpu.pages_file.string(), std::strerror(errno)));
      size = static_cast<uint64_t>(st.st_size);
    }
    sizes.push_back(size);
  }
  uint64_t offset = AlignUp(h.size() + 16 * c.cpus.size(), c.page_size);
  std::vector<uint64_t> offsets;
  for (uint64_t size : sizes) {
    offsets.push_back(offset);
    offset = AlignUp(offset + size, c.page_size);
  }
  for (size_t i = 0; i < c.cpus.size(); ++i) {
    h.Number<uint64_t>(offsets[i]);
    h.Number<uint64_t>(sizes[i]);
  }

  TempOutput out(path);
  out.Write(h.str());
  uint64_t written = h.size();
  for (size_t i = 0; i < c.cpus.size(); ++i) {
    if (sizes[i] == 0) continue;
    out.Write(std::string(offsets[i] - written, '\0'));
    out.CopyFrom(c.cpus[i].pages_file, sizes[i]);
    written = offsets[i] + sizes[i];
  }
  uint64_t end = AlignUp(written, c.page_size);
  if (end > written) out.Write(std::string(end - written, '\0'));
  out.Commit();
}

}  // namespace cstool
