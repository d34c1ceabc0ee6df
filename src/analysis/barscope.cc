#include "analysis/barscope.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "analysis/barscope_stack.h"
#include "analysis/report_view.h"
#include "analysis/state_labels.h"

namespace cstool {
namespace {

constexpr std::string_view kThreadPalette[] = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
    "#bcbd22", "#17becf", "#393b79", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896",
    "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5", "#637939"};
constexpr std::string_view kOtherColor = "#b0b0b0";
constexpr uint16_t kUnits = BarscopeChart::kRowUnits;

std::string Duration(double ns) {
  if (ns >= 1e9) return fmt::format("{:.3f} s", ns / 1e9);
  if (ns >= 1e6) return fmt::format("{:.3f} ms", ns / 1e6);
  if (ns >= 1e3) return fmt::format("{:.1f} us", ns / 1e3);
  return fmt::format("{:.0f} ns", ns);
}

// The time range of columns [col0, col1), in seconds from the start of the trace.
std::string Seconds(const BarscopeChart& c, uint32_t col0, uint32_t col1) {
  auto at = [&](uint32_t col) {
    const int64_t t = std::min(c.t0 + static_cast<int64_t>(col) * c.bin_ns, c.t_end);
    return static_cast<double>(t - c.origin) / 1e9;
  };
  return fmt::format("{:.6f}-{:.6f} s", at(col0), at(col1));
}

std::string Share(const StackedBand& b) {
  return fmt::format("{:.1f}% ({} of {})", b.whole > 0 ? 100.0 * b.time / b.whole : 0.0,
                     Duration(b.time), Duration(b.whole));
}

// A column's pieces stacked from the bottom in the order given.
void Stack(uint32_t col, std::span<const uint32_t> keys, std::span<const double> times,
           double whole, std::span<const bool> min_one, std::vector<StackedBand>& pieces) {
  uint16_t heights[32];
  const size_t n = keys.size();
  StackHeights(times, whole, kUnits, min_one, std::span<uint16_t>(heights, n));
  pieces.clear();
  uint16_t y = 0;
  for (size_t i = 0; i < n; ++i) {
    if (heights[i] == 0) continue;
    StackedBand p;
    p.key = keys[i];
    p.y0 = y;
    p.height = heights[i];
    p.col0 = col;
    p.col1 = col + 1;
    p.time = times[i];
    p.whole = whole;
    pieces.push_back(p);
    y = static_cast<uint16_t>(y + heights[i]);
  }
}

std::vector<StackedBand> InColumnOrder(BandJoiner& joiner) {
  std::vector<StackedBand> bands = joiner.Finish();
  std::stable_sort(bands.begin(), bands.end(), [](const StackedBand& a, const StackedBand& b) {
    return a.col0 != b.col0 ? a.col0 < b.col0 : a.y0 < b.y0;
  });
  return bands;
}

}  // namespace

void BarscopeObserver::ThreadBin::Merge(const ThreadBin& o) {
  for (size_t i = 0; i < kMicrostateCount; ++i) dur[i] += o.dur[i];
  switches += o.switches;
  if (o.cause != kNoCause) cause = o.cause;
}

void BarscopeObserver::CpuBin::Add(uint32_t id, float d) {
  for (size_t i = 0; i < kSlots; ++i) {
    if (dur[i] > 0 && thread[i] == id) {
      dur[i] += d;
      return;
    }
  }
  for (size_t i = 0; i < kSlots; ++i) {
    if (dur[i] == 0) {
      thread[i] = id;
      dur[i] = d;
      return;
    }
  }
  rest += d;
}

void BarscopeObserver::CpuBin::Merge(const CpuBin& o) {
  for (size_t i = 0; i < kSlots; ++i)
    if (o.dur[i] > 0) Add(o.thread[i], o.dur[i]);
  rest += o.rest;
}

BarscopeObserver::BarscopeObserver(const SyscallTable& syscalls, ThreadFilter selected, Range range)
    : syscalls_(syscalls),
      selected_(std::move(selected)),
      range_(range),
      occupancy_([this](const CpuRun& r) { AddCpuRun(r); }) {}

