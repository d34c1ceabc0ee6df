#include <fmt/core.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/errors.h"
#include "output/diff_output.h"
#include "output/diff_text.h"
#include "output/section_title.h"

namespace cstool {

std::unique_ptr<DiffOutput> MakeDiffJsonOutput(std::ostream& os);
std::unique_ptr<DiffOutput> MakeDiffCsvOutput(std::ostream& os);

namespace {

using diff_text::Change;
using diff_text::Changed;
using diff_text::Number;
using diff_text::UnitTitle;
using diff_text::WithSpread;

constexpr size_t kSubjectWidth = 32;  // at least

std::string Ids(const std::vector<int32_t>& ids) {
  std::string out;
  for (int32_t id : ids)
    out += fmt::format("{}{}", out.empty() ? "" : ",", id ? std::to_string(id) : "-");
  return out;
}

std::string Files(const std::vector<std::string>& files) {
  std::string out;
  for (const std::string& f : files) out += " " + f;
  return out;
}

class DiffTableOutput : public DiffOutput {
 public:
  DiffTableOutput(std::ostream& os, size_t limit) : os_(os), limit_(limit) {}

  void Render(const DiffResult& r) override {
    // Wide enough for the longest name in the columns (the matched subjects'), so that
    // every row's columns line up.
    subject_width_ = kSubjectWidth;
    for (const DiffSubject& subject : r.subjects)
      if (subject.matched()) subject_width_ = std::max(subject_width_, subject.text.size());
    os_ << fmt::format("cstool diff: {} base recording{} vs {} new\n", r.base_files.size(),
                       r.base_files.size() == 1 ? "" : "s", r.after_files.size());
    os_ << "base:" << Files(r.base_files) << "\nnew: " << Files(r.after_files) << "\n";
    if (r.significance_known()) {
      os_ << "Values are means over each side's recordings [min..max]; * = significant: the "
             "change exceeds the spread (max - min) of both sides.\n";
    } else if (std::min(r.base_files.size(), r.after_files.size()) == 2) {
      os_ << "Values are means over each side's recordings [min..max]. Two recordings on a "
             "side have a narrow spread by chance too often to tell noise by (identical runs "
             "would have a row in five flagged), so no change is flagged significant (give at "
             "least 3 recordings per side).\n";
    } else {
      os_ << "One recording on a side: no spread to tell noise by, so no change is flagged "
             "significant (give at least 3 recordings per side).\n";
    }
    if (std::any_of(r.subjects.begin(), r.subjects.end(), [](const DiffSubject& s) {
          return s.matched() && s.key.is_thread && s.key.thread_nth >= 2;
        }))
      os_ << "Threads that share a name in a process are matched by the order they were created "
             "(NAME#2, #3, ...): where their roles vary between runs (a pool's workers), one's "
             "loss shows as another's gain; the rows BY PROCESS sum them.\n";
    Subjects(r, true);
    Section(r, true, DiffKind::kMicrostate,
            "MICROSTATES BY THREAD (time in ms, then its share in % of the thread's lifetime)");
    Section(r, true, DiffKind::kSyscall, "SYSCALLS BY THREAD (time inside, times blocked, calls)");
    Section(r, true, DiffKind::kSwitchCause, "SWITCH CAUSES BY THREAD");
    Section(r, true, DiffKind::kIrq, "IRQ TIME BY THREAD (interrupts that hit it)");
    Subjects(r, false);
    Section(r, false, DiffKind::kMicrostate,
            "MICROSTATES BY PROCESS (sums over its threads: time in ms, then its share in % of "
            "the summed lifetimes)");
  }

