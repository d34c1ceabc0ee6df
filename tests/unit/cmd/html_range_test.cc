// `report --html-range FROM:TO`: the page's barscopes cover only that part of the
// trace (seconds from its start), and a malformed range fails before any file is made.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <string>

#include "tests/support/files.h"
#include "tests/support/run_command.h"

namespace cstool::testing {
namespace {

namespace fs = std::filesystem;

TEST(HtmlRange, DrawsOnlyThatPartOfTheTrace) {
  const fs::path html = ScratchPath("range.html");
  CommandResult r = RunCommand({CSTOOL_BINARY, "report", Fixture("golden_mutex.dat"), "--html",
                                html.string(), "--html-range", "0.001:0.002"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string page = ReadWholeFile(html);
  fs::remove(html);
  // Both barscopes start 1 ms and end 2 ms after the trace start (5 ms long), where the
  // axis ends.
  std::regex range("data-t0-ns=\"1000000\" data-end-ns=\"2000000\"");
  EXPECT_EQ(
      std::distance(std::sregex_iterator(page.begin(), page.end(), range), std::sregex_iterator()),
      2);
  EXPECT_NE(page.find(">0.002 s</text>"), std::string::npos);
  EXPECT_NE(page.find("<rect class=\"s\""), std::string::npos);
}

TEST(HtmlRange, MalformedRangeFailsAndWritesNothing) {
  for (const char* bad : {"2:1", "1", "a:b", "-1:2", "1:1"}) {
    const fs::path html = ScratchPath("bad.html");
    CommandResult r = RunCommand({CSTOOL_BINARY, "report", Fixture("golden_mutex.dat"), "--html",
                                  html.string(), "--html-range", bad});
    EXPECT_EQ(r.status, 2) << bad;  // a usage error, like every malformed option
    EXPECT_EQ(LastOwnLine(r.err), std::string("cstool report: --html-range ") + bad +
                                      ": expected FROM:TO, seconds from the trace start with 0 "
                                      "<= FROM < TO (either may be left out)");
    EXPECT_FALSE(fs::exists(html)) << bad;
  }
}

// A range that starts after the trace's end draws nothing: the page says so, and stderr.
TEST(HtmlRange, ARangePastTheEndIsNamedOnStderr) {
  const fs::path html = ScratchPath("past.html");
  CommandResult r = RunCommand({CSTOOL_BINARY, "report", Fixture("golden_mutex.dat"), "--html",
                                html.string(), "--html-range", "5:9"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("cstool report: warning: " + html.string() +
                       ": the range starts at 5.000000 s, after the trace ended at "),
            std::string::npos)
      << r.err;
  EXPECT_NE(ReadWholeFile(html).find("after the trace ended"), std::string::npos);
  fs::remove(html);
}

TEST(HtmlRange, NeedsHtml) {
  CommandResult r =
      RunCommand({CSTOOL_BINARY, "report", Fixture("golden_mutex.dat"), "--html-range", "0:1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--html-range requires --html"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace cstool::testing
