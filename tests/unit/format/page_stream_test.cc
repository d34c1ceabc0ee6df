// A page whose header time is out of order with its neighbours is damage: an error with
// its offset, or under salvage a skipped page counted as a loss. Synthetic pages of one
// record each, handed out in runs of one page (every neighbour lies in the next run, the
// page copied aside while it is read) and of all pages at once.
#include "format/page_stream.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "base/errors.h"
#include "format/salvage_log.h"

namespace cstool {
namespace {

constexpr uint32_t kPage = 4096;
constexpr uint64_t kBase = 1'000'000;  // file offset of the first page

// Pages with one 4-byte record each (delta `i`, so record i of a page is at its time
// + i), or none where the time is 0 (an empty page: commit 0).
std::vector<uint8_t> MakePages(const std::vector<uint64_t>& times) {
  std::vector<uint8_t> bytes(times.size() * kPage, 0);
  for (size_t p = 0; p < times.size(); ++p) {
    uint8_t* page = bytes.data() + p * kPage;
    std::memcpy(page, &times[p], sizeof(uint64_t));
    if (times[p] == 0) continue;
    const uint64_t commit = 8;
    std::memcpy(page + 8, &commit, sizeof(commit));
    const uint32_t header = (uint32_t{3} << 5) | 1;  // delta 3, 4 data bytes
    std::memcpy(page + 16, &header, sizeof(header));
    const uint32_t payload = static_cast<uint32_t>(p);
    std::memcpy(page + 20, &payload, sizeof(payload));
  }
  return bytes;
}

// Hands out `pages` in runs of `per_run` pages, in place at kBase; a run also ends before
// a page with a gap before it (`gaps`: page index to events lost).
class VectorPageSource final : public PageSource {
 public:
  VectorPageSource(std::vector<uint8_t> pages, size_t per_run, std::map<size_t, int64_t> gaps)
      : pages_(std::move(pages)), per_run_(per_run), gaps_(std::move(gaps)) {}
  PageRun NextRun(PageBuffer& buffer) override {
    const size_t first = pos_ / kPage;
    size_t count = std::min(per_run_, pages_.size() / kPage - first);
    for (size_t i = 1; i < count; ++i)
      if (gaps_.contains(first + i)) count = i;
    if (count == 0) return {};
    const size_t n = count * kPage;
    buffer.bytes().assign(pages_.begin() + static_cast<ptrdiff_t>(pos_),
                          pages_.begin() + static_cast<ptrdiff_t>(pos_ + n));
    const auto gap = gaps_.find(first);
    PageRun run{
        {buffer.bytes().data(), n}, kBase + pos_, gap == gaps_.end() ? 0 : gap->second, true};
    pos_ += n;
    return run;
  }

 private:
  std::vector<uint8_t> pages_;
  size_t per_run_;
  std::map<size_t, int64_t> gaps_;
  size_t pos_ = 0;
};

struct Read {
  std::vector<int64_t> times;   // of the records; a loss marker as minus its count (-1: unknown)
  std::vector<uint32_t> pages;  // the page each record was written on (its payload)
  std::string error;
  std::vector<std::string> salvaged;
};

Read ReadPages(const std::vector<uint64_t>& times, size_t per_run, bool salvage,
               std::map<size_t, int64_t> gaps = {}) {
  SalvageLog log;
  PageRecordStream stream(
      std::make_unique<VectorPageSource>(MakePages(times), per_run, std::move(gaps)), 0, 8, kPage,
      PagesPerBatch(kPage), "pages.dat", salvage ? &log : nullptr);
  Read read;
  try {
    for (auto batch = stream.NextBatch(); !batch.empty(); batch = stream.NextBatch())
      for (const RawRecord& r : batch) {
        read.times.push_back(r.data != nullptr ? r.ts : r.lost < 0 ? -1 : -r.lost);
        if (r.data == nullptr) continue;
        uint32_t page = 0;
        std::memcpy(&page, r.data, sizeof(page));
        read.pages.push_back(page);
      }
  } catch (const Error& e) {
    read.error = e.what();
  }
  read.salvaged = log.entries();
  return read;
}

constexpr uint64_t kS = 1'000'000'000;           // a second, in the pages' nanoseconds
constexpr uint64_t kFuture = uint64_t{1} << 62;  // one flipped high bit: a century ahead
// The time of the record on the page written at `seconds`.
constexpr int64_t R(uint64_t seconds) { return static_cast<int64_t>(seconds * kS + 3); }

class PageTimes : public ::testing::TestWithParam<size_t> {};

TEST_P(PageTimes, InOrderPagesAreAllRead) {
  // Equal times and empty pages between are in order.
  const Read r = ReadPages({100 * kS, 200 * kS, 200 * kS, 0, 300 * kS, 0, 0, 400 * kS, 500 * kS},
                           GetParam(), false);
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.times, (std::vector<int64_t>{R(100), R(200), R(200), R(300), R(400), R(500)}));
  // Each record points into its own page, set aside or not.
  EXPECT_EQ(r.pages, (std::vector<uint32_t>{0, 1, 2, 4, 7, 8}));
}

// A page less than 10 ms out of order is no damage here (the ring buffer's own races
// are microseconds): the records are read, and the report counts time_backwards.
TEST_P(PageTimes, ASmallStepBackIsRead) {
  const Read r = ReadPages({100 * kS, 200 * kS, 200 * kS - 9'999'999, 400 * kS}, GetParam(), false);
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.pages, (std::vector<uint32_t>{0, 1, 2, 3}));
}

