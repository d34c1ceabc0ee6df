#include "commands/diff_command.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/diff.h"
#include "analysis/diff_input.h"
#include "analysis/report_view.h"
#include "base/errors.h"
#include "base/output_file.h"
#include "export/trace_id.h"
#include "model/syscall_table.h"
#include "output/diff_output.h"
#include "pipeline/analyze_trace.h"
#include "pipeline/output_guard.h"

namespace cstool {
namespace {

// Why a recording holds only part of its run; empty for a whole one.
std::string PartOfRun(const RecordingInfo& info) {
  if (info.window_start_ts > 0)
    return fmt::format("a flight recorder's dump of {:.1f} s",
                       static_cast<double>(info.end_ts - info.window_start_ts) / 1e9);
  if (info.recovered) return "recovered after its recorder was killed";
  // (Its first clause, "--max-size 1.1 MiB reached": the report says the rest.)
  if (!info.ended_early.empty())
    return fmt::format("cut short: {}", info.ended_early.substr(0, info.ended_early.find(" (")));
  return {};
}

// One recording, reduced to its threads' totals; the analysis is freed before the next
// file is read, so a diff of many recordings holds one analysis at a time.
DiffRecording Load(const std::string& file, const DiffOptions& options,
                   const SyscallTable& syscalls, Messages& messages) {
  // Its errors name the file already.
  std::unique_ptr<AnalyzedTrace> analyzed;
  try {
    analyzed = AnalyzeTrace(file, syscalls,
                            {.salvage = options.salvage,
                             .reader = options.reader,
                             .buffer = options.buffer,
                             .jobs = options.jobs});
  } catch (const DamagedDataError& e) {
    throw Error(fmt::format("{} (--salvage compares what the file still holds)", e.what()));
  }
  for (const std::string& d : analyzed->model.trace.damage)
    messages.Warning(fmt::format("{}: salvaged: {}", file, d));
  if (std::string w = DamagedRecordsWarning(analyzed->model.trace); !w.empty())
    messages.Warning(fmt::format("{}: {}", file, w));
  for (const auto& [cpu, n] : analyzed->model.trace.lost_events)
    if (n > 0) {
      messages.Warning(
          fmt::format("{}: lost events (cpu{} {}): its numbers may be off", file, cpu, n));
      break;
    }
  ViewOptions view_options;
  view_options.all_threads = options.all_threads;
  ReportView view = BuildView(analyzed->model, syscalls, view_options);
  DiffRecording recording = DiffRecordingOf(view, file);
  recording.command = analyzed->model.trace.recording.command;
  recording.missing_events = analyzed->model.trace.missing_events;
  recording.recorded_by_cstool = analyzed->model.trace.has_recording_info;
  recording.part_of_run = PartOfRun(analyzed->model.trace.recording);
  recording.window_dump = analyzed->model.trace.recording.window_start_ts > 0;
  std::sort(recording.missing_events.begin(), recording.missing_events.end());
  return recording;
}

// A run counts once: the same recording twice on a side (a copy, or one path given
// twice) would have no spread, and every difference would look beyond the noise. On both
// sides it is allowed (nothing changes), and said.
void CheckEachRecordingOnce(const DiffOptions& options, Messages& messages) {
  // Only files of one size can be one recording: the others are not read for it. One
  // without a size (a directory, a FIFO) is itself alone; reading it says what it is.
  const auto size_of = [](const std::string& f) -> std::optional<uintmax_t> {
    std::error_code ec;
    const uintmax_t size = std::filesystem::file_size(f, ec);
    return ec ? std::nullopt : std::optional<uintmax_t>(size);
  };
  std::map<uintmax_t, int> sizes;
  for (const auto* side : {&options.base_files, &options.new_files})
    for (const std::string& f : *side)
      if (const auto size = size_of(f)) ++sizes[*size];
  std::map<std::string, std::string> id_by_file;  // one on both sides is read once
  auto id_of = [&](const std::string& f) {
    auto [it, added] = id_by_file.try_emplace(f);
    if (added) {
      const std::optional<uintmax_t> size = size_of(f);
      it->second = !size              ? fmt::format("{}, which has no size", f)
                   : sizes[*size] > 1 ? TraceIdOf(f)
                                      : fmt::format("size {} of {}", *size, f);
    }
    return it->second;
  };
  auto check_side = [&id_of](const std::vector<std::string>& files, const char* side) {
    std::map<std::string, std::string> ids;
    for (const std::string& f : files)
      if (auto [it, added] = ids.emplace(id_of(f), f); !added)
        throw Error(fmt::format("{} and {} are the same recording, both on the {} side: each "
                                "run counts once in the spread",
                                it->second, f, side),
                    ExitCode::kUsage);
    return ids;
  };
  const auto base = check_side(options.base_files, "base");
  const auto after = check_side(options.new_files, "new");
  for (const auto& [id, file] : base)
    if (auto it = after.find(id); it != after.end())
      messages.Warning(
          fmt::format("{} (base) and {} (new) are the same recording", file, it->second));
}

std::string CommandText(const std::vector<std::string>& argv) {
  return argv.empty() ? "(no command)" : fmt::format("{}", fmt::join(argv, " "));
}

// Differences that come from how the sides were recorded, not from the program: events
// one file lacks (their times and counts read as zero there), or other commands.
void WarnAboutRecordingDifferences(const std::vector<DiffRecording>& base,
                                   const std::vector<DiffRecording>& after, Messages& messages) {
  const DiffRecording& first = base.front();
  const DiffRecording* other = nullptr;
  const char* other_side = "base";
  for (const auto* side : {&base, &after})
    for (const DiffRecording& r : *side)
      if (other == nullptr && r.missing_events != first.missing_events) {
        other = &r;
        other_side = side == &base ? "base" : "new";
      }
  if (other != nullptr) {
    auto lacks = [](const DiffRecording& r) {
      return fmt::format("{} lacks {}", r.file,
                         r.missing_events.empty()
                             ? std::string("none")
                             : fmt::format("{}", fmt::join(r.missing_events, ", ")));
    };
    // (A file cstool did not record says only which events it has no record of.)
    const bool foreign = !first.recorded_by_cstool || !other->recorded_by_cstool;
    messages.Warning(fmt::format(
        "{} (base) and {} ({}) {} ({}; {}{}): what those events measure differs by how the "
        "files were recorded, not by the change",
        first.file, other->file, other_side,
        foreign ? "do not hold the same events" : "were recorded with different events",
        lacks(first), lacks(*other),
        foreign ? "; for a file cstool did not record: not recorded, or none happened" : ""));
  }
  // The program by its name, not its path: a build before and one after the change, in
  // two checkouts, is what a diff is for.
  auto program_and_args = [](std::vector<std::string> command) {
    if (!command.empty()) command[0] = std::filesystem::path(command[0]).filename().string();
    return command;
  };
  // Part of a run beside a whole one, or beside another part: its totals are not the
  // run's, so its times differ by how it was recorded. Only dumps of one window length
  // compare like with like (a recording cut short or recovered ends anywhere).
  std::set<std::string> parts;
  bool cut_anywhere = false;
  for (const auto* side : {&base, &after})
    for (const DiffRecording& r : *side) {
      parts.insert(r.part_of_run);
      cut_anywhere = cut_anywhere || (!r.part_of_run.empty() && !r.window_dump);
    }
  if (parts.size() > 1 || cut_anywhere)
    for (const auto* side : {&base, &after})
      for (const DiffRecording& r : *side)
        if (!r.part_of_run.empty())
          messages.Warning(fmt::format(
              "{} ({}) holds only part of its run ({}): its times and counts differ from the "
              "other recordings' by how it was recorded, not by the change",
              r.file, side == &base ? "base" : "new", r.part_of_run));
  std::set<std::vector<std::string>> base_commands, new_commands;
  for (const DiffRecording& r : base) base_commands.insert(program_and_args(r.command));
  for (const DiffRecording& r : after) new_commands.insert(program_and_args(r.command));
  if (base_commands != new_commands && base_commands.size() == 1 && new_commands.size() == 1)
    messages.Warning(fmt::format("the sides ran different commands: base `{}`, new `{}`",
                                 CommandText(base.front().command),
                                 CommandText(after.front().command)));
}

// Passes everything on, and keeps the warnings for the outputs (JSON, HTML), whose
// readers may never see stderr.
class KeptWarnings final : public Messages {
 public:
  explicit KeptWarnings(Messages& to) : to_(to) {}
  void Warning(std::string_view text) override {
    warnings_.emplace_back(text);
    to_.Warning(text);
  }
  void Status(std::string_view text) override { to_.Status(text); }
  void Detail(std::string_view text) override { to_.Detail(text); }
  void Progress(std::string_view text) override { to_.Progress(text); }
  std::vector<std::string> Take() { return std::move(warnings_); }