// The first thread the state machine knows starts at the first event of the trace; the
// grid starts there, or at the start of the range.
void BarscopeObserver::OnThreadNew(const Thread& t) {
  if (trace_start_ >= 0) return;
  trace_start_ = t.first_ts;
  grid_.SetOrigin(trace_start_ + std::max<int64_t>(range_.from, 0));
  if (range_.to >= 0) range_end_ = trace_start_ + range_.to;
}

BarscopeObserver::ThreadRow* BarscopeObserver::RowOf(const Thread& t) {
  if (t.id >= row_of_.size()) row_of_.resize(t.id + 1, -2);
  int32_t& idx = row_of_[t.id];
  if (idx == -2) {
    if (!selected_(t)) {
      idx = -1;
    } else if (rows_.size() >= kMaxThreadRows) {
      idx = -1;
      hidden_.push_back(&t);
    } else {
      idx = static_cast<int32_t>(rows_.size());
      rows_.push_back({&t, {}});
    }
  }
  return idx >= 0 ? &rows_[idx] : nullptr;
}

void BarscopeObserver::OnStateSegment(const Thread& t, Microstate s, int32_t /*cpu*/, int64_t start,
                                      int64_t end) {
  ThreadRow* row = RowOf(t);
  if (!row) return;
  const size_t k = static_cast<size_t>(s);
  row->bins.Add(grid_, start, std::min(end, range_end_),
                [k](ThreadBin& b, int64_t d) { b.dur[k] += static_cast<float>(d); });
}

void BarscopeObserver::OnCpuCurrent(const CpuCurrentEvent& e) { occupancy_.OnCpuCurrent(e); }

void BarscopeObserver::OnSwitch(const SwitchEvent& e) {
  occupancy_.OnSwitch(e);
  if (!e.prev || !grid_.has_origin() || e.ts < grid_.origin() || e.ts >= range_end_) return;
  ThreadRow* row = RowOf(*e.prev);
  if (!row) return;
  ThreadBin& b = row->bins.At(grid_, e.ts);
  ++b.switches;
  b.cause = e.cause.Pack();
}

void BarscopeObserver::OnLostEvents(int32_t, int64_t, int64_t) { ++lost_gaps_; }

void BarscopeObserver::AddCpuRun(const CpuRun& r) {
  if (r.cpu < 0 || !grid_.has_origin()) return;
  if (static_cast<size_t>(r.cpu) >= cpu_rows_.size()) cpu_rows_.resize(r.cpu + 1);
  uint32_t id = kOtherThread;
  if (selected_(*r.thread)) {
    id = r.thread->id;
    if (id >= threads_by_id_.size()) threads_by_id_.resize(id + 1, nullptr);
    threads_by_id_[id] = r.thread;
  }
  cpu_rows_[r.cpu].Add(grid_, r.start, std::min(r.end, range_end_),
                       [id](CpuBin& b, int64_t d) { b.Add(id, static_cast<float>(d)); });
}

void BarscopeObserver::OnTraceEnd(int64_t ts) {
  occupancy_.OnTraceEnd(ts);
  if (!grid_.has_origin()) return;
  const int64_t end = std::min(ts, range_end_);
  grid_.Cover(std::max(end - 1, grid_.origin()));
  // Merge bins pairwise until the drawn columns fit kDisplayColumns.
  const uint32_t columns = grid_.ColumnsUpTo(end);
  while ((columns + merge_ - 1) / merge_ > kDisplayColumns) merge_ *= 2;
  for (ThreadRow& r : rows_) r.bins.Sync(grid_);
  for (auto& r : cpu_rows_) r.Sync(grid_);
  BuildThreadChart(end);
  BuildCpuChart(end);
  if (end <= grid_.origin()) {
    const std::string note = fmt::format(
        "the range starts at {:.6f} s, after the trace ended at {:.6f} s",
        static_cast<double>(range_.from) / 1e9, static_cast<double>(ts - trace_start_) / 1e9);
    model_.threads.notes.push_back(note);
    model_.cpus.notes.push_back(note);
  }
}

void BarscopeObserver::StartChart(BarscopeChart& c, int64_t end) const {
  c.origin = trace_start_;
  c.t0 = grid_.origin();
  c.t_end = std::max(end, c.t0);
  c.bin_ns = grid_.width() * merge_;
  c.columns = (grid_.ColumnsUpTo(end) + merge_ - 1) / merge_;
}

