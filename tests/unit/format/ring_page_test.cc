// The own page walker must agree with libtraceevent's kbuffer on real pages.
#include "format/ring_page.h"

#include <gtest/gtest.h>

#include "format/trace_handles.h"
#include "format/v6_trace_file.h"

namespace cstool {
namespace {

TEST(RingPageDecoder, AgreesWithKbufferOnFixturePages) {
  const std::string file = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/small_v6.dat";
  V6TraceFile trace(file, {});
  MappedFile map(file);
  RingPageDecoder dec(trace.long_size(), trace.page_size(), file);
  KbufferPtr kbuf(kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE));
  ASSERT_TRUE(kbuf);
  size_t total = 0, lost_pages = 0;
  for (int cpu = 0; cpu < trace.cpus(); ++cpu) {
    const auto& d = trace.cpu_data()[static_cast<size_t>(cpu)];
    for (uint64_t off = d.offset; off < d.offset + d.size; off += trace.page_size()) {
      std::vector<RawRecord> mine(dec.max_records());
      int64_t lost = 0;
      mine.resize(dec.Decode(map.data() + off, off, cpu, mine.data(), &lost));
      void* page = const_cast<uint8_t*>(map.data() + off);
      ASSERT_EQ(kbuffer_load_subbuffer(kbuf.get(), page), 0);
      const int kmissed = kbuffer_missed_events(kbuf.get());
      EXPECT_EQ(lost, kmissed == 0 ? 0 : (kmissed < 0 ? -1 : kmissed));
      if (lost != 0) ++lost_pages;
      size_t i = 0;
      unsigned long long ts = 0;
      for (void* ev = kbuffer_read_event(kbuf.get(), &ts); ev != nullptr;
           ev = kbuffer_next_event(kbuf.get(), &ts), ++i) {
        ASSERT_LT(i, mine.size());
        EXPECT_EQ(static_cast<unsigned long long>(mine[i].ts), ts);
        EXPECT_EQ(mine[i].data, ev);
        EXPECT_EQ(static_cast<int>(mine[i].size), kbuffer_event_size(kbuf.get()));
      }
      EXPECT_EQ(i, mine.size());
      total += i;
    }
  }
  EXPECT_EQ(total, 1542u);
  EXPECT_EQ(lost_pages, 1u);
}

}  // namespace
}  // namespace cstool
