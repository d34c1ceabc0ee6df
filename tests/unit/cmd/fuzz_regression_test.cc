// Every input the fuzzer (tests/fuzz/trace_file_fuzzer.cc) ever crashed on, and every
// seed of its corpus, goes through the same report path here: each must be analysed or
// rejected with a cstool::Error naming the file; under the sanitizer build
// (build-asan) also without memory errors, undefined behaviour or leaks.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_report_input.h"
#include "tests/support/files.h"

namespace cstool {
namespace {

using testing::ReadWholeFile;
namespace fs = std::filesystem;

std::vector<fs::path> FilesIn(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (fs::is_regular_file(e.path()) && e.path().filename() != "README.md")
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

bool Replay(const fs::path& p, const SyscallTable& syscalls) {
  const std::string bytes = ReadWholeFile(p);
  return fuzz::ReportOnBytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(),
                             syscalls);
}

TEST(FuzzRegressions, CrashInputsAreRejectedOrAnalysed) {
  SyscallTable syscalls;
  const auto files = FilesIn(fs::path(CSTOOL_SOURCE_DIR) / "tests/fuzz/regressions");
  for (const auto& f : files) {
    SCOPED_TRACE(f.filename().string());
    Replay(f, syscalls);
  }
}

TEST(FuzzRegressions, SeedCorpusIsAnalysed) {
  SyscallTable syscalls;
  size_t analysed = 0;
  const auto files = FilesIn(fs::path(CSTOOL_SOURCE_DIR) / "tests/fixtures");
  for (const auto& f : files) {
    SCOPED_TRACE(f.filename().string());
    analysed += Replay(f, syscalls);
  }
  EXPECT_GE(analysed, 2u) << "the seeds should be valid v6 files";
}

}  // namespace
}  // namespace cstool
