// The pictures `cstool report` can write besides its tables: the Perfetto timeline
// (--timeline, JSON or protobuf) and the HTML page with barscopes (--html). Opens the files up
// front (so a bad path fails before the analysis), provides the observers that collect the data,
// and writes what is left once the report view exists. Each file is written whole or not at
// all (base/output_file).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/report_view.h"
#include "base/output_file.h"
#include "model/recording_info.h"
#include "model/syscall_table.h"
#include "sched/observer.h"

namespace cstool {

class TimelineObserver;
class TimelineSink;
class BarscopeObserver;
struct CriticalPath;

struct ExportOptions {
  std::string timeline;                  // --timeline OUT.json|OUT.pftrace ("" = none)
  std::string timeline_format = "auto";  // --timeline-format: auto (by extension), json, proto
  std::string html;                      // --html OUT.html ("" = none)
  std::string html_range;                // --html-range FROM:TO in seconds ("" = the whole trace)
};

class ReportExports {
 public:
  // Throws cstool::Error when an output file cannot be created.
  ReportExports(const ExportOptions& options, const ViewOptions& view,
                const SyscallTable& syscalls);
  ~ReportExports();

  std::vector<Observer*> observers() const;
  // report --critical-path: the timeline stays open at the trace end for the path.
  void KeepTimelineOpen();
  // The file is open (its cstool recording information, or null): the timeline's clock.
  void TraceOpened(const RecordingInfo* info);
  void AddCriticalPath(const CriticalPath& path);
  // What Finish wrote, and what the user should know of it (an HTML range with nothing
  // in it).
  struct Finished {
    std::vector<std::string> written;  // "wrote PATH (SIZE)", one per file
    std::vector<std::string> warnings;
  };
  // After the analysis: writes the HTML page and checks every file was written.
  Finished Finish(const ReportView& view);
  // Instead of Finish when the report fails: no file is written, and earlier ones under
  // the names are left as they were.
  void Discard();

 private:
  ExportOptions options_;
  std::optional<OutputFile> timeline_file_;
  std::optional<OutputFile> html_file_;
  std::unique_ptr<TimelineSink> timeline_writer_;
  std::unique_ptr<TimelineObserver> timeline_;
  std::unique_ptr<BarscopeObserver> barscope_;
};

}  // namespace cstool
