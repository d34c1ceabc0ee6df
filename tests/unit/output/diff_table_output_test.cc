// The diff table's columns line up whatever the names: the subject column is as wide as
// the longest matched name.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "analysis/diff.h"
#include "output/diff_output.h"

namespace cstool {
namespace {

DiffThread Thread(int32_t tid, int32_t pid, std::string comm, int64_t user_ns) {
  DiffThread t;
  t.tid = tid;
  t.pid = pid;
  t.comm = std::move(comm);
  t.microstates[static_cast<size_t>(Microstate::kUser)] = user_ns;
  t.lifetime_ns = user_ns;
  return t;
}

// Where `word` starts in each line of the section titled `title` (its header, then its
// rows), up to a blank line or a note.
std::vector<size_t> ColumnOf(const std::string& table, const std::string& title,
                             const std::string& word) {
  std::istringstream in(table);
  std::vector<size_t> at;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(title)) {
      inside = true;
      continue;
    }
    if (!inside) continue;
    if (line.empty() || line.starts_with("(")) break;
    at.push_back(line.find(word));
  }
  return at;
}

TEST(DiffTableOutput, ALongNameWidensTheSubjectColumnForEveryRow) {
  const std::string long_name(45, 'x');
  const DiffRecording base{"b.dat", {Thread(10, 10, "srv", 100), Thread(11, 10, long_name, 100)}};
  const DiffRecording after{"n.dat", {Thread(20, 20, "srv", 300), Thread(21, 20, long_name, 300)}};
  const DiffResult result = DiffRecordings({base}, {after});
  std::ostringstream out;
  MakeDiffOutput("table", out, 0)->Render(result);
  // Both rows' microstate column starts where the header's does.
  const std::vector<size_t> at = ColumnOf(out.str(), "MICROSTATES BY THREAD", "user");
  const std::vector<size_t> header = ColumnOf(out.str(), "MICROSTATES BY THREAD", "microstate");
  ASSERT_EQ(at.size(), 3u) << out.str();  // the header and the two threads
  EXPECT_EQ(at[1], header[0]) << out.str();
  EXPECT_EQ(at[2], header[0]) << out.str();
  EXPECT_GT(header[0], long_name.size()) << out.str();
}

// Two recordings a side would flag noise often (identical runs: a row in five): nothing is
// flagged under three a side, and the table says why.
TEST(DiffTableOutput, TwoRecordingsASideFlagNothingAndSayWhy) {
  const auto render = [](size_t per_side) {
    std::vector<DiffRecording> base, after;
    for (size_t i = 0; i < per_side; ++i) {
      // 100 ms and 300 ms of user time, a microsecond apart from run to run.
      const auto run = static_cast<int64_t>(i) * 1000;
      base.push_back({"b.dat", {Thread(10, 10, "srv", 100'000'000 + run)}});
      after.push_back({"n.dat", {Thread(20, 20, "srv", 300'000'000 + run)}});
    }
    std::ostringstream out;
    MakeDiffOutput("table", out, 0)->Render(DiffRecordings(base, after));
    return out.str();
  };
  // The change (+200 ms) is far beyond the spreads (a few us): flagged from three a side.
  const std::string why = "Two recordings on a side have a narrow spread by chance too often";
  const std::string two = render(2);
  EXPECT_NE(two.find(why), std::string::npos) << two;
  EXPECT_EQ(two.find("\n* "), std::string::npos) << two;
  const std::string three = render(3);
  EXPECT_EQ(three.find(why), std::string::npos) << three;
  EXPECT_NE(three.find("\n* "), std::string::npos) << three;
  const std::string one = render(1);
  EXPECT_NE(one.find("One recording on a side"), std::string::npos) << one;
  EXPECT_EQ(one.find(why), std::string::npos) << one;
}

}  // namespace
}  // namespace cstool
