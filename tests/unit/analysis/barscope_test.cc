// The barscopes' stacked columns: exact heights and shares from synthetic segments,
// bands joined over columns, CPU rows split by thread, the --html-range clipping, the
// list of threads without a row, and the SVG drawn from a small case.
#include "analysis/barscope.h"

#include <gtest/gtest.h>

#include <array>
#include <deque>
#include <regex>
#include <sstream>

#include "analysis/barscope_stack.h"
#include "analysis/report_view.h"
#include "output/html_output.h"
#include "tests/support/sim.h"

namespace cstool::testing {
namespace {

std::array<uint16_t, 3> Heights(std::array<double, 3> parts, double whole,
                                std::array<bool, 3> min_one) {
  std::array<uint16_t, 3> out{};
  StackHeights(parts, whole, 16, min_one, out);
  return out;
}

TEST(StackHeights, SharesRoundByLargestRemainder) {
  EXPECT_EQ(Heights({50, 25, 25}, 100, {}), (std::array<uint16_t, 3>{8, 4, 4}));
  // 5 % of 16 units is 0.8: its remainder beats 15.2's, so it gets the unit.
  EXPECT_EQ(Heights({5, 95, 0}, 100, {}), (std::array<uint16_t, 3>{1, 15, 0}));
  // 0.5 % rounds to nothing ...
  EXPECT_EQ(Heights({0.5, 99.5, 0}, 100, {}), (std::array<uint16_t, 3>{0, 16, 0}));
  // ... unless it must show: the unit comes from the tallest part.
  EXPECT_EQ(Heights({0.5, 99.5, 0}, 100, {true, false, false}),
            (std::array<uint16_t, 3>{1, 15, 0}));
}

TEST(StackHeights, IdleStaysBlankButAnyRunShows) {
  // A CPU column: `whole` is the column's time, the rest of it idle.
  EXPECT_EQ(Heights({25, 0, 0}, 100, {true, true, true}), (std::array<uint16_t, 3>{4, 0, 0}));
  EXPECT_EQ(Heights({0.1, 0.1, 0}, 100, {true, true, true}), (std::array<uint16_t, 3>{1, 1, 0}));
  EXPECT_EQ(Heights({0, 0, 0}, 100, {true, true, true}), (std::array<uint16_t, 3>{0, 0, 0}));
  // Never taller than the row.
  EXPECT_EQ(Heights({0.1, 0.1, 99.8}, 100, {true, true, false}),
            (std::array<uint16_t, 3>{1, 1, 14}));
}

TEST(BandJoiner, JoinsWhileOffsetAndHeightStay) {
  BandJoiner j;
  auto piece = [](uint32_t key, uint16_t y0, uint16_t h, double t) {
    StackedBand b;
    b.key = key;
    b.y0 = y0;
    b.height = h;
    b.time = t;
    b.whole = 10;
    return b;
  };
  std::vector<StackedBand> c0 = {piece(0, 0, 2, 1), piece(1, 2, 14, 9)};
  std::vector<StackedBand> c1 = {piece(0, 0, 2, 2), piece(1, 2, 14, 8)};
  std::vector<StackedBand> c2 = {piece(0, 0, 2, 1), piece(2, 2, 14, 9)};
  std::vector<StackedBand> c4 = {piece(0, 0, 2, 1)};  // column 3 empty
  j.Column(0, c0);
  j.Column(1, c1);
  j.Column(2, c2);
  j.Column(4, c4);
  std::vector<StackedBand> bands = j.Finish();
  ASSERT_EQ(bands.size(), 4u);
  // Closed first: key 1 over [0, 2), key 0 over [0, 3), key 2 over [2, 3); then key 0 at 4.
  EXPECT_EQ(bands[0].key, 1u);
  EXPECT_EQ(bands[0].col0, 0u);
  EXPECT_EQ(bands[0].col1, 2u);
  EXPECT_EQ(bands[0].time, 17);
  EXPECT_EQ(bands[0].whole, 20);
  EXPECT_EQ(bands[1].key, 0u);
  EXPECT_EQ(bands[1].col1, 3u);
  EXPECT_EQ(bands[1].time, 4);
  EXPECT_EQ(bands[2].key, 2u);
  EXPECT_EQ(bands[2].col0, 2u);
  EXPECT_EQ(bands[3].key, 0u);
  EXPECT_EQ(bands[3].col0, 4u);
  EXPECT_EQ(bands[3].col1, 5u);
}

// Threads fed straight to the observer: `user_ns` of user time at the start of every
// `period` and sleep for the rest, over [0, end).
class SyntheticThreads {
 public:
  explicit SyntheticThreads(BarscopeObserver::Range range = {})
      : scope_(
            syscalls_, [](const Thread&) { return true; }, range) {}
  Thread& Add(int32_t tid, std::string comm) {
    Thread& t = threads_.emplace_back();
    t.id = static_cast<uint32_t>(threads_.size() - 1);
    t.tid = tid;
    t.tgid = 1000;
    t.comm = std::move(comm);
    t.first_ts = 0;
    scope_.OnThreadNew(t);
    return t;
  }
  void Bursts(Thread& t, int64_t period, int64_t user_ns, int64_t end) {
    for (int64_t ts = 0; ts < end; ts += period) {
      scope_.OnStateSegment(t, Microstate::kUser, 0, ts, ts + user_ns);
      scope_.OnStateSegment(t, Microstate::kSleep, 0, ts + user_ns, ts + period);
      t.times[static_cast<size_t>(Microstate::kUser)] += user_ns;
    }
  }
  const BarscopeModel& Finish(int64_t end) {
    scope_.OnTraceEnd(end);
    return scope_.model();
  }
  const SyscallTable& syscalls() const { return syscalls_; }

