#include "analysis/barscope.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "analysis/report_view.h"
#include "analysis/state_labels.h"

namespace cstool {
namespace {

constexpr std::string_view kThreadPalette[] = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
    "#bcbd22", "#17becf", "#393b79", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896",
    "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5", "#637939"};
constexpr std::string_view kOtherColor = "#b0b0b0";

std::string Duration(double ns) {
  if (ns >= 1e9) return fmt::format("{:.3f} s", ns / 1e9);
  if (ns >= 1e6) return fmt::format("{:.3f} ms", ns / 1e6);
  if (ns >= 1e3) return fmt::format("{:.1f} us", ns / 1e3);
  return fmt::format("{:.0f} ns", ns);
}

std::string Range(const BarscopeChart& c, uint32_t col0, uint32_t col1) {
  return fmt::format("{:.6f}-{:.6f} s", static_cast<double>(col0) * c.bin_ns / 1e9,
                     static_cast<double>(col1) * c.bin_ns / 1e9);
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

BarscopeObserver::BarscopeObserver(const SyscallTable& syscalls, ThreadFilter selected)
    : syscalls_(syscalls),
      selected_(std::move(selected)),
      occupancy_([this](const CpuRun& r) { AddCpuRun(r); }) {}

// The first thread the state machine knows starts at the first event of the trace.
void BarscopeObserver::OnThreadNew(const Thread& t) { grid_.SetOrigin(t.first_ts); }

BarscopeObserver::ThreadRow* BarscopeObserver::RowOf(const Thread& t) {
  if (t.id >= row_of_.size()) row_of_.resize(t.id + 1, -2);
  int32_t& idx = row_of_[t.id];
  if (idx == -2) {
    if (!selected_(t)) {
      idx = -1;
    } else if (rows_.size() >= kMaxThreadRows) {
      idx = -1;
      ++rows_left_out_;
    } else {
      idx = static_cast<int32_t>(rows_.size());
      rows_.push_back({&t, {}});
    }
  }
  return idx >= 0 ? &rows_[idx] : nullptr;
}

void BarscopeObserver::OnStateSegment(const Thread& t, Microstate s, int64_t start, int64_t end) {
  ThreadRow* row = RowOf(t);
  if (!row) return;
  const size_t k = static_cast<size_t>(s);
  row->bins.Add(grid_, start, end,
                [k](ThreadBin& b, int64_t d) { b.dur[k] += static_cast<float>(d); });
}

void BarscopeObserver::OnCpuCurrent(const CpuCurrentEvent& e) { occupancy_.OnCpuCurrent(e); }

void BarscopeObserver::OnSwitch(const SwitchEvent& e) {
  occupancy_.OnSwitch(e);
  if (!e.prev || !grid_.has_origin()) return;
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
  cpu_rows_[r.cpu].Add(grid_, r.start, r.end,
                       [id](CpuBin& b, int64_t d) { b.Add(id, static_cast<float>(d)); });
}

void BarscopeObserver::OnTraceEnd(int64_t ts) {
  occupancy_.OnTraceEnd(ts);
  if (!grid_.has_origin()) return;
  grid_.Cover(std::max(ts - 1, grid_.origin()));
  for (ThreadRow& r : rows_) r.bins.Sync(grid_);
  for (auto& r : cpu_rows_) r.Sync(grid_);
  BuildThreadChart(ts);
  BuildCpuChart(ts);
}

void BarscopeObserver::BuildThreadChart(int64_t end) {
  BarscopeChart& c = model_.threads;
  c.title = "Execution barscope: threads x time, coloured by microstate";
  c.t0 = grid_.origin();
  c.bin_ns = grid_.width();
  c.columns = grid_.ColumnsUpTo(end);
  for (size_t i = 0; i < kMicrostateCount; ++i)
    c.legend.push_back(
        {std::string(kMicrostateNames[i].label), std::string(kMicrostateNames[i].color)});
  if (rows_left_out_ > 0)
    c.notes.push_back(fmt::format("{} more threads are not drawn (at most {} rows)", rows_left_out_,
                                  kMaxThreadRows));

  std::vector<const ThreadRow*> order;
  for (const ThreadRow& r : rows_) order.push_back(&r);
  std::stable_sort(order.begin(), order.end(), [](const ThreadRow* a, const ThreadRow* b) {
    const Thread &x = *a->thread, &y = *b->thread;
    if (TrackPid(x) != TrackPid(y)) return TrackPid(x) < TrackPid(y);
    if (x.first_ts != y.first_ts) return x.first_ts < y.first_ts;
    return x.tid < y.tid;
  });
  for (const ThreadRow* r : order) {
    const Thread& t = *r->thread;
    BarscopeRow row;
    row.id = t.tid;
    row.label = fmt::format("{} {}", t.comm, t.tid);
    row.title = fmt::format("{} (tid {}, pid {})", t.comm, t.tid, PidText(t));
    const auto& bins = r->bins.bins();
    const uint32_t n = std::min<uint32_t>(c.columns, static_cast<uint32_t>(bins.size()));
    uint32_t col = 0;
    while (col < n) {
      auto dominant = [&](const ThreadBin& b) {
        size_t best = kMicrostateCount;
        float best_d = 0;
        for (size_t i = 0; i < kMicrostateCount; ++i)
          if (b.dur[i] > best_d) best = i, best_d = b.dur[i];
        return best;
      };
      size_t key = dominant(bins[col]);
      if (key == kMicrostateCount) {
        ++col;
        continue;
      }
      uint32_t end_col = col;
      double in_state = 0, alive = 0;
      uint64_t switches = 0;
      uint32_t cause = kNoCause;
      while (end_col < n && dominant(bins[end_col]) == key) {
        const ThreadBin& b = bins[end_col];
        in_state += b.dur[key];
        for (float d : b.dur) alive += d;
        switches += b.switches;
        if (b.cause != kNoCause) cause = b.cause;
        ++end_col;
      }
      std::string title =
          fmt::format("{}: {}, {} of {} ({})", row.label, kMicrostateNames[key].label,
                      Duration(in_state), Duration(alive), Range(c, col, end_col));
      if (switches > 0)
        title += fmt::format("; {} switch{}, last cause {}", switches, switches == 1 ? "" : "es",
                             syscalls_.CauseLabel(SwitchCause::Unpack(cause)));
      row.spans.push_back({col, end_col, static_cast<uint32_t>(key), std::move(title)});
      col = end_col;
    }
    c.rows.push_back(std::move(row));
  }
}

void BarscopeObserver::BuildCpuChart(int64_t end) {
  BarscopeChart& c = model_.cpus;
  c.title = "CPU barscope: CPUs x time, coloured by running thread";
  c.t0 = grid_.origin();
  c.bin_ns = grid_.width();
  c.columns = grid_.ColumnsUpTo(end);
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

  auto label_of = [&](uint32_t key) -> const std::string& { return c.legend[key].label; };
  for (size_t cpu = 0; cpu < cpu_rows_.size(); ++cpu) {
    BarscopeRow row;
    row.id = static_cast<int64_t>(cpu);
    row.label = fmt::format("CPU {}", cpu);
    row.title = row.label;
    const auto& bins = cpu_rows_[cpu].bins();
    const uint32_t n = std::min<uint32_t>(c.columns, static_cast<uint32_t>(bins.size()));
    // Dominant key of a column, or UINT32_MAX when the CPU was mostly idle (or unknown).
    auto dominant = [&](const CpuBin& b, float* busy) {
      uint32_t best = UINT32_MAX;
      float best_d = 0, total = b.rest;
      for (size_t i = 0; i < CpuBin::kSlots; ++i) {
        if (b.dur[i] <= 0) continue;
        total += b.dur[i];
        uint32_t key = b.thread[i] == kOtherThread ? other_key : key_of.at(b.thread[i]);
        if (b.dur[i] > best_d) best = key, best_d = b.dur[i];
      }
      if (b.rest > best_d) best = other_key, best_d = b.rest;
      *busy = best_d;
      if (static_cast<float>(c.bin_ns) - total > best_d) return UINT32_MAX;
      return best;
    };
    uint32_t col = 0;
    while (col < n) {
      float busy = 0;
      uint32_t key = dominant(bins[col], &busy);
      if (key == UINT32_MAX) {
        ++col;
        continue;
      }
      uint32_t end_col = col;
      double time = 0;
      while (end_col < n && dominant(bins[end_col], &busy) == key) {
        time += busy;
        ++end_col;
      }
      row.spans.push_back(
          {col, end_col, key,
           fmt::format("{}: {}, ran {} of {} ({})", row.label, label_of(key), Duration(time),
                       Duration(static_cast<double>(end_col - col) * c.bin_ns),
                       Range(c, col, end_col))});
      col = end_col;
    }
    c.rows.push_back(std::move(row));
  }
}

}  // namespace cstool
