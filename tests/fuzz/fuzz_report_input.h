// One fuzz input through the whole `cstool report` path: the trace-file reader (the own
// v6 parser), the event decoder, the merge, the state machine, the report observers and
// every output format. Shared by the libFuzzer target (trace_file_fuzzer.cc) and the
// regression unit test that replays tests/fuzz/regressions/.
//
// Only the fast v6 path is fuzzed: v7 and compressed files go through libtracecmd,
// whose parser is not hardened against hostile input (see man/cstool-report.1, BUGS).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>

#include "analysis/report_view.h"
#include "base/errors.h"
#include "format/v6_trace_file.h"
#include "model/syscall_table.h"
#include "output/output.h"
#include "pipeline/analyze_trace.h"

namespace cstool::fuzz {

// Discards what the outputs render.
class NullBuffer : public std::streambuf {
 protected:
  int overflow(int c) override { return c; }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

// Owns an anonymous in-memory file holding the input; path() opens it.
class MemoryFile {
 public:
  MemoryFile(const uint8_t* data, size_t size) : fd_(::memfd_create("cstool-fuzz", MFD_CLOEXEC)) {
    if (fd_ < 0) std::abort();
    for (size_t off = 0; off < size;) {
      const ssize_t n = ::write(fd_, data + off, size - off);
      if (n <= 0) std::abort();
      off += static_cast<size_t>(n);
    }
  }
  ~MemoryFile() { ::close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

// Returns true if the input was analysed, false if it was rejected with a cstool::Error
// (which must name the file). Anything else (a crash, a sanitizer report, another
// exception type) is a bug.
inline bool ReportOnBytes(const uint8_t* data, size_t size, const SyscallTable& syscalls) {
  const std::string_view head(reinterpret_cast<const char*>(data), size < 32 ? size : 32);
  if (!V6TraceFile::CanRead(head)) return false;
  MemoryFile file(data, size);
  const std::string path = file.path();
  // Odd sizes take the --salvage path (skip damage), even sizes the strict one.
  const bool salvage = (size & 1) != 0;
  try {
    auto analyzed = AnalyzeTrace(
        path, syscalls, {.explain_anomalies = true, .salvage = salvage, .counter_windows = true});
    NullBuffer null_buffer;
    std::ostream null(&null_buffer);
    ViewOptions view_options;
    view_options.all_threads = true;
    ReportView view = BuildView(analyzed->model, syscalls, view_options);
    for (const char* format : {"table", "json", "csv"}) MakeOutput(format, null)->Render(view);
    return true;
  } catch (const Error& e) {
    if (std::string_view(e.what()).find(path) == std::string_view::npos) {
      // Every error about a file must say which file.
      std::abort();
    }
    return false;
  }
}

}  // namespace cstool::fuzz
