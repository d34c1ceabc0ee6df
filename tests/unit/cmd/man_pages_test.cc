// Every option a subcommand's --help names, and every anomaly kind the report can
// count, must be documented in the man pages; the pages render without groff warnings
// and every option heading stands on its own line (a missing .TP runs it into the
// paragraph before).
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "model/anomalies.h"
#include "tests/support/run_command.h"

namespace cstool::testing {
namespace {

std::set<std::string> LongOptions(const std::string& text) {
  std::set<std::string> out;
  std::regex re("--[a-z][a-z-]*");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it)
    out.insert(it->str());
  return out;
}

std::string ManPageText(const std::string& name) {
  std::ifstream in(std::string(CSTOOL_SOURCE_DIR) + "/man/" + name + ".1");
  std::stringstream ss;
  ss << in.rdbuf();
  // Undo troff's escaped hyphens so "\-\-format" reads as "--format".
  return std::regex_replace(ss.str(), std::regex(R"(\\-)"), "-");
}

std::string ManPagePath(const std::string& name) {
  return std::string(CSTOOL_SOURCE_DIR) + "/man/" + name + ".1";
}

// The long options --help lists in its option rows ("  -p,--pid INT ..."), not those
// its examples use.
std::set<std::string> HelpOptionRows(const std::string& help) {
  std::set<std::string> out;
  std::istringstream in(help);
  const std::regex row(R"(^ +(-[A-Za-z0-9],)?(--[a-z][a-z-]*))");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, row)) out.insert(m[2].str());
  }
  return out;
}

// Why the pages cannot be rendered here, or empty when groff is there.
std::string GroffMissing() {
  CommandResult r = RunCommand({"groff", "--version"});
  return r.status == 0 ? "" : "groff is not installed: man pages not rendered";
}

// A page as `man` shows it, as plain text on lines wide enough for every heading.
std::string Rendered(const std::string& name) {
  CommandResult r =
      RunCommand({"groff", "-man", "-Tascii", "-P-cbou", "-rLL=200n", "-rHY=0", ManPagePath(name)});
  EXPECT_EQ(r.status, 0) << r.err;
  return r.out;
}

// The lines of a rendered page's section, up to the next section heading.
std::vector<std::string> SectionLines(const std::string& text, const std::string& section) {
  std::vector<std::string> out;
  std::istringstream in(text);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != ' ') {
      inside = line == section;
      continue;
    }
    if (inside) out.push_back(line);
  }
  return out;
}

TEST(ManPages, RenderWithoutGroffWarnings) {
  if (std::string why = GroffMissing(); !why.empty()) GTEST_SKIP() << why;
  int pages = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(CSTOOL_SOURCE_DIR) + "/man")) {
    // Commands (section 1) and file formats (section 5: cstool-export.5).
    if (entry.path().extension() != ".1" && entry.path().extension() != ".5") continue;
    ++pages;
    CommandResult r = RunCommand({"groff", "-man", "-ww", "-z", entry.path().string()});
    EXPECT_EQ(r.status, 0) << entry.path();
    EXPECT_EQ(r.err, "") << entry.path();
  }
  EXPECT_GE(pages, 7);
}

class ManPages : public ::testing::TestWithParam<std::string> {};

TEST_P(ManPages, DocumentEveryOptionOfHelp) {
  const std::string sub = GetParam();
  CommandResult help = RunCommand({CSTOOL_BINARY, sub, "--help"});
  ASSERT_EQ(help.status, 0) << help.err;
  std::string page = ManPageText("cstool-" + sub);
  ASSERT_FALSE(page.empty()) << "man/cstool-" << sub << ".1 missing";
  for (const std::string& opt : LongOptions(help.out))
    EXPECT_NE(page.find(opt), std::string::npos) << opt << " is not in man/cstool-" << sub << ".1";
}

TEST_P(ManPages, EveryOptionHeadingStartsALine) {
  if (std::string why = GroffMissing(); !why.empty()) GTEST_SKIP() << why;
  const std::string sub = GetParam();
  CommandResult help = RunCommand({CSTOOL_BINARY, sub, "--help"});
  ASSERT_EQ(help.status, 0) << help.err;
  std::vector<std::string> options = SectionLines(Rendered("cstool-" + sub), "OPTIONS");
  ASSERT_FALSE(options.empty()) << "no OPTIONS in man/cstool-" << sub << ".1";
  const std::set<std::string> listed = HelpOptionRows(help.out);
  EXPECT_GE(listed.size(), 3u) << help.out;
  for (const std::string& opt : listed) {
    // "  -p, --pid PID" or "  --format FORMAT": the tag of a .TP item.
    const std::regex heading(R"(^ +(-[A-Za-z0-9], )?)" + opt + "( |$)");
    bool found = false;
    for (const std::string& line : options) found = found || std::regex_search(line, heading);
    EXPECT_TRUE(found) << opt << " has no heading line of its own under OPTIONS in "
                       << "man/cstool-" << sub << ".1 (a missing .TP?)";
  }
}

INSTANTIATE_TEST_SUITE_P(Subcommands, ManPages,
                         ::testing::Values("record", "report", "diff", "irq", "nmi-inject", "msa"));

TEST(ManPages, MainPageListsEverySubcommand) {
  CommandResult help = RunCommand({CSTOOL_BINARY, "--help"});
  ASSERT_EQ(help.status, 0);
  std::string page = ManPageText("cstool");
  for (const char* sub : {"record", "report", "diff", "irq", "nmi-inject", "msa"}) {
    EXPECT_NE(help.out.find(sub), std::string::npos);
    EXPECT_NE(page.find(std::string(".B ") + sub), std::string::npos) << sub;
  }
}

TEST(ManPages, ReportPageDescribesEveryAnomalyWithItsSeverity) {
  std::string page = ManPageText("cstool-report");
  for (const AnomalyInfo& info : kAnomalies)
    EXPECT_NE(page.find(fmt::format(".BR {} \" ({})\"", info.name, NameOf(info.severity))),
              std::string::npos)
        << info.name << " is not described in man/cstool-report.1";
}

}  // namespace
}  // namespace cstool::testing
