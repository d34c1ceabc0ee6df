#include "analysis/irq_noise.h"

#include <gtest/gtest.h>

#include <string>

#include "analysis/irq_noise_observer.h"

namespace cstool {
namespace {

const std::string kTimer = "vector:local_timer";
const std::string kVirtio = "irq:24 virtio0";
const std::string kSoftTimer = "softirq:TIMER";
const std::string kKworker = "thread:kworker/1:1/45";
const std::string kNmi = "nmi";

NoiseSpan Span(NoiseSource s, int64_t start, int64_t end, const std::string& name) {
  return {s, start, end, &name};
}

TEST(MeasureCpuNoise, CountsTimesPeriodsAndTheLongestStretch) {
  std::vector<NoiseSpan> spans = {
      Span(NoiseSource::kIrq, 1000, 1400, kTimer),
      // Touches the tick: one stretch of noise with it, [1000, 1600).
      Span(NoiseSource::kSoftirq, 1400, 1600, kSoftTimer),
      Span(NoiseSource::kThread, 5000, 7000, kKworker),
      Span(NoiseSource::kIrq, 6000, 6100, kVirtio),  // hits the kworker
      Span(NoiseSource::kNmi, 9000, 9010, kNmi),
  };
  CpuNoise n = MeasureCpuNoise(3, spans, {.start = 0, .end = 10000, .period_ns = 4000});
  EXPECT_EQ(n.cpu, 3);
  EXPECT_EQ(n.runtime_ns, 10000);
  EXPECT_EQ(n.periods, 3);  // 4000, 4000, 2000
  EXPECT_EQ(n.noise_ns, 2610);
  EXPECT_EQ(n.max_noise_ns, 2000);   // the second period: the kworker with its IRQ
  EXPECT_EQ(n.max_single_ns, 2000);  // the kworker's run, its IRQ inside
  EXPECT_DOUBLE_EQ(n.AvailablePercent(), 73.9);
  EXPECT_EQ(n[NoiseSource::kNmi].count, 1u);
  EXPECT_EQ(n[NoiseSource::kNmi].time_ns, 10);
  EXPECT_EQ(n[NoiseSource::kIrq].count, 2u);
  EXPECT_EQ(n[NoiseSource::kIrq].time_ns, 500);
  EXPECT_EQ(n[NoiseSource::kIrq].max_single_ns, 400);
  EXPECT_EQ(n[NoiseSource::kSoftirq].count, 1u);
  EXPECT_EQ(n[NoiseSource::kSoftirq].time_ns, 200);
  EXPECT_EQ(n[NoiseSource::kThread].count, 1u);
  EXPECT_EQ(n[NoiseSource::kThread].time_ns, 1900);  // the IRQ's 100 ns are IRQ time
  EXPECT_EQ(n[NoiseSource::kThread].max_single_ns, 1900);
  ASSERT_EQ(n.names.size(), 5u);
  EXPECT_EQ(n.names.at(kVirtio).source, NoiseSource::kIrq);
  EXPECT_EQ(n.names.at(kVirtio).count, 1u);
  EXPECT_EQ(n.names.at(kVirtio).time_ns, 100);
  EXPECT_EQ(n.names.at(kKworker).time_ns, 1900);
}

TEST(MeasureCpuNoise, NestedNoiseCountsOnceInTheInnermostSource) {
  // An NMI inside an IRQ inside a softirq: 1000 ns of noise, not 1110.
  std::vector<NoiseSpan> spans = {
      Span(NoiseSource::kSoftirq, 0, 1000, kSoftTimer),
      Span(NoiseSource::kIrq, 200, 300, kVirtio),
      Span(NoiseSource::kNmi, 250, 260, kNmi),
  };
  CpuNoise n = MeasureCpuNoise(0, spans, {.start = 0, .end = 2000});
  EXPECT_EQ(n.periods, 1);
  EXPECT_EQ(n.noise_ns, 1000);
  EXPECT_EQ(n.max_noise_ns, 1000);
  EXPECT_EQ(n.max_single_ns, 1000);
  EXPECT_EQ(n[NoiseSource::kSoftirq].time_ns, 900);
  EXPECT_EQ(n[NoiseSource::kSoftirq].max_single_ns, 900);
  EXPECT_EQ(n[NoiseSource::kIrq].time_ns, 90);
  EXPECT_EQ(n[NoiseSource::kNmi].time_ns, 10);
  EXPECT_EQ(
      n[NoiseSource::kSoftirq].count + n[NoiseSource::kIrq].count + n[NoiseSource::kNmi].count, 3u);
  EXPECT_DOUBLE_EQ(n.AvailablePercent(), 50.0);
}

TEST(MeasureCpuNoise, OccurrencesCountWhereTheyBeginAndTimeIsClippedToTheWindow) {
  std::vector<NoiseSpan> spans = {
      Span(NoiseSource::kIrq, 900, 1100, kVirtio),       // began before: time only
      Span(NoiseSource::kThread, 1500, 2500, kKworker),  // runs past the end
      Span(NoiseSource::kIrq, 1999, 2001, kTimer),       // in the kworker, at the end
      Span(NoiseSource::kIrq, 2100, 2200, kTimer),       // after the window: nothing
  };
  CpuNoise n = MeasureCpuNoise(0, spans, {.start = 1000, .end = 2000});
  EXPECT_EQ(n.runtime_ns, 1000);
  EXPECT_EQ(n.noise_ns, 600);
  EXPECT_EQ(n.max_single_ns, 500);
  EXPECT_EQ(n[NoiseSource::kIrq].count, 1u);
  EXPECT_EQ(n[NoiseSource::kIrq].time_ns, 101);
  EXPECT_EQ(n[NoiseSource::kThread].count, 1u);
  EXPECT_EQ(n[NoiseSource::kThread].time_ns, 499);
  EXPECT_EQ(n.names.at(kTimer).count, 1u);
  EXPECT_EQ(n.names.at(kVirtio).count, 0u);
  EXPECT_EQ(n.names.at(kVirtio).time_ns, 100);
}

TEST(MeasureCpuNoise, ASingleNoiseEndsAtAPeriodBoundary) {
  // One task runs across the boundary at 1000: 700 ns in the first period, 300 in the
  // second. Like osnoise's samples, a single noise lies within one period.
  std::vector<NoiseSpan> spans = {Span(NoiseSource::kThread, 300, 1300, kKworker)};
  CpuNoise n = MeasureCpuNoise(0, spans, {.start = 0, .end = 2000, .period_ns = 1000});
  EXPECT_EQ(n.noise_ns, 1000);
  EXPECT_EQ(n.max_noise_ns, 700);
  EXPECT_EQ(n.max_single_ns, 700);
  EXPECT_EQ(n[NoiseSource::kThread].max_single_ns, 1000);  // the run itself, whole
}

TEST(MeasureCpuNoise, NoiseAcrossPeriodsSumsPerPeriod) {
  // Periods of 10 from 0: [5, 12) gives 5 to the first and 2 to the second, where
  // [13, 19) adds 6 (8 in all); [21, 22) is the third's. A run of periods wholly noise
  // ([40, 75): 30-40 to 70-75) makes a whole period the most.
  std::vector<NoiseSpan> spans = {Span(NoiseSource::kIrq, 5, 12, kTimer),
                                  Span(NoiseSource::kIrq, 13, 19, kTimer),
                                  Span(NoiseSource::kIrq, 21, 22, kTimer)};
  CpuNoise n = MeasureCpuNoise(0, spans, {.start = 0, .end = 100, .period_ns = 10});
  EXPECT_EQ(n.periods, 10);
  EXPECT_EQ(n.noise_ns, 14);
  EXPECT_EQ(n.max_noise_ns, 8);
  EXPECT_EQ(n.max_single_ns, 6);
  spans.push_back(Span(NoiseSource::kThread, 40, 75, kKworker));
  n = MeasureCpuNoise(0, spans, {.start = 0, .end = 100, .period_ns = 10});
  EXPECT_EQ(n.max_noise_ns, 10);
  EXPECT_EQ(n.max_single_ns, 10);
}

TEST(MeasureCpuNoise, ATinyPeriodCostsNothingPerPeriod) {
  // A second of noise in periods of 1 ns: a billion periods, each wholly noise.
  std::vector<NoiseSpan> spans = {Span(NoiseSource::kThread, 0, 1'000'000'000, kKworker)};
  CpuNoise n = MeasureCpuNoise(0, spans, {.start = 0, .end = 1'000'000'000, .period_ns = 1});
  EXPECT_EQ(n.periods, 1'000'000'000);
  EXPECT_EQ(n.noise_ns, 1'000'000'000);
  EXPECT_EQ(n.max_noise_ns, 1);
  EXPECT_EQ(n.max_single_ns, 1);
}

TEST(MeasureCpuNoise, AQuietCpuIsFullyAvailable) {
  CpuNoise n = MeasureCpuNoise(1, {}, {.start = 0, .end = 5000, .period_ns = 1000});
  EXPECT_EQ(n.periods, 5);
  EXPECT_EQ(n.noise_ns, 0);
  EXPECT_EQ(n.max_noise_ns, 0);
  EXPECT_EQ(n.max_single_ns, 0);
  EXPECT_DOUBLE_EQ(n.AvailablePercent(), 100.0);
}

Thread MakeThread(uint32_t id, int32_t tid, const char* comm) {
  Thread t;
  t.id = id;
  t.tid = tid;
  t.tgid = tid;
  t.comm = comm;
  return t;
}

TEST(IrqNoiseObserver, TaskRunsAreThreadNoiseAndUnknownTimeIsKeptApart) {
  IrqNoiseObserver observer({0, 1});
  Thread a = MakeThread(0, 100, "a");
  Thread b = MakeThread(1, 200, "");  // never named by the trace
  observer.OnCpuCurrent({.ts = 0, .cpu = 0, .current = nullptr, .known = true});  // idle
  observer.OnCpuCurrent({.ts = 100, .cpu = 0, .current = &a, .known = true});
  observer.OnIrq({IrqKind::kVector, "vector:local_timer", 0, 200, 250, &a});
  observer.OnCpuCurrent({.ts = 500, .cpu = 0, .current = nullptr, .known = true});
  observer.OnIrq({IrqKind::kSoftirq, "softirq:RCU", 0, 600, 620, nullptr});    // on idle
  observer.OnCpuCurrent({.ts = 800, .cpu = 0, .current = &b, .known = true});  // to the end
  // CPU 1 saw nothing: unknown throughout. CPU 2 was not traced.
  observer.OnIrq({IrqKind::kNmi, "nmi", 2, 10, 20, nullptr});

  NoiseReport r = observer.Measure({.start = 0, .end = 1000});
  ASSERT_EQ(r.cpus.size(), 2u);
  const CpuNoise& c0 = r.cpus[0];
  EXPECT_EQ(c0.cpu, 0);
  EXPECT_EQ(c0.noise_ns, 400 + 20 + 200);
  EXPECT_EQ(c0[NoiseSource::kThread].count, 2u);
  EXPECT_EQ(c0[NoiseSource::kThread].time_ns, 350 + 200);
  EXPECT_EQ(c0[NoiseSource::kIrq].count, 1u);
  EXPECT_EQ(c0[NoiseSource::kIrq].time_ns, 50);
  EXPECT_EQ(c0[NoiseSource::kSoftirq].time_ns, 20);
  EXPECT_EQ(c0.names.at("thread:a/100").time_ns, 350);
  EXPECT_EQ(c0.names.at("thread:200").time_ns, 200);  // not "thread:/200"
  EXPECT_EQ(c0.unknown_ns, 0);
  const CpuNoise& c1 = r.cpus[1];
  EXPECT_EQ(c1.cpu, 1);
  EXPECT_EQ(c1.noise_ns, 0);
  EXPECT_EQ(c1.unknown_ns, 1000);
}

TEST(IrqNoiseObserver, LostEventsMakeTheCpuUnknownUntilItIsSeenAgain) {
  IrqNoiseObserver observer({0});
  Thread a = MakeThread(0, 100, "a");
  observer.OnCpuCurrent({.ts = 0, .cpu = 0, .current = &a, .known = true});
  observer.OnCpuCurrent({.ts = 300, .cpu = 0, .current = nullptr, .known = false});
  observer.OnCpuCurrent({.ts = 700, .cpu = 0, .current = nullptr, .known = true});
  NoiseReport r = observer.Measure({.start = 0, .end = 1000});
  ASSERT_EQ(r.cpus.size(), 1u);
  EXPECT_EQ(r.cpus[0].noise_ns, 300);
  EXPECT_EQ(r.cpus[0].unknown_ns, 400);
}

}  // namespace
}  // namespace cstool
