// The perf ring reader on a synthetic ring (a sample record that wraps around the end
// of the data area, lost, throttle and unthrottle records), and event-based sampling of
// a software event on the test's own thread, where the kernel's rule gives exact values.
#include "counters/sample_ring.h"

#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "base/errors.h"
#include "counters/event_list.h"
#include "counters/perf_group.h"
#include "counters/thread_counters.h"
#include "tests/support/sweep.h"

namespace cstool {
namespace {

constexpr size_t kPage = 4096;

// One metadata page and one data page, as the kernel lays them out.
class SyntheticRing {
 public:
  SyntheticRing() : bytes_(2 * kPage / sizeof(uint64_t)) {
    meta()->data_offset = kPage;
    meta()->data_size = kPage;
  }
  perf_event_mmap_page* meta() { return reinterpret_cast<perf_event_mmap_page*>(bytes_.data()); }
  void* base() { return bytes_.data(); }
  // Writes a record at ring position `pos` (wrapping like the kernel); returns the
  // position after it.
  uint64_t Put(uint64_t pos, const std::vector<uint64_t>& words) {
    uint8_t* data = reinterpret_cast<uint8_t*>(bytes_.data()) + kPage;
    for (uint64_t w : words) {
      std::memcpy(data + (pos & (kPage - 1)), &w, sizeof(w));
      pos += sizeof(w);
    }
    return pos;
  }

 private:
  std::vector<uint64_t> bytes_;  // 8-byte aligned
};

uint64_t Header(uint32_t type, size_t words) {
  perf_event_header h{};
  h.type = type;
  h.size = static_cast<uint16_t>(words * sizeof(uint64_t));
  uint64_t w = 0;
  std::memcpy(&w, &h, sizeof(h));
  return w;
}

// A sample of a two-member group: ip, pid|tid, time, cpu|res, nr, enabled, running, values.
std::vector<uint64_t> Sample(uint64_t ip, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu,
                             uint64_t v0, uint64_t v1) {
  return {Header(PERF_RECORD_SAMPLE, 10),
          ip,
          (uint64_t{tid} << 32) | pid,
          time,
          cpu,
          2,
          5000,
          5000,
          v0,
          v1};
}

TEST(SampleRing, ReadsWrappedRecordsAndCountsLostAndThrottled) {
  SyntheticRing ring;
  // The reader is 24 bytes before the end: the first sample wraps after its third word.
  const uint64_t start = 3 * kPage - 24;  // positions grow without bound; only & size matters
  ring.meta()->data_tail = start;
  uint64_t pos = ring.Put(start, Sample(0x401000, 7, 8, 1000, 1, 100, 55));
  pos = ring.Put(pos, {Header(PERF_RECORD_LOST, 3), /*id=*/1, /*lost=*/12});
  pos = ring.Put(pos, {Header(PERF_RECORD_THROTTLE, 4), /*time=*/1500, 1, 0});
  pos = ring.Put(pos, {Header(PERF_RECORD_UNTHROTTLE, 4), /*time=*/1600, 1, 0});
  pos = ring.Put(pos, {Header(PERF_RECORD_COMM, 2), 0});  // not asked for: skipped
  pos = ring.Put(pos, Sample(0x401008, 7, 8, 2000, 0, 200, 60));
  ring.meta()->data_head = pos;

  SampleRingReader reader(ring.base(), 2 * kPage, kPage);
  std::vector<RingSample> samples;
  reader.Drain(&samples);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].ip, 0x401000u);
  EXPECT_EQ(samples[0].pid, 7);
  EXPECT_EQ(samples[0].tid, 8);
  EXPECT_EQ(samples[0].time, 1000u);
  EXPECT_EQ(samples[0].cpu, 1u);
  EXPECT_EQ(samples[0].enabled_ns, 5000u);
  EXPECT_EQ(samples[0].values, (std::vector<uint64_t>{100, 55}));
  EXPECT_EQ(samples[1].time, 2000u);
  EXPECT_EQ(samples[1].values, (std::vector<uint64_t>{200, 60}));
  EXPECT_EQ(reader.stats().samples, 2u);
  EXPECT_EQ(reader.stats().lost, 12u);
  EXPECT_EQ(reader.stats().throttles, 1u);
  EXPECT_EQ(reader.stats().unthrottles, 1u);
  EXPECT_EQ(reader.stats().malformed, 0u);
  EXPECT_EQ(ring.meta()->data_tail, pos);  // everything consumed, published for the kernel

  // Nothing new: nothing read. Then a record published later is read on its own.
  reader.Drain(&samples);
  EXPECT_EQ(samples.size(), 2u);
  const uint64_t next = ring.Put(pos, Sample(0x401010, 7, 8, 3000, 0, 300, 61));
  ring.meta()->data_head = next;
  reader.Drain(&samples);
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[2].values[0], 300u);
  EXPECT_EQ(ring.meta()->data_tail, next);
}

