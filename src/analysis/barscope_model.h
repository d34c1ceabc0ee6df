// The two barscopes of the HTML report, ready to draw: rows of bands on a grid of
// equal-width time columns. Each column's height is split among the states (or
// threads) of that column by their share of its time, stacked in legend order from the
// bottom; a band is one legend entry's stretch of adjacent columns at the same height
// and offset. Filled by analysis/barscope, drawn by output/html.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cstool {

struct BarscopeSpan {
  uint32_t col0 = 0;  // [col0, col1) columns
  uint32_t col1 = 0;
  uint32_t key = 0;  // index into the chart's legend
  // Vertical extent in units of the row (BarscopeChart::kRowUnits), from the row's
  // bottom: [y0, y0 + height).
  uint16_t y0 = 0;
  uint16_t height = 0;
  double share = 0;  // the key's time over the time the band's columns were observed
  std::string title;
};

struct BarscopeRow {
  std::string label;  // left of the row
  std::string title;  // hover text of the label
  int64_t id = 0;     // tid (execution barscope) or CPU number (cpu barscope)
  std::vector<BarscopeSpan> spans;
};

struct BarscopeLegendEntry {
  std::string label;
  std::string color;  // CSS colour
};

// A thread without a row (beyond the row cap), listed under the chart.
struct BarscopeHiddenRow {
  std::string comm;
  int64_t tid = 0;
  std::string pid;
  int64_t on_cpu_ns = 0;
};

struct BarscopeChart {
  // A column's full height, in the units of BarscopeSpan::y0 and height.
  static constexpr uint16_t kRowUnits = 16;
  std::string title;
  int64_t t0 = 0;      // time of column 0's left edge (ns)
  int64_t t_end = 0;   // end of the drawn time range (ns); the last column may pass it
  int64_t origin = 0;  // trace start: axis labels are seconds from here
  int64_t bin_ns = 1;  // width of a column
  uint32_t columns = 0;
  std::vector<BarscopeLegendEntry> legend;
  std::vector<BarscopeRow> rows;
  std::vector<BarscopeHiddenRow> hidden;  // by on-CPU time, longest first
  size_t hidden_total = 0;                // hidden may be cut short of this many
  std::vector<std::string> notes;
};

struct BarscopeModel {
  BarscopeChart threads;  // execution barscope: threads x time, by microstate
  BarscopeChart cpus;     // cpu barscope: CPUs x time, by running thread
};

}  // namespace cstool
