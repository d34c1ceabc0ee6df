// The two barscopes of the HTML report, ready to draw: rows of merged spans on a grid
// of equal-width time columns (each at most a pixel or so wide), a legend, and the
// hover text of every span. Filled by analysis/barscope, drawn by output/html.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cstool {

struct BarscopeSpan {
  uint32_t col0 = 0;  // [col0, col1) columns
  uint32_t col1 = 0;
  uint32_t key = 0;  // index into the chart's legend
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

struct BarscopeChart {
  std::string title;
  int64_t t0 = 0;      // time of column 0's left edge (ns)
  int64_t bin_ns = 1;  // width of a column
  uint32_t columns = 0;
  std::vector<BarscopeLegendEntry> legend;
  std::vector<BarscopeRow> rows;
  std::vector<std::string> notes;
};

struct BarscopeModel {
  BarscopeChart threads;  // execution barscope: threads x time, coloured by microstate
  BarscopeChart cpus;     // cpu barscope: CPUs x time, coloured by thread
};

}  // namespace cstool