TEST(SampleRing, SkipsShortSamplesAndStopsAtABrokenHeader) {
  SyntheticRing ring;
  // A sample whose group read claims 3 values but carries 2: skipped, counted.
  std::vector<uint64_t> short_sample = Sample(1, 2, 3, 4, 0, 5, 6);
  short_sample[5] = 3;
  uint64_t pos = ring.Put(0, short_sample);
  pos = ring.Put(pos, {Header(PERF_RECORD_SAMPLE, 0)});  // size 0: cannot go on
  ring.meta()->data_head = pos;
  SampleRingReader reader(ring.base(), 2 * kPage, kPage);
  std::vector<RingSample> samples;
  reader.Drain(&samples);
  EXPECT_TRUE(samples.empty());
  EXPECT_EQ(reader.stats().malformed, 2u);
  EXPECT_EQ(ring.meta()->data_tail, pos);
}

TEST(SampleRing, OnlyOneSampledEventPerList) {
  try {
    ParseEventList("page-faults:ebs=10,task-clock,context-switches:ebs=1");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(e.what()).find("only one event can be sampled (:ebs=N) per -c list, got "
                                         "page-faults:ebs=10, context-switches:ebs=1"),
              std::string::npos)
        << e.what();
  }
  std::vector<CounterEvent> one = ParseEventList("task-clock,page-faults:ebs=10");
  EXPECT_EQ(one[1].ebs_period, 10u);
  ThreadCounters tc(one, {});
  EXPECT_EQ(tc.sampled_column(), std::optional<size_t>(1));
  EXPECT_EQ(tc.sampling_period(), 10u);
  EXPECT_FALSE(ThreadCounters(ParseEventList("page-faults"), {}).sampled_column());
}

int64_t MonotonicNow() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// The kernel's rule for a software event with sample_period K (perf_swevent_add() sets
// period_left to -K, each event adds 1, an overflow happens when it reaches 0 and
// re-arms it at -K): the i-th sample is taken at the i-th multiple of K, and carries
// exactly i*K as the event's value. The sampled event leads the group although it is
// second in -c; the values come back in -c order.
TEST(PerfGroup, SamplesOwnPageFaultsEveryKth) {
  constexpr uint64_t kPeriod = 10;
  constexpr long kPages = 95;
  std::vector<CounterEvent> events = ParseEventList("context-switches,page-faults:ebs=10");
  int error = 0;
  const int64_t before = MonotonicNow();
  std::optional<PerfGroup> g = PerfGroup::Open(0, events, &error);
  if (!g && (error == EACCES || error == EPERM)) GTEST_SKIP() << "perf_event_open not permitted";
  ASSERT_TRUE(g) << error;
  ASSERT_TRUE(g->sampling());
  const long page = sysconf(_SC_PAGESIZE);
  char* mem = static_cast<char*>(
      mmap(nullptr, kPages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(mem, MAP_FAILED);
  madvise(mem, kPages * page, MADV_NOHUGEPAGE);
  // Faults before the loop (first calls resolving their symbols) count as well.
  std::optional<GroupReading> start = g->Read();
  ASSERT_TRUE(start);
  for (long i = 0; i < kPages; ++i) mem[i * page] = 1;
  g->Disable();
  const int64_t after = MonotonicNow();
  std::optional<GroupReading> total = g->Read();
  std::vector<GroupSample> samples;
  g->DrainSamples(&samples);
  munmap(mem, kPages * page);
  ASSERT_TRUE(total);
  const uint64_t faults = total->values[1];
  if (!testing::kUnderAddressSanitizer) {
    EXPECT_EQ(faults - start->values[1], uint64_t{kPages});
  }
  ASSERT_EQ(samples.size(), faults / kPeriod);
  int64_t last_ts = before;
  for (size_t i = 0; i < samples.size(); ++i) {
    EXPECT_EQ(samples[i].values[1], (i + 1) * kPeriod) << i;
    EXPECT_EQ(samples[i].tid, static_cast<int32_t>(::gettid()));
    EXPECT_GE(samples[i].ts, last_ts);  // on CLOCK_MONOTONIC, in order
    EXPECT_NE(samples[i].ip, 0u);
    last_ts = samples[i].ts;
  }
  EXPECT_LE(last_ts, after);
  EXPECT_EQ(g->sampling_stats().samples, samples.size());
  EXPECT_EQ(g->sampling_stats().lost, 0u);
  EXPECT_EQ(g->sampling_stats().throttles, 0u);
}

}  // namespace
}  // namespace cstool
