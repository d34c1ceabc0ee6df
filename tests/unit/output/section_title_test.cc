// Section titles of the text tables: wrapped at word boundaries, continuations indented.
#include "output/section_title.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace cstool {
namespace {

TEST(SectionTitle, AShortTitleIsOneLine) {
  EXPECT_EQ(SectionTitle("THREADS (microstates)"), "THREADS (microstates)\n");
}

TEST(SectionTitle, WrapsBetweenWordsAndIndentsTheRest) {
  EXPECT_EQ(SectionTitle("WAKERS (who ended its sleeps; what ran meanwhile)", 20),
            "WAKERS (who ended\n"
            "  its sleeps; what\n"
            "  ran meanwhile)\n");
}

TEST(SectionTitle, ALineMayTakeTheWholeWidthAndNoMore) {
  EXPECT_EQ(SectionTitle("AAAA BBBB CCCC", 9), "AAAA BBBB\n  CCCC\n");
  EXPECT_EQ(SectionTitle("AAAA BBBB CCCC", 8), "AAAA\n  BBBB\n  CCCC\n");
}

TEST(SectionTitle, AWordLongerThanTheWidthKeepsALineOfItsOwn) {
  EXPECT_EQ(SectionTitle("X (calls/blocks/ms) y", 6), "X\n  (calls/blocks/ms)\n  y\n");
}

TEST(SectionTitle, RunsOfSpacesDoNotMakeEmptyWords) {
  EXPECT_EQ(SectionTitle("  A  B ", 100), "A B\n");
}

// What the table parsers rely on: the title is the only line that starts unindented, and
// every line fits the width.
TEST(SectionTitle, EveryLineFitsAndOnlyTheFirstStartsUnindented) {
  const std::string text =
      "WAKERS (WOKEN BY: who ended its sleeps, wakeups/blocked ms; WAITED BEHIND: what ran on "
      "the CPU it was queued on, ms; largest 3 each; MIGR: migrations; PREMIG: time queued on a "
      "CPU it then moved away from; MAXWAIT: its longest wait, sched_waking or preemption to "
      "switch-in, ms, which began AT, s on the trace's clock as trace-cmd report shows it)";
  std::istringstream in(SectionTitle(text));
  std::string line, rejoined;
  int lines = 0;
  for (; std::getline(in, line); ++lines) {
    EXPECT_LE(line.size(), kSectionTitleWidth) << line;
    EXPECT_EQ(line.rfind("  ", 0) == 0, lines > 0) << line;
    rejoined += lines == 0 ? line : " " + line.substr(2);
  }
  EXPECT_EQ(lines, 4);
  EXPECT_EQ(rejoined, text);  // nothing lost or reordered
}

}  // namespace
}  // namespace cstool
