// Every option a subcommand's --help names, and every anomaly kind the report can
// count, must be documented in the man pages.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

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

INSTANTIATE_TEST_SUITE_P(Subcommands, ManPages,
                         ::testing::Values("record", "report", "irq", "nmi-inject", "msa"));

TEST(ManPages, MainPageListsEverySubcommand) {
  CommandResult help = RunCommand({CSTOOL_BINARY, "--help"});
  ASSERT_EQ(help.status, 0);
  std::string page = ManPageText("cstool");
  for (const char* sub : {"record", "report", "irq", "nmi-inject", "msa"}) {
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
