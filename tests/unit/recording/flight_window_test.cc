// The flight recorder's window and the readers' write budget, with canned pages.
#include "recording/flight_window.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <vector>

#include "base/errors.h"
#include "base/temp_file.h"
#include "format/trace_file_writer.h"
#include "recording/record_options.h"
#include "tracefs/write_budget.h"

namespace cstool {
namespace {

constexpr size_t kPage = 4096;

// A sub-buffer whose header says `data_bytes` of data.
std::vector<uint8_t> Page(uint64_t data_bytes, uint8_t fill) {
  std::vector<uint8_t> p(kPage, fill);
  std::memset(p.data(), 0, 16);
  std::memcpy(p.data() + 8, &data_bytes, sizeof(data_bytes));
  return p;
}

TEST(FlightWindow, ForgetsPagesOlderThanTheWindow) {
  FlightWindow w({0, 1}, /*window_ns=*/1000, /*traced_from=*/0);
  w.Add(0, Page(100, 1), /*last_ts=*/100, 3);
  w.Add(0, Page(100, 2), 900, 4);
  w.Add(1, Page(100, 3), 1500, 5);
  w.Trim(2000);  // keeps pages ending at or after 1000
  EXPECT_EQ(w.bytes(), kPage);
  EXPECT_EQ(w.WindowStart(2000), 1000);
  EXPECT_FALSE(w.overwrote());

  TempFile file("flight-window-", ".pages");
  CpuRecordStats s = w.WritePages(1, file.path(), "");
  EXPECT_EQ(s.pages, 1u);
  EXPECT_EQ(s.events, 5u);
  EXPECT_EQ(s.bytes, 100u);
  EXPECT_EQ(std::filesystem::file_size(file.path()), kPage);
  EXPECT_EQ(w.WritePages(0, file.path(), "").pages, 0u);
}

TEST(FlightWindow, StartsNoEarlierThanTracing) {
  FlightWindow w({0}, /*window_ns=*/1000000, /*traced_from=*/500);
  w.Add(0, Page(10, 1), 700, 1);
  EXPECT_EQ(w.WindowStart(800), 500);          // traced for less than the window
  EXPECT_EQ(w.WindowStart(2000000), 1000000);  // the window is the later bound
}

// In overwrite mode the kernel marks the first page read after it overwrote older
// events ("missed events", with the count stored after the data when it fits). That is
// history given up: the mark goes (no lost events in the file) and the CPU's window
// starts at the page's time.
TEST(FlightWindow, AnOverwriteMarkIsHistoryNotLoss) {
  FlightWindow w({0, 1}, /*window_ns=*/1000000, /*traced_from=*/0);
  std::vector<uint8_t> first = Page(100, 1);
  const uint64_t page_ts = 4000;
  std::memcpy(first.data(), &page_ts, sizeof(page_ts));
  const uint64_t commit = 100 | (uint64_t{1} << 31) | (uint64_t{1} << 30);
  std::memcpy(first.data() + 8, &commit, sizeof(commit));
  const uint64_t overwritten = 12345;
  std::memcpy(first.data() + 16 + 100, &overwritten, sizeof(overwritten));
  w.Add(0, first, 4100, 7);
  w.Add(0, Page(100, 2), 4200, 7);
  w.Add(1, Page(100, 3), 3000, 2);  // CPU 1 kept everything since tracing began
  EXPECT_TRUE(w.overwrote());
  EXPECT_EQ(w.overwritten_events(), 12345u);
  EXPECT_EQ(w.WindowStart(5000), 4000);

  TempFile file("flight-window-", ".pages");
  CpuRecordStats s = w.WritePages(0, file.path(), "");
  EXPECT_EQ(s.pages, 2u);
  EXPECT_EQ(s.lost_pages, 0u);
  EXPECT_EQ(s.bytes, 200u);
  std::vector<uint8_t> written(kPage);
  FILE* f = std::fopen(file.path().c_str(), "rb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fread(written.data(), 1, kPage, f), kPage);
  std::fclose(f);
  uint64_t written_commit = 0;
  std::memcpy(&written_commit, written.data() + 8, sizeof(written_commit));
  EXPECT_EQ(written_commit, 100u);  // size kept, both flags cleared
}

TEST(FlightWindow, CompressedPagesAreChunks) {
  FlightWindow w({0}, 1000, 0);
  for (int i = 0; i < 3; ++i) w.Add(0, Page(200, static_cast<uint8_t>(i)), 500 + i, 2);
  TempFile file("flight-window-", ".chunks");
  CpuRecordStats s = w.WritePages(0, file.path(), "zstd");
  EXPECT_EQ(s.pages, 3u);
  EXPECT_EQ(s.events, 6u);
  EXPECT_EQ(ScanChunks(file.path()).chunks, 1u);
}

TEST(WriteBudget, ClaimsUpToTheLimitThenStaysExhausted) {
  WriteBudget b(100);
  EXPECT_TRUE(b.Claim(60));
  EXPECT_FALSE(b.Claim(50));
  EXPECT_TRUE(b.exhausted());
  EXPECT_FALSE(b.Claim(1));  // nothing after the first refusal: the file ends there
  EXPECT_EQ(b.used(), 60u);
  EXPECT_FALSE(b.disk_full());
}

TEST(WriteBudget, LowerNeverRaisesAndDiskFullExhausts) {
  WriteBudget b(100);
  b.Lower(200);
  EXPECT_EQ(b.limit(), 100u);
  b.Lower(40);
  EXPECT_EQ(b.limit(), 40u);
  EXPECT_TRUE(b.Claim(30));
  b.Return(30);
  b.DiskFull();
  EXPECT_TRUE(b.disk_full());
  EXPECT_FALSE(b.Claim(1));
  EXPECT_EQ(b.used(), 0u);
}

// The stop reserve is held back from the running recording and given to the pages the
// CPUs hold at the stop.
TEST(WriteBudget, TheStopReserveOpensAtTheStop) {
  WriteBudget b(100, 30);
  EXPECT_TRUE(b.Claim(60));
  EXPECT_FALSE(b.Claim(20));  // 80 > 100 - 30
  EXPECT_TRUE(b.exhausted());
  b.OpenStopReserve();
  EXPECT_FALSE(b.exhausted());
  EXPECT_FALSE(b.Claim(41));  // the limit itself still holds
  EXPECT_TRUE(b.Claim(40));   // ... and a refusal there refuses no other CPU's pages
  EXPECT_EQ(b.used(), 100u);
  EXPECT_FALSE(b.exhausted());
  // A reserve larger than the limit holds all of it back.
  WriteBudget small(20, 30);
  EXPECT_FALSE(small.Claim(1));
}

TEST(ParseByteSize, TakesPowersOf1024) {
  EXPECT_EQ(ParseByteSize("1048576", "--max-size"), 1048576u);
  EXPECT_EQ(ParseByteSize("64K", "--max-size"), 65536u);
  EXPECT_EQ(ParseByteSize("500M", "--max-size"), 500u << 20);
  EXPECT_EQ(ParseByteSize("2G", "--max-size"), uint64_t{2} << 30);
  EXPECT_EQ(ParseByteSize("1.5M", "--max-size"), 3u << 19);
  for (const char* bad : {"", "M", "10X", "0", "-1M"})
    EXPECT_THROW(ParseByteSize(bad, "--max-size"), Error) << bad;
}

}  // namespace
}  // namespace cstool