 private:
  Messages& to_;
  std::vector<std::string> warnings_;
};

}  // namespace

int RunDiff(const DiffOptions& options, std::ostream& out, Messages& to) {
  KeptWarnings messages(to);
  std::unique_ptr<DiffOutput> output =
      MakeDiffOutput(options.format, out, options.limit);  // validate first
  // (Two without -- were split into one each by the command line.)
  if (options.new_files.empty() && options.base_files.size() > 2)
    throw Error(fmt::format("{} recordings and no --: more than two need -- between the ones "
                            "before the change and the ones after: cstool diff BASE... -- NEW...",
                            options.base_files.size()),
                ExitCode::kUsage);
  if (options.base_files.empty() || options.new_files.empty())
    throw Error(
        "give at least one recording on each side, with -- between the ones before the change "
        "and the ones after (two recordings need none): cstool diff BASE... -- NEW...",
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
  CheckEachRecordingOnce(options, messages);
  std::optional<OutputFile> html;
  if (!options.html.empty()) {
    RefuseToOverwriteKeptFile(options.html, "--html");
    html.emplace(options.html);
  }
  SyscallTable syscalls;
  std::vector<DiffRecording> base, after;
  for (const std::string& f : options.base_files)
    base.push_back(Load(f, options, syscalls, messages));
  for (const std::string& f : options.new_files)
    after.push_back(Load(f, options, syscalls, messages));
  WarnAboutRecordingDifferences(base, after, messages);
  DiffResult result = DiffRecordings(base, after);
  if (!result.subjects.empty() && std::none_of(result.subjects.begin(), result.subjects.end(),
                                               [](const DiffSubject& s) { return s.matched(); }))
    messages.Warning(
        "no thread or process is on both sides: threads are matched by process and thread "
        "names (the same program before and after a change), so recordings of different "
        "commands have nothing to compare");
  result.warnings = messages.Take();
  output->Render(result);
  if (html) {
    RenderDiffHtml(result, html->stream());
    html->Commit();
  }
  return 0;
}

}  // namespace cstool
