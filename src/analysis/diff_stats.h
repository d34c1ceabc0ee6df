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
  // (nullopt) unless each side has at least two recordings, as one run has no spread to
  // tell noise by.
  std::optional<bool> significant;
};

inline constexpr size_t kMinRunsForSignificance = 2;

// `resolution`: the last digit shown; a change that rounds to zero there does not count
// (identical runs on both sides have no spread, and a few nanoseconds between them are no
// finding).
Comparison Compare(std::vector<double> base, std::vector<double> after, double resolution = 0);

}  // namespace cstool
