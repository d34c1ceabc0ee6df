// The statistics of `cstool diff`: one value per recording on each side, summarised as
// mean and spread (min..max), and a plain significance rule: a change is significant when
// it exceeds the spread of both sides, so run-to-run noise is not reported as a finding.
// min..max rather than a standard deviation: with the few recordings a diff usually has,
// it is the honest statement ("every base run was below every new run" when the ranges do
// not overlap), and it needs no distribution assumed.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace cstool {

struct SideStats {
  std::vector<double> values;  // one per recording the subject appears in
  double mean = 0;
  double min = 0;
  double max = 0;

  size_t runs() const { return values.size(); }
  double spread() const { return max - min; }
};

SideStats Summarize(std::vector<double> values);

// The comparison of one quantity between the sides.
struct Comparison {
  SideStats base;
  SideStats after;    // the new side ("new" is a keyword)
  double change = 0;  // after.mean - base.mean
  // |change| > the spread of both sides, and at least half the quantity's resolution; unknown
  // (nullopt) unless each side has at least kMinRunsForSignificance recordings.
  std::optional<bool> significant;
};

// One run has no spread to tell noise by, and two have a narrow one by chance too often:
// of identical runs (simulated, normal, exponential and uniform noise alike) the rule
// flags a row 19-22 % of the time with two a side, 4-6 % with three, 2-3 % with three
// against four, under 0.5 % with five.
inline constexpr size_t kMinRunsForSignificance = 3;

// The rule: the change of the means exceeds the spread of both sides, and at least half of
// `resolution`. Compare applies it only with kMinRunsForSignificance runs a side.
bool BeyondBothSpreads(const SideStats& base, const SideStats& after, double resolution);

// `resolution`: the last digit shown; a change that rounds to zero there does not count
// (identical runs on both sides have no spread, and a few nanoseconds between them are no
// finding).
Comparison Compare(std::vector<double> base, std::vector<double> after, double resolution = 0);

}  // namespace cstool
