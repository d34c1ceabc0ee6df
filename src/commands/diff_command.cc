#include "commands/diff_command.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "analysis/diff.h"
#include "analysis/diff_input.h"
#include "analysis/report_view.h"
#include "base/errors.h"
#include "base/output_file.h"
#include "model/syscall_table.h"
#include "output/diff_output.h"
#include "pipeline/analyze_trace.h"

namespace cstool {
namespace {

// One recording, reduced to its threads' totals; the analysis is freed before the next
// file is read, so a diff of many recordings holds one analysis at a time.
DiffRecording Load(const std::string& file, const DiffOptions& options,
                   const SyscallTable& syscalls, Messages& messages) {
  // Its errors name the file already.
  std::unique_ptr<AnalyzedTrace> analyzed =
      AnalyzeTrace(file, syscalls, {.reader = options.reader, .jobs = options.jobs});
  for (const auto& [cpu, n] : analyzed->model.trace.lost_events)
    if (n > 0) {
      messages.Warning(
          fmt::format("{}: lost events (cpu{} {}): its numbers may be off", file, cpu, n));
      break;
    }
  ViewOptions view_options;
  view_options.all_threads = options.all_threads;
  ReportView view = BuildView(analyzed->model, syscalls, view_options);
  return DiffRecordingOf(view, file);
}

}  // namespace

int RunDiff(const DiffOptions& options, std::ostream& out, Messages& messages) {
  std::unique_ptr<DiffOutput> output =
      MakeDiffOutput(options.format, out, options.limit);  // validate first
  if (options.base_files.empty() || options.new_files.empty())
    throw Error(
        "give at least one recording on each side, with -- between the ones before the change "
        "and the ones after: cstool diff BASE... -- NEW...",
        ExitCode::kUsage);
  // Every file before the first is analysed: a typo fails at once.
  for (const auto* side : {&options.base_files, &options.new_files})
    for (const std::string& f : *side) {
      std::error_code ec;
      if (std::filesystem::exists(f, ec)) continue;
      if (side == &options.new_files && f.starts_with("-"))
        throw Error(fmt::format("{}: no such file (after --, every argument is a recording: "
                                "options go before --)",
                                f),
                    ExitCode::kUsage);
      throw Error(fmt::format("{}: no such file", f), ExitCode::kUsage);
    }
  std::optional<OutputFile> html;
  if (!options.html.empty()) html.emplace(options.html);
  SyscallTable syscalls;
  std::vector<DiffRecording> base, after;
  for (const std::string& f : options.base_files)
    base.push_back(Load(f, options, syscalls, messages));
  for (const std::string& f : options.new_files)
    after.push_back(Load(f, options, syscalls, messages));
  const DiffResult result = DiffRecordings(base, after);
  if (!result.subjects.empty() && std::none_of(result.subjects.begin(), result.subjects.end(),
                                               [](const DiffSubject& s) { return s.matched(); }))
    messages.Warning(
        "no thread or process is on both sides: threads are matched by process and thread "
        "names (the same program before and after a change), so recordings of different "
        "commands have nothing to compare");
  output->Render(result);
  if (html) {
    RenderDiffHtml(result, html->stream());
    html->Commit();
  }
  return 0;
}

}  // namespace cstool
