// Fixed-size time binning for pictures of traces of any length: a shared grid of at
// most kMaxColumns columns whose width doubles (and every row's bins merge pairwise)
// whenever the trace outgrows it, so each row costs kMaxColumns bins whatever the
// number of events.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace cstool {

class TimeGrid {
 public:
  static constexpr uint32_t kMaxColumns = 2048;

  void SetOrigin(int64_t ts) {
    if (origin_ < 0) origin_ = ts;
  }
  bool has_origin() const { return origin_ >= 0; }
  int64_t origin() const { return origin_; }
  int64_t width() const { return width_; }
  // Widens the grid until `ts` falls inside it.
  void Cover(int64_t ts) {
    while ((ts - origin_) / width_ >= kMaxColumns) width_ *= 2;
  }
  uint32_t ColumnsUpTo(int64_t end) const {
    if (end <= origin_) return 0;
    return static_cast<uint32_t>(
        std::min<int64_t>((end - origin_ + width_ - 1) / width_, kMaxColumns));
  }

 private:
  int64_t origin_ = -1;
  int64_t width_ = 1000;  // 1 us to start with
};

// One row of bins on a TimeGrid. Bin needs Merge(const Bin&).
template <class Bin>
class BinnedRow {
 public:
  // Calls add(bin, overlap_ns) for every bin [start, end) overlaps.
  template <class F>
  void Add(TimeGrid& grid, int64_t start, int64_t end, F&& add) {
    if (!grid.has_origin()) return;
    start = std::max(start, grid.origin());
    if (end <= start) return;
    grid.Cover(end - 1);
    Sync(grid);
    const int64_t w = width_, o = grid.origin();
    size_t last = static_cast<size_t>((end - 1 - o) / w);
    if (bins_.size() <= last) bins_.resize(last + 1);
    for (size_t i = static_cast<size_t>((start - o) / w); i <= last; ++i) {
      int64_t b0 = o + static_cast<int64_t>(i) * w, b1 = b0 + w;
      add(bins_[i], std::min(end, b1) - std::max(start, b0));
    }
  }
  // The bin holding `ts` (created when needed).
  Bin& At(TimeGrid& grid, int64_t ts) {
    ts = std::max(ts, grid.origin());
    grid.Cover(ts);
    Sync(grid);
    size_t i = static_cast<size_t>((ts - grid.origin()) / width_);
    if (bins_.size() <= i) bins_.resize(i + 1);
    return bins_[i];
  }
  // Brings the row to the grid's current width.
  void Sync(const TimeGrid& grid) {
    while (width_ < grid.width()) {
      size_t n = (bins_.size() + 1) / 2;
      for (size_t i = 0; i < n; ++i) {
        Bin merged = bins_[2 * i];
        if (2 * i + 1 < bins_.size()) merged.Merge(bins_[2 * i + 1]);
        bins_[i] = merged;
      }
      bins_.resize(n);
      width_ *= 2;
    }
  }
  const std::vector<Bin>& bins() const { return bins_; }

 private:
  std::vector<Bin> bins_;
  int64_t width_ = 1000;
};

}  // namespace cstool
