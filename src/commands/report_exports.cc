#include "commands/report_exports.h"

#include <fmt/core.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "analysis/barscope.h"
#include "analysis/timeline.h"
#include "base/errors.h"
#include "output/html_output.h"
#include "output/timeline_output.h"

namespace cstool {
namespace {

constexpr size_t kTimelineBuffer = 1 << 20;

Error OpenError(const std::string& path, const char* what) {
  return Error(fmt::format("cannot {} {}: {}", what, path, std::strerror(errno)));
}

// "FROM:TO" in seconds from the trace start, either side may be empty ("2:", ":0.5").
BarscopeObserver::Range ParseHtmlRange(const std::string& text) {
  BarscopeObserver::Range range;
  if (text.empty()) return range;
  auto bad = [&] {
    return Error(fmt::format(
        "--html-range {}: expected FROM:TO in seconds from the trace start, FROM < TO", text));
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
  if (!options_.timeline.empty()) {
    timeline_buffer_.resize(kTimelineBuffer);
    timeline_file_.rdbuf()->pubsetbuf(timeline_buffer_.data(),
                                      static_cast<std::streamsize>(timeline_buffer_.size()));
    timeline_file_.open(options_.timeline, std::ios::binary | std::ios::trunc);
    if (!timeline_file_) throw OpenError(options_.timeline, "create");
    const TimelineFormat format =
        options_.timeline_format == "auto"
            ? TimelineFormatForPath(options_.timeline)
            : ParseTimelineFormat(options_.timeline_format).value_or(TimelineFormat::kJson);
    timeline_writer_ = MakeTimelineWriter(format, timeline_file_);
    timeline_ = std::make_unique<TimelineObserver>(*timeline_writer_, syscalls, selected);
  }
  if (!options_.html.empty()) {
    const BarscopeObserver::Range range = ParseHtmlRange(options_.html_range);
    // Create it now so that a bad path fails before a long analysis.
    std::ofstream probe(options_.html, std::ios::trunc);
    if (!probe) throw OpenError(options_.html, "create");
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

void ReportExports::KeepTimelineOpen() {
  if (timeline_) timeline_->KeepOpen();
}

void ReportExports::AddCriticalPath(const CriticalPath& path) {
  if (timeline_) timeline_->WriteCriticalPath(path);
}

void ReportExports::Finish(const ReportView& view) {
  if (timeline_) {
    timeline_.reset();
    timeline_writer_.reset();  // ends the file if the trace end was never reached
    timeline_file_.close();
    if (!timeline_file_) throw OpenError(options_.timeline, "write");
  }
  if (barscope_) {
    std::ofstream html(options_.html, std::ios::trunc);
    RenderHtml(view, barscope_->model(), html);
    html.close();
    if (!html) throw OpenError(options_.html, "write");
  }
}

}  // namespace cstool

namespace cstool {

void ReportExports::Discard() {
  std::error_code ignored;
  if (timeline_) {
    timeline_.reset();
    timeline_writer_.reset();
    timeline_file_.close();
    std::filesystem::remove(options_.timeline, ignored);
  }
  if (barscope_) std::filesystem::remove(options_.html, ignored);
}

}  // namespace cstool
