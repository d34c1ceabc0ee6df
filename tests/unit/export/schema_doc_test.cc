// man/cstool-export.5 documents every table and column the export writes, under the
// table's own heading, and the schema version it describes is the one written.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "export/schema.h"
#include "tests/support/files.h"

namespace cstool::testing {
namespace {

// The text of ".SS name" up to the next heading.
std::string Subsection(const std::string& page, std::string_view name) {
  const std::string head = fmt::format("\n.SS {}\n", name);
  const size_t start = page.find(head);
  if (start == std::string::npos) return {};
  const size_t end = page.find("\n.S", start + head.size());
  return page.substr(start, end == std::string::npos ? std::string::npos : end + 1 - start);
}

TEST(ExportSchemaDoc, EveryTableAndColumnIsDocumented) {
  const std::string page = ReadWholeFile(std::string(CSTOOL_SOURCE_DIR) + "/man/cstool-export.5");
  ASSERT_FALSE(page.empty());
  EXPECT_NE(page.find(fmt::format("This page describes schema version {}.", kExportSchemaVersion)),
            std::string::npos);
  for (const TableSchema& t : AllTables()) {
    const std::string text = Subsection(page, t.name);
    ASSERT_FALSE(text.empty()) << "no .SS " << t.name << " in man/cstool-export.5";
    for (const Column& c : t.columns)
      EXPECT_NE(text.find(fmt::format("\n.TP\n.B {}\n", c.name)), std::string::npos)
          << t.name << "." << c.name << " is not documented under .SS " << t.name;
  }
}

TEST(ExportSchemaDoc, SqlNamesEveryColumnWithTheKeysFirst) {
  EXPECT_EQ(CreateTableSql(SchemaOf(Table::kLostEvents)),
            "CREATE TABLE IF NOT EXISTS \"lost_events\" (\"trace_id\" TEXT, \"host\" TEXT, "
            "\"cpu\" INTEGER, \"count\" INTEGER)");
  EXPECT_EQ(InsertSql(SchemaOf(Table::kLostEvents)),
            "INSERT INTO \"lost_events\" VALUES (?, ?, ?, ?)");
}

}  // namespace
}  // namespace cstool::testing