 private:
  SyscallTable syscalls_;
  std::deque<Thread> threads_;
  BarscopeObserver scope_;
};

// 4.096 ms on a grid of 2 us bins (2048 of them), drawn as 512 columns of 8 us.
constexpr int64_t kEnd = 4'096'000;
constexpr int64_t kColumn = 8'000;

TEST(Barscope, FivePercentOnCpuInEveryColumnIsAFivePercentBand) {
  SyntheticThreads s;
  Thread& t = s.Add(100, "w");
  s.Bursts(t, kColumn, 400, kEnd);  // 5 % user in every column
  const BarscopeChart& c = s.Finish(kEnd).threads;
  EXPECT_EQ(c.bin_ns, kColumn);
  EXPECT_EQ(c.columns, 512u);
  EXPECT_EQ(c.t_end, kEnd);
  ASSERT_EQ(c.rows.size(), 1u);
  const auto& spans = c.rows[0].spans;
  ASSERT_EQ(spans.size(), 2u);
  // One band per state over the whole row: user at the bottom, 1 unit of 16.
  EXPECT_EQ(spans[0].key, static_cast<uint32_t>(Microstate::kUser));
  EXPECT_EQ(spans[0].col0, 0u);
  EXPECT_EQ(spans[0].col1, 512u);
  EXPECT_EQ(spans[0].y0, 0);
  EXPECT_EQ(spans[0].height, 1);
  EXPECT_DOUBLE_EQ(spans[0].share, 0.05);
  EXPECT_EQ(spans[0].title, "Running (user) 5.0% (204.8 us of 4.096 ms), 0.000000-0.004096 s");
  EXPECT_EQ(spans[1].key, static_cast<uint32_t>(Microstate::kSleep));
  EXPECT_EQ(spans[1].y0, 1);
  EXPECT_EQ(spans[1].height, 15);
  EXPECT_DOUBLE_EQ(spans[1].share, 0.95);
}

TEST(Barscope, BurstsShorterThanAColumnKeepTheirShare) {
  SyntheticThreads s;
  Thread& t = s.Add(100, "w");
  // 1 us of user every 64 us: one column in eight holds the burst, 1/8 of it.
  s.Bursts(t, 8 * kColumn, 1'000, kEnd);
  const BarscopeChart& c = s.Finish(kEnd).threads;
  size_t user_bands = 0;
  for (const BarscopeSpan& b : c.rows[0].spans) {
    if (b.key != static_cast<uint32_t>(Microstate::kUser)) continue;
    ++user_bands;
    EXPECT_EQ(b.col0 % 8, 0u);
    EXPECT_EQ(b.col1, b.col0 + 1);
    EXPECT_EQ(b.height, 2);  // 0.125 * 16 units
    EXPECT_DOUBLE_EQ(b.share, 0.125);
  }
  EXPECT_EQ(user_bands, 64u);
}

TEST(Barscope, RangeRebinsInsideIt) {
  SyntheticThreads s({.from = 1'024'000, .to = 2'048'000});
  Thread& t = s.Add(100, "w");
  s.Bursts(t, kColumn, 400, kEnd);
  const BarscopeChart& c = s.Finish(kEnd).threads;
  EXPECT_EQ(c.origin, 0);
  EXPECT_EQ(c.t0, 1'024'000);
  EXPECT_EQ(c.t_end, 2'048'000);
  EXPECT_EQ(c.bin_ns, 2'000);  // 512 columns of 2 us over the 1.024 ms range
  EXPECT_EQ(c.columns, 512u);
  ASSERT_FALSE(c.rows[0].spans.empty());
  double user = 0;
  for (const BarscopeSpan& b : c.rows[0].spans)
    if (b.key == static_cast<uint32_t>(Microstate::kUser))
      user += b.share * (b.col1 - b.col0) * static_cast<double>(c.bin_ns);
  EXPECT_DOUBLE_EQ(user, 128 * 400.0);  // 128 periods of 8 us in the range
  EXPECT_NE(c.rows[0].spans[0].title.find(", 0.001024-0.001026 s"), std::string::npos)
      << c.rows[0].spans[0].title;
}

TEST(Barscope, ThreadsBeyondTheRowCapAreListed) {
  SyntheticThreads s;
  std::vector<Thread*> ts;
  for (int i = 0; i < static_cast<int>(BarscopeObserver::kMaxThreadRows) + 3; ++i)
    ts.push_back(&s.Add(100 + i, "t"));
  for (size_t i = 0; i < ts.size(); ++i) s.Bursts(*ts[i], 64'000, 1'000 * (1 + i % 5), 640'000);
  const BarscopeChart& c = s.Finish(640'000).threads;
  EXPECT_EQ(c.rows.size(), BarscopeObserver::kMaxThreadRows);
  EXPECT_EQ(c.hidden_total, 3u);
  ASSERT_EQ(c.hidden.size(), 3u);
  // By on-CPU time, longest first: tids 614 (5 us x 10), 613 (4 x 10), 612 (3 x 10).
  EXPECT_EQ(c.hidden[0].tid, 614);
  EXPECT_EQ(c.hidden[0].on_cpu_ns, 50'000);
  EXPECT_EQ(c.hidden[1].tid, 613);
  EXPECT_EQ(c.hidden[2].tid, 612);
  EXPECT_EQ(c.hidden[2].on_cpu_ns, 30'000);
  EXPECT_EQ(c.hidden[2].pid, "1000");
  EXPECT_EQ(c.hidden[2].comm, "t");
}

TEST(Barscope, CpuRowsSplitByThreadWithIdleBlank) {
  Sim sim;
  BarscopeObserver scope(sim.syscalls(), [](const Thread&) { return true; });
  sim.AddObserver(&scope);
  // Thread 100 runs 3.2 us of every 64 us on CPU 0: 40 % of one 8-us column in eight.
  const int64_t base = 1'000'000;
  for (int64_t i = 0; i < 64; ++i) {
    sim.Switch(base + i * 64'000, 0, 0, kR, 100);
    sim.Switch(base + i * 64'000 + 3'200, 0, 100, kS, 0);
  }
  sim.Finish(base + kEnd);
  const BarscopeChart& c = scope.model().cpus;
  EXPECT_EQ(c.bin_ns, kColumn);
  ASSERT_GE(c.rows.size(), 1u);
  ASSERT_FALSE(c.legend.empty());
  EXPECT_EQ(c.legend[0].label, "task 100");
  size_t bands = 0;
  for (const BarscopeSpan& b : c.rows[0].spans) {
    ASSERT_EQ(b.key, 0u) << b.title;
    ++bands;
    EXPECT_EQ(b.col0 % 8, 0u);
    EXPECT_EQ(b.col1, b.col0 + 1);
    EXPECT_EQ(b.y0, 0);
    EXPECT_EQ(b.height, 6);  // 0.4 * 16 = 6.4
    EXPECT_DOUBLE_EQ(b.share, 0.4);
  }
  EXPECT_EQ(bands, 64u);
}

// The SVG of a one-thread case, attribute by attribute.
TEST(BarscopeHtml, DrawsStackedBandsOnAScalableSvg) {
  SyntheticThreads s;
  Thread& t = s.Add(100, "w");
  s.Bursts(t, kColumn, 400, kEnd);
  const BarscopeModel& m = s.Finish(kEnd);
  ReportModel model;
  ReportView view = BuildView(model, s.syscalls(), {});
  std::ostringstream os;
  RenderHtml(view, m, os);
  const std::string page = os.str();
  const size_t begin = page.find("<svg id=\"thread-barscope\"");
  ASSERT_NE(begin, std::string::npos);
  const std::string svg = page.substr(begin, page.find("</svg>", begin) - begin);
  // Scales with the page: a viewBox and no fixed width (the CSS sets width:100%).
  EXPECT_NE(svg.find("viewBox=\"0 0 1280 41\""), std::string::npos) << svg.substr(0, 300);
  EXPECT_EQ(svg.find(" width=\"1280\""), std::string::npos);
  EXPECT_NE(page.find("svg.barscope{display:block;width:100%;height:auto;"), std::string::npos);
  // The axis ends at the trace end, at the right edge of the plot.
  EXPECT_NE(svg.find("<line class=\"end\" x1=\"1270.0\""), std::string::npos);
  EXPECT_NE(svg.find(">0.004 s</text>"), std::string::npos);
  // Row 0 starts below the 22-unit axis; user is the bottom unit, sleep the 15 above.
  EXPECT_NE(svg.find("<rect class=\"s\" x=\"170.00\" y=\"37\" width=\"1100.00\" height=\"1\" "
                     "fill=\"#2e9e44\"><title>Running (user) 5.0% (204.8 us of 4.096 "
                     "ms), 0.000000-0.004096 s</title></rect>"),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find("<rect class=\"s\" x=\"170.00\" y=\"22\" width=\"1100.00\" height=\"15\" "
                     "fill=\"#d9d9d9\">"),
            std::string::npos)
      << svg;
  std::regex rect("<rect class=\"s\"");
  EXPECT_EQ(
      std::distance(std::sregex_iterator(svg.begin(), svg.end(), rect), std::sregex_iterator()), 2);
  EXPECT_EQ(page.find("thread-barscope-hidden"), std::string::npos);
}

TEST(BarscopeHtml, ListsThreadsWithoutARow) {
  SyntheticThreads s;
  for (int i = 0; i < static_cast<int>(BarscopeObserver::kMaxThreadRows) + 1; ++i) {
    Thread& t =
        s.Add(100 + i, i == static_cast<int>(BarscopeObserver::kMaxThreadRows) ? "late<1>" : "t");
    s.Bursts(t, 64'000, 2'500, 640'000);
  }
  const BarscopeModel& m = s.Finish(640'000);
  ReportModel model;
  ReportView view = BuildView(model, s.syscalls(), {});
  std::ostringstream os;
  RenderHtml(view, m, os);
  const std::string page = os.str();
  EXPECT_NE(page.find("1 more threads have no row (at most 512 rows)"), std::string::npos);
  EXPECT_NE(page.find("<table id=\"thread-barscope-hidden\">"), std::string::npos);
  EXPECT_NE(page.find("<tr><td>612</td><td>1000</td><td class=\"l\">late&lt;1&gt;</td>"
                      "<td>0.025</td></tr>"),
            std::string::npos);
}

}  // namespace
}  // namespace cstool::testing
