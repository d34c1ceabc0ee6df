// `report --html` carries the text report's tables: each SYSCALLS row of the table output
// is a row of the page's Syscalls section, cell by cell.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <sstream>
#include <string>

#include "tests/support/files.h"
#include "tests/support/run_command.h"

namespace cstool::testing {
namespace {

namespace fs = std::filesystem;

TEST(HtmlTables, SyscallsAreTheTextReportsRows) {
  const fs::path html = ScratchPath("tables.html");
  CommandResult text = RunCommand({CSTOOL_BINARY, "report", Fixture("golden_mutex.dat")});
  ASSERT_EQ(text.status, 0) << text.err;
  const size_t title = text.out.find("\nSYSCALLS ");
  ASSERT_NE(title, std::string::npos) << text.out;
  CommandResult r =
      RunCommand({CSTOOL_BINARY, "report", Fixture("golden_mutex.dat"), "--html", html.string()});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string page = ReadWholeFile(html);
  fs::remove(html);
  ASSERT_NE(page.find("<section><h2>Syscalls</h2>"), std::string::npos);
  std::istringstream in(text.out.substr(title));
  const std::regex row(R"(^ *(\d+) (\S+) +(\d+) +([\d.]+)  (.*)$)");
  std::string line;
  size_t rows = 0;
  std::getline(in, line);  // (the blank line before the title)
  std::getline(in, line);  // the title
  while (std::getline(in, line) && !line.empty()) {
    std::smatch m;
    if (!std::regex_match(line, m, row)) continue;  // a header
    const std::string cells = "<tr><td>" + m[1].str() + "</td><td class=\"l\">" + m[2].str() +
                              "</td><td>" + m[3].str() + "</td><td>" + m[4].str() +
                              "</td><td class=\"l\">" + m[5].str() + "</td></tr>";
    EXPECT_NE(page.find(cells), std::string::npos) << cells;
    ++rows;
  }
  EXPECT_EQ(rows, 4u) << "three threads and their process" << text.out;
}

}  // namespace
}  // namespace cstool::testing
