// `cstool diff`: recordings before (base) and after (new) a change, matched thread by
// thread (diff_matching.h), and per match the change in every microstate, syscall, switch
// cause and interrupt source, with mean and spread over each side (diff_stats.h).
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/diff_input.h"
#include "analysis/diff_matching.h"
#include "analysis/diff_stats.h"

namespace cstool {

enum class DiffUnit { kNs, kCount, kPercent };
std::string_view DiffUnitName(DiffUnit u);  // "ns", "count", "percent"
// The last digit the diff's tables show of a quantity in `u` (1 us, a tenth of a count or
// of a percentage point): a change that rounds to zero there is not significant.
double DiffResolution(DiffUnit u);

// One quantity of a row, e.g. a microstate's time or its share of the lifetime.
struct DiffMeasure {
  std::string field;  // "time_ns", "share_percent", "blocked", "calls", "count"
  DiffUnit unit = DiffUnit::kNs;
  Comparison comparison;
};

// What a row compares, in the order the report shows the sections.
enum class DiffKind { kMicrostate, kSyscall, kSwitchCause, kIrq };
inline constexpr std::array<std::string_view, 4> kDiffKindNames = {"microstate", "syscall",
                                                                   "switch_cause", "irq"};
inline std::string_view DiffKindName(DiffKind k) { return kDiffKindNames[static_cast<size_t>(k)]; }

// A process or thread, on one side or both.
struct DiffSubject {
  SubjectKey key;
  std::string text;                // key.Text()
  std::vector<int32_t> base_ids;   // its tid (or pid) in each base recording, 0: absent
  std::vector<int32_t> after_ids;  // the same for the new recordings
  Comparison lifetime;             // of the thread; of a process, the sum of its threads'
  bool in_base() const;
  bool in_after() const;
  bool matched() const { return in_base() && in_after(); }
};

struct DiffRow {
  size_t subject = 0;  // index into DiffResult::subjects
  DiffKind kind = DiffKind::kMicrostate;
  std::string name;  // microstate key, syscall name, cause label, interrupt name
  // The first measure is the row's size (what it is sorted by) and its significance.
  std::vector<DiffMeasure> measures;
  const DiffMeasure& primary() const { return measures.front(); }
};

struct DiffResult {
  std::vector<std::string> base_files;
  std::vector<std::string> after_files;
  // Threads then processes, each in key order.
  std::vector<DiffSubject> subjects;
  // For matched subjects; threads before processes, then by kind, then significant
  // changes first, then the largest change first (|primary change|), then by name.
  std::vector<DiffRow> rows;
  // What the command warned about while reading the recordings (lost events, other
  // events or commands on a side): also on stderr, kept here for the outputs.
  std::vector<std::string> warnings;
  bool significance_known() const;  // both sides have kMinRunsForSignificance recordings
};

// Throws nothing; either side may be empty only in tests (the command requires one each).
DiffResult DiffRecordings(const std::vector<DiffRecording>& base,
                          const std::vector<DiffRecording>& after);

// The ordering of DiffResult::rows (exposed for tests).
bool RowComesFirst(const DiffResult& result, const DiffRow& a, const DiffRow& b);

}  // namespace cstool
