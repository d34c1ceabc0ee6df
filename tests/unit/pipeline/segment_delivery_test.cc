// The state machine delivers the held segments of a run two ways: adding to the thread's
// times only, when no observer takes plain segments (a report's usual case), or segment by
// segment through EmitSegmentNow. On real recordings both must give every thread the same
// times to the nanosecond, and the segments an observer sees must add up to them.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "model/microstate.h"
#include "pipeline/analyze_trace.h"
#include "sched/observer.h"

namespace cstool::testing {
namespace {

const std::string kFixtures = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/";

// Sums, per thread, the segments it is shown (which turns the segment-by-segment way on).
class SegmentSums : public Observer {
 public:
  uint32_t Hooks() const override { return HookBit(Hook::kStateSegment); }
  void OnStateSegment(const Thread& t, Microstate s, int32_t /*cpu*/, int64_t start,
                      int64_t end) override {
    sums_[t.id][static_cast<size_t>(s)] += end - start;
    ++segments_;
  }
  const std::map<uint32_t, MicrostateTimes>& sums() const { return sums_; }
  uint64_t segments() const { return segments_; }

 private:
  std::map<uint32_t, MicrostateTimes> sums_;
  uint64_t segments_ = 0;
};

class SegmentDelivery : public ::testing::TestWithParam<const char*> {};

TEST_P(SegmentDelivery, TimesAreTheSameWithAndWithoutASegmentObserver) {
  const std::string file = kFixtures + GetParam();
  SyscallTable syscalls;
  auto plain = AnalyzeTrace(file, syscalls);
  SegmentSums sums;
  AnalyzeOptions options;
  options.extra_observers.push_back(&sums);
  auto observed = AnalyzeTrace(file, syscalls, options);

  ASSERT_GT(sums.segments(), 100u) << "too few segments to compare both ways";
  ASSERT_EQ(plain->model.threads.size(), observed->model.threads.size());
  size_t compared = 0;
  for (size_t i = 0; i < plain->model.threads.size(); ++i) {
    const ThreadReport& a = plain->model.threads[i];
    const ThreadReport& b = observed->model.threads[i];
    if (a.thread == nullptr || b.thread == nullptr) continue;
    ASSERT_EQ(a.thread->tid, b.thread->tid);
    EXPECT_EQ(a.thread->times, b.thread->times) << "tid " << a.thread->tid;
    EXPECT_EQ(a.microstates, b.microstates) << "tid " << a.thread->tid;
    auto it = sums.sums().find(b.thread->id);
    const MicrostateTimes none{};
    EXPECT_EQ(it == sums.sums().end() ? none : it->second, b.thread->times)
        << "tid " << b.thread->tid << ": the segments shown do not add up to its times";
    ++compared;
  }
  EXPECT_GT(compared, 1u);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, SegmentDelivery,
                         ::testing::Values("small_v6.dat", "golden_mutex.dat"));

}  // namespace
}  // namespace cstool::testing
