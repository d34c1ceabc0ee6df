#include "analysis/diff_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace cstool {

SideStats Summarize(std::vector<double> values) {
  SideStats s;
  s.values = std::move(values);
  if (s.values.empty()) return s;
  s.mean =
      std::accumulate(s.values.begin(), s.values.end(), 0.0) / static_cast<double>(s.values.size());
  auto [lo, hi] = std::minmax_element(s.values.begin(), s.values.end());
  s.min = *lo;
  s.max = *hi;
  return s;
}

Comparison Compare(std::vector<double> base, std::vector<double> after, double resolution) {
  Comparison c;
  c.base = Summarize(std::move(base));
  c.after = Summarize(std::move(after));
  c.change = c.after.mean - c.base.mean;
  if (c.base.runs() >= kMinRunsForSignificance && c.after.runs() >= kMinRunsForSignificance)
    c.significant = BeyondBothSpreads(c.base, c.after, resolution);
  return c;
}

bool BeyondBothSpreads(const SideStats& base, const SideStats& after, double resolution) {
  const double size = std::fabs(after.mean - base.mean);
  return size > base.spread() && size > after.spread() && 2 * size >= resolution;
}

}  // namespace cstool