 private:
  // The matches with their ids in each recording, then what only one side has.
  void Subjects(const DiffResult& r, bool threads) {
    const char* what = threads ? "THREADS" : "PROCESSES";
    std::vector<const DiffSubject*> matched, unmatched;
    for (const DiffSubject& s : r.subjects)
      if (s.key.is_thread == threads) (s.matched() ? matched : unmatched).push_back(&s);
    os_ << fmt::format("\nMATCHED {} ({}; {} per recording, - = absent)\n", what, matched.size(),
                       threads ? "TIDS" : "PIDS");
    if (!matched.empty())
      os_ << fmt::format("{:<{}} {:>28} {:>28} {:>12}  {} | {}\n", threads ? "THREAD" : "PROCESS",
                         subject_width_, "BASE LIFE(ms)", "NEW LIFE(ms)", "CHANGE", "BASE IDS",
                         "NEW IDS");
    for (const DiffSubject* s : matched)
      os_ << fmt::format(
          "{:<{}} {:>28} {:>28} {:>12}  {} | {}\n", s->text, subject_width_,
          WithSpread(s->lifetime.base, DiffUnit::kNs), WithSpread(s->lifetime.after, DiffUnit::kNs),
          Change(s->lifetime.change, DiffUnit::kNs), Ids(s->base_ids), Ids(s->after_ids));
    os_ << fmt::format("UNMATCHED {} ({}; on one side only)\n", what, unmatched.size());
    for (const DiffSubject* s : unmatched) {
      const bool base = s->in_base();
      os_ << fmt::format("  {} only: {} (ids {}; life {} ms)\n", base ? "base" : "new ", s->text,
                         Ids(base ? s->base_ids : s->after_ids),
                         WithSpread(base ? s->lifetime.base : s->lifetime.after, DiffUnit::kNs));
    }
  }

  void Section(const DiffResult& r, bool threads, DiffKind kind, std::string_view title) {
    std::vector<const DiffRow*> shown;
    size_t unchanged = 0;
    for (const DiffRow& row : r.rows) {
      if (r.subjects[row.subject].key.is_thread != threads || row.kind != kind) continue;
      if (!Changed(row)) {
        ++unchanged;
        continue;
      }
      shown.push_back(&row);
    }
    os_ << "\n" << SectionTitle(title);
    if (shown.empty()) {
      os_ << fmt::format("no change ({} unchanged)\n", unchanged);
      return;
    }
    const size_t n = limit_ == 0 ? shown.size() : std::min(limit_, shown.size());
    std::string header = fmt::format("{:1} {:<{}} {:<22}", "", threads ? "THREAD" : "PROCESS",
                                     subject_width_, DiffKindName(kind));
    for (const DiffMeasure& m : shown.front()->measures) {
      const std::string unit = UnitTitle(m);
      header += fmt::format(" {:>26} {:>26} {:>12}", "BASE" + unit, "NEW" + unit,
                            "CHANGE" + UnitTitle(m, true));
    }
    os_ << header << "\n";
    for (size_t i = 0; i < n; ++i) {
      const DiffRow& row = *shown[i];
      std::string line = fmt::format(
          "{:1} {:<{}} {:<22}", row.primary().comparison.significant.value_or(false) ? "*" : "",
          r.subjects[row.subject].text, subject_width_, row.name);
      for (const DiffMeasure& m : row.measures)
        line += fmt::format(" {:>26} {:>26} {:>12}", WithSpread(m.comparison.base, m.unit),
                            WithSpread(m.comparison.after, m.unit),
                            Change(m.comparison.change, m.unit));
      os_ << line << "\n";
    }
    if (n < shown.size())
      os_ << fmt::format("({} more changed rows: --limit 0 lists them all)\n", shown.size() - n);
    if (unchanged > 0) os_ << fmt::format("({} unchanged)\n", unchanged);
  }

  std::ostream& os_;
  size_t limit_;
  size_t subject_width_ = kSubjectWidth;
};

}  // namespace

std::unique_ptr<DiffOutput> MakeDiffOutput(std::string_view format, std::ostream& os,
                                           size_t limit) {
  if (format == "table") return std::make_unique<DiffTableOutput>(os, limit);
  if (format == "json") return MakeDiffJsonOutput(os);
  if (format == "csv") return MakeDiffCsvOutput(os);
  throw Error(fmt::format("unknown format '{}' (valid: table, json, csv)", format),
              ExitCode::kUsage);
}

}  // namespace cstool
