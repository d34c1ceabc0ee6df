// How the diff renderers write numbers: ms for ns, shares with one decimal, counts as
// integers when they are (a mean of counts need not be), and a sign on every change.
#pragma once

#include <fmt/core.h>

#include <cmath>
#include <string>

#include "analysis/diff.h"
#include "analysis/diff_stats.h"

namespace cstool::diff_text {

inline std::string Number(double v, DiffUnit unit) {
  switch (unit) {
    case DiffUnit::kNs:
      return fmt::format("{:.3f}", v / 1e6);
    case DiffUnit::kPercent:
      return fmt::format("{:.1f}", v);
    case DiffUnit::kCount:
      return v == std::floor(v) ? fmt::format("{:.0f}", v) : fmt::format("{:.1f}", v);
  }
  return "?";
}

inline std::string Change(double v, DiffUnit unit) {
  std::string n = Number(std::fabs(v), unit);
  if (n.find_first_not_of("0.") == std::string::npos) return n;  // rounds to zero: no sign
  return (v < 0 ? "-" : "+") + n;
}

// "52.100" for one run, "52.100 [51.900..52.300]" for several.
inline std::string WithSpread(const SideStats& s, DiffUnit unit) {
  if (s.runs() <= 1) return Number(s.mean, unit);
  return fmt::format("{} [{}..{}]", Number(s.mean, unit), Number(s.min, unit), Number(s.max, unit));
}

// The unit as a column header: (ms), (%), or the field's own name for counts; a change
// of a share is in percentage points (pp).
inline std::string UnitTitle(const DiffMeasure& m, bool change = false) {
  switch (m.unit) {
    case DiffUnit::kNs:
      return "(ms)";
    case DiffUnit::kPercent:
      return change ? "(pp)" : "(%)";
    case DiffUnit::kCount:
      return "(" + m.field + ")";
  }
  return "";
}

inline bool Changed(const DiffRow& row) {
  for (const DiffMeasure& m : row.measures)
    if (m.comparison.change != 0 || m.comparison.significant.value_or(false)) return true;
  return false;
}

}  // namespace cstool::diff_text
