#include <fmt/core.h>

#include <algorithm>
#include <string>
#include <vector>

#include "model/microstate.h"
#include "output/diff_output.h"
#include "output/diff_text.h"
#include "output/html_page_style.h"
#include "output/text_escape.h"

namespace cstool {
namespace {

using diff_text::Change;
using diff_text::Changed;
using diff_text::Number;
using diff_text::UnitTitle;
using diff_text::WithSpread;

// SVG coordinates; the SVG scales to the page's width like the report's barscopes.
constexpr double kLabelWidth = 380;
constexpr double kPlotWidth = 760;
constexpr double kChangeWidth = 140;
constexpr double kBarHeight = 9;
constexpr double kPairGap = 8;
constexpr size_t kChartRows = 25;
constexpr std::string_view kBaseColor = "#6e6e6e";
constexpr std::string_view kNewColor = "#1f6fd1";

std::string Esc(std::string_view s) { return HtmlEscape(s); }

// The rules of this page's own pictures, after kHtmlPageStyle.
const char* kStyle =
    R"(svg.pairs{display:block;width:100%;height:auto;background:#fff;border:1px solid #ccc}
svg.pairs text{font:11px system-ui,sans-serif;fill:#222} svg.pairs text.sig{font-weight:bold}
svg.pairs line.whisker{stroke:#000;stroke-width:1} svg.pairs rect.new{stroke:#444;stroke-width:0.5}
)";

// The colour of a row's new bar: the microstate's own colour, else one blue.
std::string_view NewColor(const DiffRow& row) {
  if (row.kind == DiffKind::kMicrostate)
    for (const MicrostateNames& n : kMicrostateNames)
      if (n.key == row.name) return n.color;
  return kNewColor;
}

class DiffHtmlWriter {
 public:
  explicit DiffHtmlWriter(std::ostream& os) : os_(os) {}

  void Page(const DiffResult& r) {
    os_ << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        << "<title>cstool diff</title>\n<style>" << kHtmlPageStyle << kStyle
        << "</style></head>\n<body>\n"
        << "<h1>cstool diff</h1>\n<p class=\"summary\">base:";
    for (const std::string& f : r.base_files) os_ << " <code>" << Esc(f) << "</code>";
    os_ << "<br>new:";
    for (const std::string& f : r.after_files) os_ << " <code>" << Esc(f) << "</code>";
    os_ << "</p>\n<p class=\"note\">"
        << (r.significance_known()
                ? "Bars are means over each side's recordings, the black line their spread "
                  "(min..max); * = significant: the change exceeds the spread of both sides."
                : "Fewer than 3 recordings on a side: no spread to tell noise by, so no change "
                  "is flagged significant.")
        << "</p>\n";
    for (const std::string& w : r.warnings)
      os_ << "<p class=\"note\"><b>warning:</b> " << Esc(w) << "</p>\n";
    os_ << "<div class=\"legend\"><span><i style=\"background:" << kBaseColor
        << "\"></i>base</span><span><i style=\"background:" << kNewColor
        << "\"></i>new (microstates in their own colour)</span></div>\n";
    Chart(r, DiffKind::kMicrostate, "Microstates by thread");
    Chart(r, DiffKind::kSyscall, "Time in syscalls by thread");
    Chart(r, DiffKind::kSwitchCause, "Switch causes by thread");
    Chart(r, DiffKind::kIrq, "IRQ time by thread");
    Unmatched(r);
    Table(r);
    os_ << "</body></html>\n";
  }

 private:
  // The changed thread rows of one kind, as paired bars, largest first.
  void Chart(const DiffResult& r, DiffKind kind, std::string_view title) {
    std::vector<const DiffRow*> rows;
    for (const DiffRow& row : r.rows)
      if (r.subjects[row.subject].key.is_thread && row.kind == kind && Changed(row))
        rows.push_back(&row);
    os_ << "<section><h2>" << Esc(title) << "</h2>\n";
    if (rows.empty()) {
      os_ << "<p>no change</p></section>\n";
      return;
    }
    const size_t n = std::min(rows.size(), kChartRows);
    double scale = 0;
    for (size_t i = 0; i < n; ++i) {
      const Comparison& c = rows[i]->primary().comparison;
      scale = std::max({scale, c.base.max, c.after.max});
    }
    const double pair = 2 * kBarHeight + kPairGap;
    const double width = kLabelWidth + kPlotWidth + kChangeWidth;
    os_ << fmt::format(
        "<svg class=\"pairs\" id=\"pairs-{}\" xmlns=\"http://www.w3.org/2000/svg\" "
        "viewBox=\"0 0 {} {}\">\n",
        DiffKindName(kind), width, static_cast<double>(n) * pair + kPairGap);
    auto x_of = [&](double v) { return kLabelWidth + (scale > 0 ? v / scale * kPlotWidth : 0); };
    for (size_t i = 0; i < n; ++i) {
      const DiffRow& row = *rows[i];
      const DiffMeasure& m = row.primary();
      const Comparison& c = m.comparison;
      const double y = kPairGap + static_cast<double>(i) * pair;
      const bool sig = c.significant.value_or(false);
      os_ << fmt::format("<g class=\"pair\" data-subject=\"{}\" data-name=\"{}\">",
                         Esc(r.subjects[row.subject].text), Esc(row.name));
      os_ << fmt::format("<text x=\"4\" y=\"{:.1f}\">{}{} · {}</text>", y + kBarHeight + 3,
                         sig ? "* " : "", Esc(r.subjects[row.subject].text), Esc(row.name));
      Bar(c.base, m, y, kBaseColor, "base", x_of);
      Bar(c.after, m, y + kBarHeight, NewColor(row), "new", x_of);
      os_ << fmt::format("<text{} x=\"{:.1f}\" y=\"{:.1f}\">{} {}</text></g>\n",
                         sig ? " class=\"sig\"" : "", kLabelWidth + kPlotWidth + 6,
                         y + kBarHeight + 3, Esc(Change(c.change, m.unit)),
                         Esc(UnitTitle(m, true)));
    }
    os_ << "</svg>\n";
    if (n < rows.size())
      os_ << "<p>" << rows.size() - n << " more changed rows are in the table below.</p>\n";
    os_ << "</section>\n";
  }

  template <typename XOf>
  void Bar(const SideStats& s, const DiffMeasure& m, double y, std::string_view color,
           std::string_view side, XOf x_of) {
    os_ << fmt::format(
        "<rect class=\"{}\" x=\"{}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{}\" "
        "fill=\"{}\"><title>{}: {} {}</title></rect>",
        side, kLabelWidth, y, x_of(s.mean) - kLabelWidth, kBarHeight - 1, color, side,
        Esc(WithSpread(s, m.unit)), Esc(UnitTitle(m)));
    if (s.runs() > 1)
      os_ << fmt::format(
          "<line class=\"whisker\" x1=\"{0:.2f}\" x2=\"{1:.2f}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\"/>",
          x_of(s.min), x_of(s.max), y + (kBarHeight - 1) / 2);
  }

  void Unmatched(const DiffResult& r) {
    os_ << "<section><h2>On one side only</h2>\n<table id=\"unmatched\"><tr><th class=\"l\">"
           "SIDE</th><th class=\"l\">SUBJECT</th><th>LIFE(ms)</th></tr>\n";
    size_t count = 0;
    for (const DiffSubject& s : r.subjects) {
      if (s.matched()) continue;
      ++count;
      const bool base = s.in_base();
      os_ << "<tr><td class=\"l\">" << (base ? "base" : "new") << "</td><td class=\"l\">"
          << Esc(s.text) << "</td><td>"
          << Esc(WithSpread(base ? s.lifetime.base : s.lifetime.after, DiffUnit::kNs))
          << "</td></tr>\n";
    }
    os_ << "</table>" << (count == 0 ? "<p>none: every thread and process matched</p>" : "")
        << "</section>\n";
  }

  // Every changed row, threads then processes, by kind.
  void Table(const DiffResult& r) {
    os_ << "<section><h2>All changes</h2>\n<table id=\"changes\"><tr><th>SIG</th><th "
           "class=\"l\">SUBJECT</th><th class=\"l\">KIND</th><th class=\"l\">NAME</th><th "
           "class=\"l\">MEASURE</th><th>BASE</th><th>NEW</th><th>CHANGE</th></tr>\n";
    for (const DiffRow& row : r.rows) {
      if (!Changed(row)) continue;
      for (const DiffMeasure& m : row.measures) {
        const Comparison& c = m.comparison;
        os_ << "<tr><td>" << (c.significant.value_or(false) ? "*" : "") << "</td><td class=\"l\">"
            << Esc(r.subjects[row.subject].text) << "</td><td class=\"l\">"
            << DiffKindName(row.kind) << "</td><td class=\"l\">" << Esc(row.name)
            << "</td><td class=\"l\">" << Esc(m.field + " " + UnitTitle(m)) << "</td><td>"
            << Esc(WithSpread(c.base, m.unit)) << "</td><td>" << Esc(WithSpread(c.after, m.unit))
            << "</td><td>" << Esc(Change(c.change, m.unit)) << "</td></tr>\n";
      }
    }
    os_ << "</table></section>\n";
  }

  std::ostream& os_;
};

}  // namespace

void RenderDiffHtml(const DiffResult& result, std::ostream& os) { DiffHtmlWriter(os).Page(result); }

}  // namespace cstool