void BarscopeObserver::BuildThreadChart(int64_t end) {
  BarscopeChart& c = model_.threads;
  c.title = "Execution barscope: threads x time, each column split by the time in each microstate";
  StartChart(c, end);
  for (size_t i = 0; i < kMicrostateCount; ++i)
    c.legend.push_back(
        {std::string(kMicrostateNames[i].label), std::string(kMicrostateNames[i].color)});

  // Rows without a row: the longest on CPU first.
  c.hidden_total = hidden_.size();
  std::vector<std::pair<int64_t, const Thread*>> hidden;
  for (const Thread* t : hidden_) {
    int64_t on_cpu = 0;
    for (size_t i = 0; i < kMicrostateCount; ++i)
      if (IsOnCpu(static_cast<Microstate>(i))) on_cpu += t->times[i];
    hidden.emplace_back(on_cpu, t);
  }
  std::stable_sort(hidden.begin(), hidden.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  if (hidden.size() > kMaxHiddenListed) hidden.resize(kMaxHiddenListed);
  for (auto [on_cpu, t] : hidden) c.hidden.push_back({t->comm, t->tid, PidText(*t), on_cpu});

  std::vector<const ThreadRow*> order;
  for (const ThreadRow& r : rows_) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(), [](const ThreadRow* a, const ThreadRow* b) {
    const Thread &x = *a->thread, &y = *b->thread;
    if (TrackPid(x) != TrackPid(y)) return TrackPid(x) < TrackPid(y);
    if (x.first_ts != y.first_ts) return x.first_ts < y.first_ts;
    return x.tid < y.tid;
  });
  // Stacked from the bottom in microstate order: on-CPU states first, so that their
  // bands keep their place while the waiting and sleeping above them change.
  std::array<uint32_t, kMicrostateCount> keys;
  std::array<bool, kMicrostateCount> min_one;
  for (size_t i = 0; i < kMicrostateCount; ++i) {
    keys[i] = static_cast<uint32_t>(i);
    // The thread's own running, however short, stays visible; interrupt time on it only
    // by its share (a few microseconds of IRQ in every burst would otherwise look big).
    min_one[i] =
        i == static_cast<size_t>(Microstate::kUser) || i == static_cast<size_t>(Microstate::kSys);
  }
  std::vector<StackedBand> pieces;
  for (const ThreadRow* r : order) {
    const Thread& t = *r->thread;
    BarscopeRow row;
    row.id = t.tid;
    row.label = fmt::format("{} {}", t.comm, t.tid);
    row.title = fmt::format("{} (tid {}, pid {})", t.comm, t.tid, PidText(t));
    const auto& bins = r->bins.bins();
    BandJoiner joiner;
    for (uint32_t col = 0; col < c.columns; ++col) {
      ThreadBin b;
      const size_t first = static_cast<size_t>(col) * merge_;
      for (size_t i = first; i < std::min(first + merge_, bins.size()); ++i) b.Merge(bins[i]);
      std::array<double, kMicrostateCount> times;
      double alive = 0;
      for (size_t i = 0; i < kMicrostateCount; ++i) alive += times[i] = b.dur[i];
      Stack(col, keys, times, alive, min_one, pieces);
      for (StackedBand& p : pieces) {
        p.switches = b.switches;
        p.cause = b.cause;
      }
      joiner.Column(col, pieces);
    }
    for (const StackedBand& b : InColumnOrder(joiner)) {
      // The row's label is left out: the page's tooltip adds it.
      std::string title = fmt::format("{} {}, {}", kMicrostateNames[b.key].label, Share(b),
                                      Seconds(c, b.col0, b.col1));
      if (b.switches > 0)
        title +=
            fmt::format("; {} switch{}, last cause {}", b.switches, b.switches == 1 ? "" : "es",
                        syscalls_.CauseLabel(SwitchCause::Unpack(b.cause)));
      row.spans.push_back(
          {b.col0, b.col1, b.key, b.y0, b.height, b.time / b.whole, std::move(title)});
    }
    c.rows.push_back(std::move(row));
  }
}

