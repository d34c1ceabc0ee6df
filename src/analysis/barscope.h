// `report --html`: collects the execution barscope (selected threads x time, by
// microstate) and the cpu barscope (CPUs x time, by running thread) as fixed-size
// binned rows (analysis/time_bins.h), and turns them into a BarscopeModel at the end
// of the trace. Each column keeps the time of every state (or of the threads that ran)
// and is drawn as stacked shares (analysis/barscope_stack.h), so that short bursts show
// as thin bands instead of vanishing under the dominant state.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "analysis/barscope_model.h"
#include "analysis/cpu_occupancy.h"
#include "analysis/time_bins.h"
#include "model/syscall_table.h"
#include "sched/observer.h"

namespace cstool {

// The drawn time range, in ns from the start of the trace (`report --html-range`);
// to < 0: up to the end of the trace.
struct BarscopeRange {
  int64_t from = 0;
  int64_t to = -1;
};

class BarscopeObserver : public Observer {
 public:
  using ThreadFilter = std::function<bool(const Thread&)>;
  // Threads beyond this many get no row; the page lists them (at most kMaxHiddenListed).
  static constexpr size_t kMaxThreadRows = 512;
  static constexpr size_t kMaxHiddenListed = 1000;
  // Columns drawn: the grid's bins merge pairwise down to at most this many, about two
  // pixels each on a page as wide as a laptop screen.
  static constexpr uint32_t kDisplayColumns = 512;

  using Range = BarscopeRange;

  BarscopeObserver(const SyscallTable& syscalls, ThreadFilter selected, Range range = {});

  void OnThreadNew(const Thread& t) override;
  void OnStateSegment(const Thread& t, Microstate s, int32_t cpu, int64_t start,
                      int64_t end) override;
  void OnSwitch(const SwitchEvent& e) override;
  void OnCpuCurrent(const CpuCurrentEvent& e) override;
  void OnLostEvents(int32_t cpu, int64_t ts, int64_t count) override;
  void OnTraceEnd(int64_t ts) override;

  // Valid after OnTraceEnd.
  const BarscopeModel& model() const { return model_; }

 private:
  static constexpr uint32_t kNoCause = UINT32_MAX;
  static constexpr uint32_t kOtherThread = UINT32_MAX;
  struct ThreadBin {
    std::array<float, kMicrostateCount> dur{};
    uint32_t switches = 0;
    uint32_t cause = kNoCause;  // the latest switch-out's cause (packed)
    void Merge(const ThreadBin& o);
  };
  struct CpuBin {
    static constexpr size_t kSlots = 4;
    std::array<uint32_t, kSlots> thread{};  // Thread::id, or kOtherThread
    std::array<float, kSlots> dur{};
    float rest = 0;  // threads that did not fit a slot
    void Add(uint32_t id, float d);
    void Merge(const CpuBin& o);
  };
  struct ThreadRow {
    const Thread* thread = nullptr;
    BinnedRow<ThreadBin> bins;
  };

  ThreadRow* RowOf(const Thread& t);
  void AddCpuRun(const CpuRun& r);
  void StartChart(BarscopeChart& c, int64_t end) const;
  void BuildThreadChart(int64_t end);
  void BuildCpuChart(int64_t end);

  const SyscallTable& syscalls_;
  ThreadFilter selected_;
  Range range_;
  CpuOccupancy occupancy_;
  TimeGrid grid_;
  int64_t trace_start_ = -1;
  int64_t range_end_ = INT64_MAX;  // absolute
  uint32_t merge_ = 1;             // grid bins per drawn column
  std::vector<int32_t> row_of_;    // Thread::id -> index into rows_, -1 none
  std::vector<ThreadRow> rows_;
  std::vector<const Thread*> hidden_;  // selected threads beyond kMaxThreadRows
  std::vector<BinnedRow<CpuBin>> cpu_rows_;
  std::vector<const Thread*> threads_by_id_;  // threads seen on a CPU
  uint64_t lost_gaps_ = 0;
  BarscopeModel model_;
};

}  // namespace cstool
