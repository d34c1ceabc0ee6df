#include "format/trace_file_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "base/text_fields.h"
#include "format/trace_file_format.h"
#include "format/tracecmd_trace_file.h"
#include "format/v6_trace_file.h"
#include "format/v7_trace_file.h"

namespace cstool {
namespace {

std::string_view TrimBlanksAndNuls(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' ||
                        s.front() == '\r' || s.front() == '\0'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' ||
                        s.back() == '\r' || s.back() == '\0'))
    s.remove_suffix(1);
  return s;
}

bool ParseU64(std::string_view s, uint64_t* out) {
  s = TrimBlanksAndNuls(s);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc{};
}

}  // namespace

std::string ParseTraceClock(std::string_view text) {
  const size_t open = text.find('[');
  const size_t close = text.find(']', open == std::string_view::npos ? 0 : open);
  if (open != std::string_view::npos && close != std::string_view::npos)
    return std::string(text.substr(open + 1, close - open - 1));
  // A bare clock name (no listing).
  std::string_view t = TrimBlanksAndNuls(text);
  if (!t.empty() && t.find(' ') == std::string_view::npos) return std::string(t);
  return {};
}

bool ParseCpuStatBufferMarker(std::string_view text, std::string* name) {
  std::string_view t = TrimBlanksAndNuls(text);
  constexpr std::string_view kPrefix = "Buffer: ";
  if (t.substr(0, kPrefix.size()) != kPrefix) return false;
  *name = std::string(TrimBlanksAndNuls(t.substr(kPrefix.size())));
  return true;
}

bool ParseCpuStat(std::string_view text, CpuStatOption* out) {
  bool have_cpu = false;
  CpuStatOption s;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = TrimBlanksAndNuls(line.substr(0, colon));
    std::string_view value = line.substr(colon + 1);
    uint64_t v = 0;
    if (!ParseU64(value, &v)) continue;
    if (key == "CPU") {
      s.cpu = static_cast<int32_t>(v);
      have_cpu = true;
    } else if (key == "entries") {
      s.entries = v;
    } else if (key == "overrun") {
      s.overrun = v;
    } else if (key == "commit overrun") {
      s.commit_overrun = v;
    } else if (key == "dropped events") {
      s.dropped = v;
    } else if (key == "read events") {
      s.read = v;
    }
  }
  if (have_cpu) *out = s;
  return have_cpu;
}

namespace {

// The records of a stream from `start_ts` on and before `end_ts` (TraceFileReader::StartAt,
// EndAt; 0: no bound).
class RecordsWithin final : public CpuRecordStream {
 public:
  RecordsWithin(std::unique_ptr<CpuRecordStream> all, int64_t start_ts, int64_t end_ts)
      : all_(std::move(all)), start_ts_(start_ts), end_ts_(end_ts) {}
  int cpu() const override { return all_->cpu(); }
  std::span<const RawRecord> NextBatch() override {
    if (ended_) return {};
    std::span<const RawRecord> batch = all_->NextBatch();
    while (!reached_ && !batch.empty()) {  // records of one CPU come in time order
      const auto first = std::find_if(batch.begin(), batch.end(),
                                      [this](const RawRecord& r) { return r.ts >= start_ts_; });
      batch = batch.subspan(static_cast<size_t>(first - batch.begin()));
      if (!batch.empty()) {
        reached_ = true;
      } else {
        batch = all_->NextBatch();
      }
    }
    if (end_ts_ > 0 && !batch.empty() && batch.back().ts >= end_ts_) {
      const auto last = std::find_if(batch.begin(), batch.end(),
                                     [this](const RawRecord& r) { return r.ts >= end_ts_; });
      batch = batch.first(static_cast<size_t>(last - batch.begin()));
      ended_ = true;
    }
    return batch;
  }

 private:
  std::unique_ptr<CpuRecordStream> all_;
  int64_t start_ts_;
  int64_t end_ts_;
  bool reached_ = false;
  bool ended_ = false;
};

}  // namespace

std::unique_ptr<CpuRecordStream> TraceFileReader::OpenCpu(int cpu) {
  std::unique_ptr<CpuRecordStream> all = OpenCpuRecords(cpu);
  if (start_ts_ <= 0 && end_ts_ <= 0) return all;
  return std::make_unique<RecordsWithin>(std::move(all), start_ts_, end_ts_);
}

std::string TraceFileReader::OtherInstancesText() const {
  std::string names;
  for (const std::string& n : instance_names_)
    if (n != buffer_name_ && n != tracefile::kUnfilteredRuntimeBuffer)
      names += fmt::format("{}\"{}\"", names.empty() ? "" : ", ", VisibleText(n));
  return names;
}

void TraceFileReader::ThrowNoBuffer(const std::string& name) const {
  const std::string names = OtherInstancesText();
  throw Error(fmt::format("{}: no buffer instance named \"{}\" ({})", path_, VisibleText(name),
                          names.empty() ? "the file has only its top-level buffer"
                                        : "the file has " + names),
              ExitCode::kUsage);
}

void TraceFileReader::LoadSidecarInfo() {
  if (info_) return;
  const std::string sidecar = path_ + std::string(tracefile::kCstoolInfoSidecarSuffix);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(sidecar, ec)) return;
  std::ifstream in(sidecar);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    throw Error(fmt::format("{}: not a JSON object (cstool recording info)", sidecar));
  try {
    info_ = j.get<RecordingInfo>();
  } catch (const std::exception& e) {
    throw Error(fmt::format("{}: bad cstool recording info: {}", sidecar, e.what()));
  }
}

