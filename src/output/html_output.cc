#include "output/html_output.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>

#include "output/html_page_style.h"
#include "output/text_escape.h"

namespace cstool {
namespace {

// The page's SVG coordinates; the SVG scales to the page's width (CSS width:100%),
// so on a 1280-px-wide page one unit is one pixel.
constexpr double kLabelWidth = 170;
constexpr double kPlotWidth = 1100;
constexpr double kRightMargin = 10;
constexpr double kRowHeight = 16;
constexpr double kUnitHeight = kRowHeight / BarscopeChart::kRowUnits;
constexpr double kRowGap = 3;
constexpr double kAxisHeight = 22;

std::string Esc(std::string_view s) { return HtmlEscape(s); }

std::string Ms(int64_t ns) { return fmt::format("{:.3f}", static_cast<double>(ns) / 1e6); }

std::string Percent(int64_t part, int64_t whole) {
  if (part == 0 || whole <= 0) return "-";
  return fmt::format("{:.1f}", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

// A round tick step (1, 2 or 5 times a power of ten) giving about eight ticks.
double TickStep(double span_s) {
  double raw = span_s / 8;
  if (raw <= 0) return 1;
  double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

// The rules of this page's own pictures, after kHtmlPageStyle.
const char* kStyle =
    R"(svg.barscope{display:block;width:100%;height:auto;background:#fff;border:1px solid #ccc}
svg.barscope text{font:11px system-ui,sans-serif;fill:#222}
svg.barscope .axis text{fill:#555} svg.barscope .axis line{stroke:#ddd} svg.barscope .axis line.end{stroke:#888}
svg.barscope .bg{fill:#fafafa}
svg.barscope rect.s:hover{stroke:#000;stroke-width:1}
details{margin:4px 0 10px} summary{cursor:pointer;color:#444}
#tip{position:fixed;pointer-events:none;background:#ffe;border:1px solid #aa9;padding:2px 6px;
 font-size:12px;display:none;max-width:600px}
)";

// Shows the hovered span's title next to the pointer (the SVG <title> also works
// natively); records where each barscope is drawn and sets a marker the browser test
// checks once the script has run.
const char* kScript = R"(
(function(){
  var tip=document.getElementById('tip');
  document.querySelectorAll('svg.barscope').forEach(function(svg){
    svg.addEventListener('mousemove',function(ev){
      var t=ev.target.querySelector?ev.target.querySelector('title'):null;
      if(!t||ev.target.tagName!=='rect'){tip.style.display='none';return;}
      var row=ev.target.closest('g.bs-row'),label=row?row.querySelector('text'):null;
      tip.textContent=(label&&ev.target.classList.contains('s')?label.lastChild.textContent+': ':'')+
        t.textContent;
      tip.style.display='block';
      tip.style.left=(ev.clientX+12)+'px';tip.style.top=(ev.clientY+12)+'px';
    });
    svg.addEventListener('mouseleave',function(){tip.style.display='none';});
  });
  // Where each row's plot landed (CSS px), for tests that check a screenshot.
  document.querySelectorAll('svg.barscope g.bs-row').forEach(function(row){
    var b=row.querySelector('rect.bg').getBoundingClientRect();
    row.setAttribute('data-box',[b.left,b.top+window.scrollY,b.width,b.height]
      .map(function(v){return v.toFixed(1);}).join(','));
  });
  var threads=document.querySelectorAll('#thread-barscope g.bs-row').length;
  var cpus=document.querySelectorAll('#cpu-barscope g.bs-row').length;
  document.body.setAttribute('data-rendered','ok');
  document.getElementById('status').textContent=
    'rendered '+threads+' thread rows and '+cpus+' CPU rows';
})();
)";

class HtmlWriter {
 public:
  explicit HtmlWriter(std::ostream& os) : os_(os) {}

  void Page(const ReportView& view, const BarscopeModel& scopes) {
    const TraceSummary& t = view.model->trace;
    os_ << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        << "<title>cstool report: " << Esc(t.file) << "</title>\n<style>" << kHtmlPageStyle
        << kStyle << "</style></head>\n<body>\n";
    os_ << "<h1>cstool report</h1>\n<p class=\"summary\">"
        << Esc(fmt::format("{}: {} events on {} over {:.3f} s", t.file, t.events, view.CpusText(),
                           static_cast<double>(t.last_ts - t.first_ts) / 1e9));
    if (t.has_recording_info && !t.recording.command.empty()) {
      std::string cmd;
      for (auto& a : t.recording.command) cmd += (cmd.empty() ? "" : " ") + a;
      os_ << "<br>command: <code>" << Esc(cmd) << "</code>";
    }
    os_ << "</p>\n";
    if (std::string note = view.UngroupedNote(); !note.empty())
      os_ << "<p class=\"note\">NOTE: " << Esc(note) << "</p>\n";
    os_ << "<p id=\"status\">page script did not run</p>\n";
    Chart("thread-barscope", scopes.threads);
    Chart("cpu-barscope", scopes.cpus);
    Tables(view);
    os_ << "<div id=\"tip\"></div>\n<script>" << kScript << "</script>\n</body></html>\n";
  }

 private:
  void Chart(std::string_view id, const BarscopeChart& c) {
    os_ << "<section><h2>" << Esc(c.title) << "</h2>\n<div class=\"legend\">";
    for (const auto& e : c.legend)
      os_ << "<span><i style=\"background:" << Esc(e.color) << "\"></i>" << Esc(e.label)
          << "</span>";
    os_ << "</div>\n";
    for (const auto& n : c.notes) os_ << "<p class=\"note\">" << Esc(n) << "</p>\n";
    const double height = kAxisHeight + static_cast<double>(c.rows.size()) * (kRowHeight + kRowGap);
    const double width = kLabelWidth + kPlotWidth + kRightMargin;
    // x of a time: the plot ends where the drawn range ends, not at the last column's edge.
    const double span_ns = static_cast<double>(c.t_end - c.t0);
    auto x_of_col = [&](uint32_t col) {
      if (span_ns <= 0) return kLabelWidth;
      const double t = std::min(static_cast<double>(col) * static_cast<double>(c.bin_ns), span_ns);
      return kLabelWidth + t / span_ns * kPlotWidth;
    };
    os_ << fmt::format(
        "<svg id=\"{}\" class=\"barscope\" xmlns=\"http://www.w3.org/2000/svg\" "
        "viewBox=\"0 0 {} {}\" data-columns=\"{}\" data-bin-ns=\"{}\" data-t0-ns=\"{}\" "
        "data-end-ns=\"{}\">\n",
        id, width, height, c.columns, c.bin_ns, c.t0 - c.origin, c.t_end - c.origin);
    Axis(c, height);
    double y = kAxisHeight;
    for (const BarscopeRow& r : c.rows) {
      os_ << fmt::format("<g class=\"bs-row\" data-id=\"{}\">", r.id);
      os_ << fmt::format("<text x=\"4\" y=\"{:.1f}\"><title>{}</title>{}</text>",
                         y + kRowHeight - 4, Esc(r.title), Esc(r.label));
      os_ << fmt::format("<rect class=\"bg\" x=\"{}\" y=\"{:.1f}\" width=\"{}\" height=\"{}\"/>",
                         kLabelWidth, y, kPlotWidth, kRowHeight);
      for (const BarscopeSpan& s : r.spans) {
        const double x0 = x_of_col(s.col0), x1 = x_of_col(s.col1);
        const double top = y + (BarscopeChart::kRowUnits - s.y0 - s.height) * kUnitHeight;
        os_ << fmt::format(
            "<rect class=\"s\" x=\"{:.2f}\" y=\"{:g}\" width=\"{:.2f}\" height=\"{:g}\" "
            "fill=\"{}\"><title>{}</title></rect>",
            x0, top, x1 - x0, s.height * kUnitHeight, Esc(c.legend[s.key].color), Esc(s.title));
      }
      os_ << "</g>\n";
      y += kRowHeight + kRowGap;
    }
    os_ << "</svg>\n";
    Hidden(id, c);
    os_ << "</section>\n";
  }

  // Time axis, in seconds from the start of the trace, ending at the end of the range.
  void Axis(const BarscopeChart& c, double height) {
    const double from_s = static_cast<double>(c.t0 - c.origin) / 1e9;
    const double end_s = static_cast<double>(c.t_end - c.origin) / 1e9;
    const double span_s = end_s - from_s;
    os_ << "<g class=\"axis\">";
    if (span_s > 0) {
      auto x_of = [&](double s) { return kLabelWidth + (s - from_s) / span_s * kPlotWidth; };
      const double step = TickStep(span_s);
      const double end_x = x_of(end_s);
      for (auto i = static_cast<int64_t>(std::ceil(from_s / step - 1e-9));
           static_cast<double>(i) * step <= end_s + 1e-12; ++i) {
        const double tick = static_cast<double>(i) * step;
        const double x = x_of(tick);
        os_ << fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/>", x,
                           kAxisHeight - 4, height);
        // The end label below wins over a tick too close to it.
        if (end_x - x > 45)
          os_ << fmt::format("<text x=\"{:.1f}\" y=\"14\" text-anchor=\"middle\">{:g} s</text>", x,
                             std::round(tick / step) * step + 0.0);  // no "-0"
      }
      os_ << fmt::format(
          "<line class=\"end\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/>"
          "<text class=\"end\" x=\"{0:.1f}\" y=\"14\" text-anchor=\"end\">{3:.3f} s</text>",
          end_x, kAxisHeight - 4, height, end_s);
    }
    os_ << "</g>\n";
  }

  // The threads that got no row, so that nothing is hidden silently.
  void Hidden(std::string_view id, const BarscopeChart& c) {
    if (c.hidden_total == 0) return;
    os_ << "<details open><summary>"
        << Esc(fmt::format("{} more threads have no row (at most {} rows), by on-CPU time over the "
                           "whole trace:",
                           c.hidden_total, c.rows.size()))
        << "</summary>\n<table id=\"" << id << "-hidden\"><tr><th>TID</th><th>PID</th>"
        << "<th class=\"l\">COMM</th><th>ON-CPU(ms)</th></tr>\n";
    for (const BarscopeHiddenRow& h : c.hidden)
      os_ << "<tr><td>" << h.tid << "</td><td>" << Esc(h.pid) << "</td><td class=\"l\">"
          << Esc(h.comm) << "</td><td>"
          << fmt::format("{:.3f}", static_cast<double>(h.on_cpu_ns) / 1e6) << "</td></tr>\n";
    os_ << "</table>";
    if (c.hidden.size() < c.hidden_total)
      os_ << "<p>" << Esc(fmt::format("and {} more", c.hidden_total - c.hidden.size())) << "</p>";
    os_ << "</details>\n";
  }

  void Tables(const ReportView& view) {
    const TraceSummary& t = view.model->trace;
    os_ << "<section><h2>Threads</h2>\n<p>Microstates in % of each thread's observed "
           "lifetime; ! = lost events may have touched it.</p>\n<table id=\"threads\">";
    Header("TID", "PID");
    for (const ThreadReport* r : view.threads) {
      const Thread& th = *r->thread;
      Row(fmt::format("{}{}", th.tid, th.lost_touched ? "!" : ""), PidText(th), th.comm,
          r->Lifetime(), *r, view);
    }
    os_ << "</table></section>\n<section><h2>Processes</h2>\n<table id=\"processes\">";
    Header("PID", "THR");
    for (const ProcessTotals& p : view.processes)
      Row(fmt::format("{}{}", p.pid, p.lost_touched ? "!" : ""), std::to_string(p.threads), p.comm,
          p.lifetime_sum, p.sum, view);
    os_ << "</table></section>\n";
    Wakers(view);
    Syscalls(view);
    os_ << "<section><h2>Lost events and anomalies</h2>\n<p>";
    const uint64_t lost_total = t.LostOnReadCpus();
    std::string per_cpu;
    for (auto [cpu, n] : t.lost_events)
      per_cpu += fmt::format(", cpu{} {}", cpu, view.LostText(cpu, n));
    os_ << Esc(fmt::format("Lost events: {} total{}", lost_total, per_cpu)) << "<br>Anomalies:";
    if (t.anomalies.empty()) os_ << " none";
    for (auto& [name, n] : t.anomalies) os_ << " " << Esc(fmt::format("{}={}", name, n));
    os_ << "</p>\n";
    if (!t.missing_events.empty()) {
      os_ << "<p>Missing events:";
      for (auto& e : t.missing_events) os_ << " " << Esc(e);
      os_ << "</p>\n";
    }
    for (auto& n : t.notes) os_ << "<p class=\"note\">NOTE: " << Esc(n) << "</p>\n";
    os_ << "</section>\n";
  }

  // Who made each thread wait (cstool-report(1), WAKERS), and its migrations.
  void Wakers(const ReportView& view) {
    os_ << "<section><h2>Wakers</h2>\n<p>Woken by: who ended its sleeps (wakeups, blocked ms). "
           "Waited behind: what ran on the CPU it was queued on (ms).</p>\n<table id=\"wakers\">"
           "<tr><th>TID</th><th class=\"l\">COMM</th><th>MIGR</th><th>PREMIG(ms)</th>"
           "<th class=\"l\">WOKEN BY</th><th class=\"l\">WAITED BEHIND</th></tr>\n";
    for (const ThreadReport* r : view.threads) {
      std::string woken, behind;
      for (const WokenBy& w : r->woken_by)
        woken += fmt::format("{}{} {}/{}", woken.empty() ? "" : ", ", PartyText(w.waker), w.wakeups,
                             Ms(w.blocked_ns));
      for (const WaitedBehind& w : r->waited_behind)
        behind +=
            fmt::format("{}{} {}", behind.empty() ? "" : ", ", PartyText(w.running), Ms(w.time_ns));
      os_ << "<tr><td>" << r->thread->tid << "</td><td class=\"l\">" << Esc(r->thread->comm)
          << "</td><td>" << r->migrations << "</td><td>"
          << Ms(r->wait_before_migration_wakeup_ns + r->wait_before_migration_preempted_ns)
          << "</td><td class=\"l\">" << Esc(woken) << "</td><td class=\"l\">" << Esc(behind)
          << "</td></tr>\n";
    }
    os_ << "</table></section>\n";
  }

  // The text report's SYSCALLS (strace -c's view), per thread and per process; none without
  // syscall events in the trace.
  void Syscalls(const ReportView& view) {
    if (!view.AnySyscalls()) return;
    auto table = [&](std::string_view id, std::string_view heading) {
      os_ << "<table id=\"syscalls-" << id << "\"><tr><th>" << heading
          << "</th><th class=\"l\">COMM</th><th>CALLS</th><th>INSIDE(ms)</th>"
             "<th class=\"l\">TOP</th></tr>\n";
    };
    auto row = [&](const std::string& id, const std::string& comm, const ThreadReport& r) {
      const ReportView::SyscallSummary summary = view.TopSyscalls(r, ReportView::kTopSyscalls);
      os_ << "<tr><td>" << Esc(id) << "</td><td class=\"l\">" << Esc(comm) << "</td><td>"
          << summary.total.calls << "</td><td>" << Ms(summary.total.time_ns)
          << "</td><td class=\"l\">" << Esc(ReportView::TopSyscallsText(summary)) << "</td></tr>\n";
    };
    os_ << "<section><h2>Syscalls</h2>\n<p>"
        << fmt::format(
               "Calls and time inside (ms); the {} with the most time: name "
               "calls/blocks/ms, blocks = sleeps inside.",
               ReportView::kTopSyscalls)
        << "</p>\n";
    table("threads", "TID");
    for (const ThreadReport* r : view.threads)
      row(std::to_string(r->thread->tid), r->thread->comm, *r);
    os_ << "</table>\n";
    table("processes", "PID");
    for (const ProcessTotals& p : view.processes) row(std::to_string(p.pid), p.comm, p.sum);
    os_ << "</table></section>\n";
  }

  void Header(std::string_view id1, std::string_view id2) {
    os_ << "<tr><th>" << id1 << "</th><th>" << id2
        << "</th><th class=\"l\">COMM</th><th>LIFE(ms)</th>";
    for (size_t i = 0; i < kMicrostateCount; ++i)
      os_ << "<th title=\"" << kMicrostateNames[i].key << "\">" << kMicrostateNames[i].column
          << "</th>";
    os_ << "<th>VCX</th><th>ICX</th><th class=\"l\">TOP CAUSES</th></tr>\n";
  }

  void Row(const std::string& id1, const std::string& id2, const std::string& comm,
           int64_t lifetime, const ThreadReport& r, const ReportView& view) {
    os_ << "<tr><td>" << Esc(id1) << "</td><td>" << Esc(id2) << "</td><td class=\"l\">" << Esc(comm)
        << "</td><td>" << fmt::format("{:.3f}", static_cast<double>(lifetime) / 1e6) << "</td>";
    for (int64_t v : r.microstates) os_ << "<td>" << Percent(v, lifetime) << "</td>";
    std::string causes;
    size_t i = 0;
    for (auto& [label, count] : view.Causes(r)) {
      if (i++ == 4) break;
      causes += fmt::format("{}{} {}", causes.empty() ? "" : ", ", label, count);
    }
    os_ << "<td>" << r.voluntary << "</td><td>" << r.involuntary << "</td><td class=\"l\">"
        << Esc(causes) << "</td></tr>\n";
  }

  std::ostream& os_;
};

}  // namespace

void RenderHtml(const ReportView& view, const BarscopeModel& scopes, std::ostream& os) {
  HtmlWriter(os).Page(view, scopes);
}

}  // namespace cstool
