// The bash completion offers every subcommand `cstool --help` lists, and each
// subcommand's options.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/report_view.h"
#include "tests/support/run_command.h"

namespace cstool::testing {
namespace {

std::set<std::string> Complete(const std::string& words, int cword) {
  const std::string script = std::string(CSTOOL_SOURCE_DIR) + "/completion/cstool.bash";
  CommandResult r = RunCommand({"bash", "-c",
                                "source \"$1\" && COMP_WORDS=(" + words +
                                    ") && COMP_CWORD=" + std::to_string(cword) +
                                    " && _cstool && printf '%s\\n' \"${COMPREPLY[@]}\"",
                                "complete-test", script});
  EXPECT_EQ(r.status, 0) << r.err;
  std::set<std::string> out;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.insert(line);
  return out;
}

std::set<std::string> SubcommandsOfHelp() {
  CommandResult help = RunCommand({CSTOOL_BINARY, "--help"});
  EXPECT_EQ(help.status, 0);
  std::set<std::string> subs;
  std::istringstream in(help.out.substr(help.out.find("Subcommands:")));
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line) && line.rfind("  ", 0) == 0) {
    std::istringstream words(line);
    std::string name;
    words >> name;
    subs.insert(name);
  }
  return subs;
}

TEST(Completion, OffersEverySubcommand) {
  std::set<std::string> subs = SubcommandsOfHelp();
  ASSERT_GE(subs.size(), 2u);
  std::set<std::string> offered = Complete(std::string(CSTOOL_BINARY) + " ''", 1);
  for (const std::string& s : subs) EXPECT_TRUE(offered.count(s)) << s << " not offered";
}

TEST(Completion, OffersEachSubcommandsOptions) {
  for (const std::string& sub : SubcommandsOfHelp()) {
    if (sub == "help") continue;
    CommandResult help = RunCommand({CSTOOL_BINARY, sub, "--help"});
    std::set<std::string> offered = Complete(std::string(CSTOOL_BINARY) + " " + sub + " --", 2);
    // Options are the lines that start with one (examples in the footer are not).
    std::istringstream lines(help.out);
    std::regex re("--[a-z][a-z-]*");
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("  -", 0) != 0) continue;
      std::string first = line.substr(0, line.find(' ', 2));
      std::smatch m;
      if (std::regex_search(first, m, re)) {
        EXPECT_TRUE(offered.count(m.str())) << sub << " " << m.str();
      }
    }
  }
  std::set<std::string> formats = Complete(std::string(CSTOOL_BINARY) + " report --format ''", 3);
  EXPECT_EQ(formats, (std::set<std::string>{"table", "json", "csv", "sqlite", "jsonl"}));
}

// The values of --critical-path (a tid), --from/--to (seconds), --buffer (a buffer's
// name) and irq's --period (a duration) are not files.
TEST(Completion, OffersNoFilesForCriticalPathValues) {
  for (const char* option : {"--critical-path", "--from", "--to", "--buffer"})
    EXPECT_TRUE(Complete(std::string(CSTOOL_BINARY) + " report " + option + " ''", 3).empty())
        << option;
  EXPECT_TRUE(Complete(std::string(CSTOOL_BINARY) + " irq --period ''", 3).empty());
}

// -c and -V complete the counter names after the last comma of their list.
TEST(Completion, OffersCounterNamesInsideTheList) {
  const std::string bin = CSTOOL_BINARY;
  EXPECT_EQ(Complete(bin + " msa 1 -c task-clock,page", 4),
            (std::set<std::string>{"task-clock,page-faults"}));
  EXPECT_EQ(Complete(bin + " record -c cache", 3),
            (std::set<std::string>{"cache-references", "cache-misses"}));
  EXPECT_EQ(Complete(bin + " record --virtual-counters ''", 3),
            (std::set<std::string>{"read-bytes", "write-bytes", "energy"}));
}

// --format offers exactly the formats each subcommand's --help names.
TEST(Completion, OffersEachSubcommandsOwnFormats) {
  size_t checked = 0;
  for (const std::string& sub : SubcommandsOfHelp()) {
    CommandResult help = RunCommand({CSTOOL_BINARY, sub, "--help"});
    std::smatch m;
    if (!std::regex_search(help.out, m, std::regex("Output format: ([a-z, ]+)"))) continue;
    std::set<std::string> named;
    std::string list = m[1];
    for (const char* f : {"table", "json", "csv", "sqlite", "jsonl"})
      if (std::regex_search(list, std::regex(std::string("\\b") + f + "\\b"))) named.insert(f);
    EXPECT_EQ(Complete(std::string(CSTOOL_BINARY) + " " + sub + " --format ''", 3), named) << sub;
    ++checked;
  }
  EXPECT_EQ(checked, 4u) << "report, diff, msa and irq have --format";
}

// report's -s/--sort offers exactly the keys the report takes (SortKeys), no more, no fewer.
TEST(Completion, OffersEverySortKey) {
  const std::vector<std::string> keys = SortKeys();
  const std::set<std::string> expected(keys.begin(), keys.end());
  for (const char* option : {"--sort", "-s"})
    EXPECT_EQ(Complete(std::string(CSTOOL_BINARY) + " report x.dat " + option + " ''", 4), expected)
        << option;
}

// --timeline-format offers the formats --help names.
TEST(Completion, OffersTimelineFormats) {
  EXPECT_EQ(
      Complete(std::string(CSTOOL_BINARY) + " report --timeline t.pb --timeline-format ''", 5),
      (std::set<std::string>{"auto", "json", "proto"}));
}

}  // namespace
}  // namespace cstool::testing