std::unique_ptr<TraceFileReader> OpenTraceFile(const std::string& path,
                                               const ReaderOptions& options) {
  // The reason, as the C library words it: "No such file or directory", "Permission
  // denied"; a directory opens but cannot be read, so it is named before.
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status))
    throw Error(fmt::format("{}: cannot open: {}", path, std::strerror(EISDIR)));
  // A FIFO or a device: opening a FIFO would wait for a writer, and the file is read in
  // place (mapped) anyway.
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw Error(fmt::format("{}: not a regular file", path));
  errno = 0;
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    const int err = errno;
    throw Error(
        fmt::format("{}: cannot open: {}", path, err != 0 ? std::strerror(err) : "unknown error"));
  }
  char head[32] = {};
  f.read(head, sizeof(head));
  const std::string_view got(head, static_cast<size_t>(f.gcount()));
  if (got.empty())
    throw Error(fmt::format("{}: empty file (0 bytes): no trace.dat header at offset 0", path));
  // A file that ends inside its fixed header was cut short, whatever the bytes so far.
  const bool ended = got.size() < sizeof(head);
  auto truncated = [&] {
    return Error(
        fmt::format("{}: truncated at offset {} (the file header: file ends)", path, got.size()));
  };
  if (ended && got.size() < tracefile::kTraceDatMagic.size() &&
      tracefile::kTraceDatMagic.substr(0, got.size()) == got)
    throw truncated();
  // perf sched record's output is the file a perf user has at hand: say what it is.
  if (got.starts_with("PERFILE2") || got.starts_with("2ELIFREP"))
    throw Error(
        fmt::format("{}: a perf.data file (perf record), not a trace.dat: cstool reads "
                    "trace-cmd's format; record one with `cstool record`",
                    path));
  if (got.size() < tracefile::kTraceDatMagic.size() ||
      got.substr(0, tracefile::kTraceDatMagic.size()) != tracefile::kTraceDatMagic)
    throw Error(fmt::format("{}: not a trace.dat file (bad magic at offset 0)", path));

  // Refuse what no backend can read before libtracecmd sees a damaged header.
  const size_t version_end = got.find('\0', tracefile::kTraceDatMagic.size());
  if (version_end == std::string_view::npos && ended) throw truncated();
  if (version_end == std::string_view::npos)
    throw Error(fmt::format("{}: corrupt file at offset {}: unterminated version string", path,
                            tracefile::kTraceDatMagic.size()));
  const std::string_view version =
      got.substr(tracefile::kTraceDatMagic.size(), version_end - tracefile::kTraceDatMagic.size());
  if (version != "6" && version != "7")
    throw Error(fmt::format("{}: unsupported trace.dat version \"{}\" at offset {}", path, version,
                            tracefile::kTraceDatMagic.size()));
  if (version_end + 1 >= got.size()) throw truncated();
  if (static_cast<uint8_t>(got[version_end + 1]) > 1)
    throw Error(
        fmt::format("{}: corrupt file at offset {}: bad endianness byte", path, version_end + 1));
  // The rest of the fixed header (long size, page size; v7's compression) cut short.
  if (ended && !V6TraceFile::CanRead(got) && !V7TraceFile::CanRead(got)) {
    const size_t fixed = version_end + 1 + 1 + 1 + 4;
    if (got.size() < fixed || (version == "7" && got.find('\0', fixed) == std::string_view::npos))
      throw truncated();
  }

  // The own parsers when they can read the file, else libtracecmd.
  auto fast = [&]() -> std::unique_ptr<TraceFileReader> {
    if (version == "7") return std::make_unique<V7TraceFile>(path, options);
    return std::make_unique<V6TraceFile>(path, options);
  };
  std::unique_ptr<TraceFileReader> reader;
  switch (options.backend) {
    case ReaderBackend::kFast:
      reader = fast();
      break;
    case ReaderBackend::kLibTracecmd:
      reader = std::make_unique<TracecmdTraceFile>(path, options);
      // libtracecmd skips cstool's own option: take it from the own parser when it can
      // read the file, so that both backends report the same recording.
      if (V6TraceFile::CanRead(got) || V7TraceFile::CanRead(got)) {
        try {
          reader->AdoptRecordingInfo(fast()->recording_info());
          reader->SetTimestampsAsRecorded(true);
        } catch (const Error&) {
          // Damage the own parser refuses, or a file it leaves to libtracecmd: no info.
        }
      }
      break;
    case ReaderBackend::kAuto:
      if (V6TraceFile::CanRead(got) || V7TraceFile::CanRead(got)) {
        try {
          reader = fast();
        } catch (const FastPathUnsupported&) {
          reader = std::make_unique<TracecmdTraceFile>(path, options);
        }
      } else {
        reader = std::make_unique<TracecmdTraceFile>(path, options);
      }
      break;
  }
  reader->LoadSidecarInfo();
  // A flight recorder's dump is of its window: what its first pages hold from before is
  // left out, as the dump says. A recording that attached to running threads starts in
  // their states read then (`msa -o` traces before its read; `record -p` reads first).
  if (const std::optional<RecordingInfo>& info = reader->recording_info()) {
    const int64_t start = std::max(info->window_start_ts, info->attach_seed_ts);
    if (start > 0) reader->StartAt(start);
    // A recording cut short by --max-size or a full disk holds every CPU's events only up
    // to the first page one of them could not write: the rest would be one-sided.
    if (const int64_t end = info->CompleteUntilTs(); end > 0) reader->EndAt(end);
  }
  return reader;
}

}  // namespace cstool