TEST_P(PageTimes, APageAheadOfBothNeighboursIsAnErrorWithItsOffset) {
  const Read r = ReadPages({100 * kS, 200 * kS, kFuture, 400 * kS, 500 * kS}, GetParam(), false);
  EXPECT_NE(r.error.find("pages.dat: corrupt ring-buffer page at offset " +
                         std::to_string(kBase + 2 * kPage) + " (CPU 0): its time stamp"),
            std::string::npos)
      << r.error;
  EXPECT_NE(r.error.find("lies after the next page's 400.000000000"), std::string::npos) << r.error;
}

// The first page has no page before it: the two after it judge it.
TEST_P(PageTimes, TheFirstPageIsJudgedByTheTwoAfter) {
  EXPECT_EQ(ReadPages({kFuture, 200 * kS, 300 * kS, 400 * kS}, GetParam(), true).times,
            (std::vector<int64_t>{-1, R(200), R(300), R(400)}));
  EXPECT_EQ(ReadPages({100 * kS, 50 * kS, 300 * kS, 400 * kS}, GetParam(), true).times,
            (std::vector<int64_t>{R(100), -1, R(300), R(400)}));
}

TEST_P(PageTimes, APageBehindThePreviousOneIsAnError) {
  const Read r = ReadPages({100 * kS, 200 * kS, 150 * kS, 400 * kS, 500 * kS}, GetParam(), false);
  EXPECT_NE(r.error.find("at offset " + std::to_string(kBase + 2 * kPage)), std::string::npos)
      << r.error;
  EXPECT_NE(r.error.find("goes back before the previous page's 200.000000000"), std::string::npos)
      << r.error;
}

TEST_P(PageTimes, SalvageSkipsTheOddPageAsALoss) {
  for (const uint64_t odd : {kFuture, 150 * kS}) {
    SCOPED_TRACE(odd);
    const Read r = ReadPages({100 * kS, 200 * kS, odd, 400 * kS, 500 * kS}, GetParam(), true);
    EXPECT_EQ(r.error, "");
    EXPECT_EQ(r.times, (std::vector<int64_t>{R(100), R(200), -1, R(400), R(500)}));
    ASSERT_EQ(r.salvaged.size(), 1u);
    EXPECT_NE(r.salvaged[0].find("page skipped"), std::string::npos) << r.salvaged[0];
  }
}

// Of two neighbours out of order, the one out of order with the pages on both sides is
// the damaged one: here the fourth page goes back before the second and third, and the
// third, which is only after the fourth, is kept.
TEST_P(PageTimes, ThePageOutOfOrderWithBothSidesIsTheOneSkipped) {
  const Read r =
      ReadPages({100 * kS, 200 * kS, 300 * kS, 50 * kS, 500 * kS, 600 * kS}, GetParam(), true);
  EXPECT_EQ(r.times, (std::vector<int64_t>{R(100), R(200), R(300), -1, R(500), R(600)}));
  EXPECT_EQ(r.pages, (std::vector<uint32_t>{0, 1, 2, 4, 5}));
  ASSERT_EQ(r.salvaged.size(), 1u);
  EXPECT_NE(r.salvaged[0].find("at offset " + std::to_string(kBase + 3 * kPage)), std::string::npos)
      << r.salvaged[0];
}

// The last page has no page after it: judged by the one before.
TEST_P(PageTimes, TheLastPageIsJudgedByThePageBefore) {
  EXPECT_EQ(ReadPages({100 * kS, 200 * kS, 300 * kS, 150 * kS}, GetParam(), true).times,
            (std::vector<int64_t>{R(100), R(200), R(300), -1}));
  EXPECT_EQ(ReadPages({100 * kS, 200 * kS, 300 * kS, kFuture}, GetParam(), false).error, "");
  // Before it, the page later than the one page after it is the one skipped: a forward
  // jump (a flipped high bit) is the likelier damage.
  EXPECT_EQ(ReadPages({100 * kS, 200 * kS, kFuture, 400 * kS}, GetParam(), true).times,
            (std::vector<int64_t>{R(100), R(200), -1, R(400)}));
}

// An empty page is no neighbour: the next page with records is.
TEST_P(PageTimes, EmptyPagesAreNoNeighbours) {
  EXPECT_EQ(ReadPages({100 * kS, 0, 150 * kS, 0, 50 * kS, 0, 400 * kS}, GetParam(), true).times,
            (std::vector<int64_t>{R(100), R(150), -1, R(400)}));
  EXPECT_EQ(ReadPages({100 * kS, 0, kFuture, 0, 0, 300 * kS, 400 * kS}, GetParam(), true).times,
            (std::vector<int64_t>{R(100), -1, R(300), R(400)}));
}

// However many empty pages follow, memory stays bounded and every record is read.
TEST_P(PageTimes, LongStretchesOfEmptyPagesAreRead) {
  std::vector<uint64_t> times(500, 0);
  times[0] = 100 * kS;
  times[499] = 200 * kS;
  EXPECT_EQ(ReadPages(times, GetParam(), false).times, (std::vector<int64_t>{R(100), R(200)}));
}

// Gaps between runs stay where they were, carried pages or not.
TEST_P(PageTimes, LossesStayBetweenTheirPages) {
  EXPECT_EQ(
      ReadPages({100 * kS, 200 * kS, 300 * kS, 400 * kS, 500 * kS}, GetParam(), false, {{2, 7}})
          .times,
      (std::vector<int64_t>{R(100), R(200), -7, R(300), R(400), R(500)}));
}

INSTANTIATE_TEST_SUITE_P(RunsOf, PageTimes, ::testing::Values(1, 2, 3, 100),
                         [](const auto& info) { return std::to_string(info.param) + "_pages"; });

}  // namespace
}  // namespace cstool
