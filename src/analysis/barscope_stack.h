// How the barscopes split a column's height among what shared its time, and how the
// pieces of adjacent columns join into bands (analysis/barscope).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

namespace cstool {

// Splits `units` of column height among `parts` by their share of `whole`: each part
// gets its exact share rounded by largest remainder, so that the heights add up to the
// rounded total share. A part with min_one[i] and any time gets at least one unit, taken
// from the tallest part when the column would overflow: a 1 ms burst in a 30 ms column
// stays visible.
inline void StackHeights(std::span<const double> parts, double whole, uint16_t units,
                         std::span<const bool> min_one, std::span<uint16_t> out) {
  std::fill(out.begin(), out.end(), 0);
  const double total = std::accumulate(parts.begin(), parts.end(), 0.0);
  if (whole <= 0 || total <= 0) return;
  const auto target = static_cast<int>(std::lround(units * std::min(total, whole) / whole));
  std::vector<double> rest(parts.size());
  int given = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const double exact = units * std::max(parts[i], 0.0) / whole;
    out[i] = static_cast<uint16_t>(std::floor(exact));
    rest[i] = exact - out[i];
    given += out[i];
  }
  for (; given < target; ++given) {
    size_t best = 0;
    for (size_t i = 1; i < parts.size(); ++i)
      if (rest[i] > rest[best]) best = i;
    ++out[best];
    rest[best] = -1;
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!min_one[i] || parts[i] <= 0 || out[i] > 0) continue;
    out[i] = 1;
    if (++given <= units) continue;
    size_t tallest = 0;
    for (size_t j = 1; j < parts.size(); ++j)
      if (out[j] > out[tallest]) tallest = j;
    --out[tallest];
    --given;
  }
}

// One legend entry's stretch [col0, col1) at one height and offset, with the times of
// its columns: `time` in the entry, `whole` the columns' time (the share's divisor).
struct StackedBand {
  uint32_t key = 0;
  uint16_t y0 = 0;
  uint16_t height = 0;
  uint32_t col0 = 0;
  uint32_t col1 = 0;
  double time = 0;
  double whole = 0;
  uint64_t switches = 0;
  uint32_t cause = UINT32_MAX;  // the latest cause seen (packed), UINT32_MAX none
};

// Joins each key's pieces of consecutive columns into one band while its offset and
// height stay the same; a band ends where the key is absent or moves.
class BandJoiner {
 public:
  // `pieces`: column `col`'s non-empty pieces (col0 = col), at most one per key.
  void Column(uint32_t col, std::span<const StackedBand> pieces) {
    next_.clear();
    for (const StackedBand& p : pieces) {
      auto it = std::find_if(open_.begin(), open_.end(), [&](const StackedBand& b) {
        return b.key == p.key && b.col1 == col && b.y0 == p.y0 && b.height == p.height;
      });
      if (it == open_.end()) {
        next_.push_back(p);
        next_.back().col0 = col;
        next_.back().col1 = col + 1;
        continue;
      }
      StackedBand b = *it;
      it->height = 0;  // taken
      b.col1 = col + 1;
      b.time += p.time;
      b.whole += p.whole;
      b.switches += p.switches;
      if (p.cause != UINT32_MAX) b.cause = p.cause;
      next_.push_back(b);
    }
    for (const StackedBand& b : open_)
      if (b.height > 0) done_.push_back(b);
    open_.swap(next_);
  }
  // Every band, closed ones first in the order they ended.
  std::vector<StackedBand> Finish() {
    for (const StackedBand& b : open_) done_.push_back(b);
    open_.clear();
    std::vector<StackedBand> out;
    out.swap(done_);
    return out;
  }

 private:
  std::vector<StackedBand> open_, next_, done_;
};

}  // namespace cstool
