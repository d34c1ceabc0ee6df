#include "commands/report_exports.h"

#include <fmt/core.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <system_error>

#include "analysis/barscope.h"
#include "analysis/timeline.h"
#include "base/errors.h"
#include "output/html_output.h"
#include "output/timeline_output.h"
#include "pipeline/output_guard.h"
#include "recording/progress_line.h"

namespace cstool {
namespace {

constexpr size_t kTimelineBuffer = 1 << 20;

// "FROM:TO" in seconds from the trace start, either side may be empty ("2:", ":0.5").
BarscopeObserver::Range ParseHtmlRange(const std::string& text) {
  BarscopeObserver::Range range;
  if (text.empty()) return range;
  auto bad = [&] {
    return Error(fmt::format("--html-range {}: expected FROM:TO, seconds from the trace start "
                             "with 0 <= FROM < TO (either may be left out)",
                             text),
                 ExitCode::kUsage);
  };
  const size_t colon = text.find(':');
  if (colon == std::string::npos) throw bad();
  auto seconds = [&](const std::string& s, int64_t empty) -> int64_t {
    if (s.empty()) return empty;
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(s, &used);
    } catch (const std::exception&) {
      throw bad();
    }
    if (used != s.size() || !std::isfinite(v) || v < 0 || v > 1e9) throw bad();
    return std::llround(v * 1e9);
  };
  range.from = seconds(text.substr(0, colon), 0);
  range.to = seconds(text.substr(colon + 1), -1);
  if (range.to >= 0 && range.to <= range.from) throw bad();
  return range;
}

}  // namespace

ReportExports::ReportExports(const ExportOptions& options, const ViewOptions& view,
                             const SyscallTable& syscalls)
    : options_(options) {
  auto selected = [view](const Thread& t) { return SelectsThread(view, t); };
  // A page's name for the timeline is the other option's output (the timeline is
  // Perfetto's JSON or protobuf): it wrote JSON over a page the user meant to make.
  if (const std::string ext = std::filesystem::path(options_.timeline).extension().string();
      options_.timeline_format == "auto" && (ext == ".html" || ext == ".htm"))
    throw Error(fmt::format("--timeline {0} names a page, and the timeline is Perfetto's trace "
                            "(JSON, or protobuf for .pftrace): --html {0} writes the page; give "
                            "the timeline a .json or .pftrace name",
                            options_.timeline),
                ExitCode::kUsage);
  if (!options_.timeline.empty()) RefuseToOverwriteKeptFile(options_.timeline, "--timeline");
  if (!options_.html.empty()) RefuseToOverwriteKeptFile(options_.html, "--html");
  if (!options_.timeline.empty()) {
    timeline_file_.emplace(options_.timeline, kTimelineBuffer);
    const TimelineFormat format =
        options_.timeline_format == "auto"
            ? TimelineFormatForPath(options_.timeline)
            : ParseTimelineFormat(options_.timeline_format).value_or(TimelineFormat::kJson);
    timeline_writer_ = MakeTimelineWriter(format, timeline_file_->stream());
    timeline_ = std::make_unique<TimelineObserver>(*timeline_writer_, syscalls, selected);
  }
  if (!options_.html.empty()) {
    const BarscopeObserver::Range range = ParseHtmlRange(options_.html_range);
    html_file_.emplace(options_.html);
    barscope_ = std::make_unique<BarscopeObserver>(syscalls, selected, range);
  }
}

ReportExports::~ReportExports() = default;

std::vector<Observer*> ReportExports::observers() const {
  std::vector<Observer*> out;
  if (timeline_) out.push_back(timeline_.get());
  if (barscope_) out.push_back(barscope_.get());
  return out;
}

void ReportExports::TraceOpened(const RecordingInfo* info) {
  if (timeline_writer_ && info != nullptr) timeline_writer_->TraceClock(info->trace_clock);
}

void ReportExports::KeepTimelineOpen() {
  if (timeline_) timeline_->KeepOpen();
}

void ReportExports::AddCriticalPath(const CriticalPath& path) {
  if (timeline_) timeline_->WriteCriticalPath(path);
}

ReportExports::Finished ReportExports::Finish(const ReportView& view) {
  Finished done;
  // As record says where its file went: a file written beside the report is easy to miss.
  auto wrote = [&done](const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return;  // /dev/stdout: seen already
    const uintmax_t size = std::filesystem::file_size(path, ec);
    done.written.push_back(ec ? fmt::format("wrote {}", path)
                              : fmt::format("wrote {} ({})", path, HumanBytes(size)));
  };
  if (timeline_) {
    timeline_.reset();
    timeline_writer_.reset();  // ends the file if the trace end was never reached
    timeline_file_->Commit();
    wrote(timeline_file_->path());
  }
  if (barscope_) {
    RenderHtml(view, barscope_->model(), html_file_->stream());
    html_file_->Commit();
    wrote(html_file_->path());
    // A page with nothing drawn (a range past the trace's end) says why; so does stderr.
    for (const std::string& note : barscope_->model().threads.notes)
      done.warnings.push_back(fmt::format("{}: {}", options_.html, note));
  }
  return done;
}

void ReportExports::Discard() {
  timeline_.reset();
  timeline_writer_.reset();
  timeline_file_.reset();
  barscope_.reset();
  html_file_.reset();
}

}  // namespace cstool
