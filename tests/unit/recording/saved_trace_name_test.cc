// msa/irq -o saves a trace: a name like a report's output gets a warning, a trace's none.
#include "recording/saved_trace_name.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cstool {
namespace {

class Collected final : public Messages {
 public:
  void Warning(std::string_view text) override { warnings.emplace_back(text); }
  void Status(std::string_view) override {}
  void Detail(std::string_view) override {}
  void Progress(std::string_view) override {}
  std::vector<std::string> warnings;
};

TEST(SavedTraceName, AReportsFileNameIsWarnedAbout) {
  for (const char* name : {"out.json", "rows.jsonl", "t.csv", "x.txt", "p.html", "e.db"}) {
    Collected m;
    WarnIfSavedTraceLooksLikeOutput(name, m);
    ASSERT_EQ(m.warnings.size(), 1u) << name;
    EXPECT_EQ(m.warnings[0], std::string("-o ") + name +
                                 " saves the raw trace (trace.dat, for cstool report), not this "
                                 "command's output, which goes to standard output (redirect it "
                                 "with >)");
  }
  for (const char* name : {"", "trace.dat", "msa.dat", "json", "out.json.dat"}) {
    Collected m;
    WarnIfSavedTraceLooksLikeOutput(name, m);
    EXPECT_TRUE(m.warnings.empty()) << name;
  }
}

}  // namespace
}  // namespace cstool