void BarscopeObserver::BuildCpuChart(int64_t end) {
  BarscopeChart& c = model_.cpus;
  // (Before a CPU's first event nothing tells what ran there: a pid-filtered recording
  // shows an unfollowed task only when it switches to or from a followed one.)
  c.title =
      "CPU barscope: CPUs x time, each column split by the share of each thread (blank: idle, "
      "or not known, as before a CPU's first event)";
  StartChart(c, end);
  if (lost_gaps_ > 0)
    c.notes.push_back(
        fmt::format("{} lost-events gaps: what ran around them is unknown", lost_gaps_));

  // Legend: the selected threads that ran, by process and tid; then everything else.
  std::vector<const Thread*> ran;
  for (const Thread* t : threads_by_id_)
    if (t) ran.push_back(t);
  std::stable_sort(ran.begin(), ran.end(), [](const Thread* x, const Thread* y) {
    if (TrackPid(*x) != TrackPid(*y)) return TrackPid(*x) < TrackPid(*y);
    return x->tid < y->tid;
  });
  std::map<uint32_t, uint32_t> key_of;  // Thread::id -> legend index
  constexpr size_t kPalette = std::size(kThreadPalette);
  for (const Thread* t : ran) {
    key_of[t->id] = static_cast<uint32_t>(c.legend.size());
    c.legend.push_back({fmt::format("{} {}", t->comm, t->tid),
                        std::string(kThreadPalette[c.legend.size() % kPalette])});
  }
  const uint32_t other_key = static_cast<uint32_t>(c.legend.size());
  c.legend.push_back({"other tasks", std::string(kOtherColor)});
  if (ran.size() > kPalette)
    c.notes.push_back(
        fmt::format("{} threads share {} colours; hover for names", ran.size(), kPalette));

  std::vector<StackedBand> pieces;
  for (size_t cpu = 0; cpu < cpu_rows_.size(); ++cpu) {
    BarscopeRow row;
    row.id = static_cast<int64_t>(cpu);
    row.label = fmt::format("CPU {}", cpu);
    row.title = row.label;
    const auto& bins = cpu_rows_[cpu].bins();
    BandJoiner joiner;
    for (uint32_t col = 0; col < c.columns; ++col) {
      CpuBin b;
      const size_t first = static_cast<size_t>(col) * merge_;
      for (size_t i = first; i < std::min(first + merge_, bins.size()); ++i) b.Merge(bins[i]);
      // The threads of the column in legend order, "other tasks" last; idle stays blank.
      std::array<std::pair<uint32_t, double>, CpuBin::kSlots + 1> ran_here;
      size_t n = 0;
      double other = b.rest;
      for (size_t i = 0; i < CpuBin::kSlots; ++i) {
        if (b.dur[i] <= 0) continue;
        if (b.thread[i] == kOtherThread)
          other += b.dur[i];
        else
          ran_here[n++] = {key_of.at(b.thread[i]), b.dur[i]};
      }
      for (size_t i = 1; i < n; ++i)  // at most kSlots: insertion sort
        for (size_t j = i; j > 0 && ran_here[j] < ran_here[j - 1]; --j)
          std::swap(ran_here[j], ran_here[j - 1]);
      if (other > 0) ran_here[n++] = {other_key, other};
      std::array<uint32_t, CpuBin::kSlots + 1> keys;
      std::array<double, CpuBin::kSlots + 1> times;
      std::array<bool, CpuBin::kSlots + 1> min_one;
      for (size_t i = 0; i < n; ++i) {
        keys[i] = ran_here[i].first;
        times[i] = ran_here[i].second;
        min_one[i] = true;
      }
      const int64_t col_start = c.t0 + static_cast<int64_t>(col) * c.bin_ns;
      const double whole = static_cast<double>(std::min(col_start + c.bin_ns, c.t_end) - col_start);
      Stack(col, std::span(keys.data(), n), std::span(times.data(), n), whole,
            std::span(min_one.data(), n), pieces);
      joiner.Column(col, pieces);
    }
    for (const StackedBand& b : InColumnOrder(joiner))
      row.spans.push_back({b.col0, b.col1, b.key, b.y0, b.height, b.time / b.whole,
                           fmt::format("{} ran {}, {}", c.legend[b.key].label, Share(b),
                                       Seconds(c, b.col0, b.col1))});
    c.rows.push_back(std::move(row));
  }
}

}  // namespace cstool
