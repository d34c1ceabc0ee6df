#include "pipeline/output_guard.h"

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/errors.h"
#include "format/trace_file_format.h"

namespace cstool {
namespace {

// The first 16 bytes of every SQLite 3 database file (its header string, NUL included).
constexpr std::string_view kSqliteMagic{"SQLite format 3\0", 16};

Error RecordingRefused(const std::string& path, std::string_view option) {
  return Error(fmt::format("{} {}: that is a recording (a trace.dat file), and an output never "
                           "replaces one: give the output a name of its own after {}",
                           option, path, option),
               ExitCode::kUsage);
}

}  // namespace

KeptFile KeptFileAt(const std::string& path) {
  // Only a regular file holds either: reading a FIFO, a terminal or /dev/stdout (whose
  // pipe may be this process's own output) would wait for ever.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return KeptFile::kNone;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(fmt::format("{}: cannot read it to check that it is no recording or database "
                            "before replacing it: {}",
                            path, std::strerror(errno)),
                ExitCode::kUsage);
  std::array<char, 16> head{};
  in.read(head.data(), head.size());
  const std::string_view got(head.data(), static_cast<size_t>(in.gcount()));
  if (got.starts_with(tracefile::kTraceDatMagic)) return KeptFile::kRecording;
  if (got == kSqliteMagic) return KeptFile::kSqliteDatabase;
  return KeptFile::kNone;
}

void RefuseToOverwriteKeptFile(const std::string& path, std::string_view option) {
  switch (KeptFileAt(path)) {
    case KeptFile::kNone:
      return;
    case KeptFile::kRecording:
      throw RecordingRefused(path, option);
    case KeptFile::kSqliteDatabase:
      throw Error(fmt::format("{} {}: that is a SQLite database (a fleet export), and an output "
                              "never replaces one: add to it with --format sqlite, or give the "
                              "output a name of its own after {}",
                              option, path, option),
                  ExitCode::kUsage);
  }
}

void RefuseToOverwriteRecording(const std::string& path, std::string_view option) {
  if (KeptFileAt(path) == KeptFile::kRecording) throw RecordingRefused(path, option);
}

void RefuseSharedOutputs(const std::vector<std::pair<std::string_view, std::string>>& outputs) {
  // The same file under two spellings ("out.json", "./out.json", a link to it) is one.
  auto same = [](const std::string& a, const std::string& b) {
    std::error_code ec;
    if (std::filesystem::equivalent(a, b, ec)) return true;
    const std::filesystem::path ca = std::filesystem::weakly_canonical(a, ec);
    if (ec) return a == b;
    const std::filesystem::path cb = std::filesystem::weakly_canonical(b, ec);
    return ec ? a == b : ca == cb;
  };
  for (size_t i = 0; i < outputs.size(); ++i)
    for (size_t j = i + 1; j < outputs.size(); ++j)
      if (!outputs[i].second.empty() && !outputs[j].second.empty() &&
          same(outputs[i].second, outputs[j].second))
        throw Error(
            fmt::format("{} {} and {} {} are one file: each output needs a name of its own",
                        outputs[i].first, outputs[i].second, outputs[j].first, outputs[j].second),
            ExitCode::kUsage);
}

}  // namespace cstool
