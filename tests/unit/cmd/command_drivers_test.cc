// src/commands holds one driver per subcommand; a driver never includes another
// command's driver (what several commands share lives in a library below, e.g.
// pipeline/). The compiler cannot see this inside one library, so this test reads the
// includes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace {

// The command a file of src/commands belongs to: the longest command name it starts with.
std::string OwnerOf(const std::string& file) {
  static const std::vector<std::string> kCommands = {"record", "report", "diff",
                                                     "irq",    "msa",    "nmi_inject"};
  std::string owner;
  for (const std::string& c : kCommands)
    if (file.rfind(c + "_", 0) == 0 && c.size() > owner.size()) owner = c;
  return owner;
}

TEST(CommandDrivers, NoDriverIncludesAnotherCommandsDriver) {
  const std::filesystem::path dir = std::filesystem::path(CSTOOL_SOURCE_DIR) / "src/commands";
  const std::regex include(R"re(#include "commands/([a-z_]+)\.h")re");
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!name.ends_with(".h") && !name.ends_with(".cc")) continue;
    ++files;
    const std::string owner = OwnerOf(name);
    ASSERT_FALSE(owner.empty()) << name << " belongs to no command";
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, include)) continue;
      EXPECT_EQ(OwnerOf(m[1].str() + ".h"), owner) << name << " includes " << m[0];
    }
  }
  EXPECT_GT(files, 5);
}

}  // namespace
