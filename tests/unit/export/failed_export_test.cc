// A failed export changes nothing: the rows of earlier exports stay (also those a
// --replace export was to replace), and a directory of JSON Lines the export created is
// not left behind.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/errors.h"
#include "export/jsonl_writer.h"
#include "export/schema.h"
#include "export/sqlite_writer.h"
#include "tests/support/files.h"

namespace cstool {
namespace {

namespace fs = std::filesystem;

fs::path Scratch(const std::string& name) {
  fs::path p = fs::temp_directory_path() /
               ("cstool_failed_export_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(p);
  return p;
}

// A trace row whose `events` column is `events`.
void AddTraceRow(RowSink& sink, int64_t events) {
  std::vector<Value> row(SchemaOf(Table::kTrace).columns.size(), Value{std::string_view("x")});
  row[1] = events;
  sink.Add(Table::kTrace, row);
}

int64_t SqliteEvents(const fs::path& db) {
  sqlite3* h = nullptr;
  sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(h, "SELECT sum(events) FROM trace", -1, &st, nullptr);
  int64_t n = -1;
  if (st && sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return n;
}

TEST(FailedExport, JsonlReplaceKeepsTheEarlierLinesUntilItCommits) {
  const fs::path dir = Scratch("jsonl");
  const TraceKey key{"t1", "alpha"};
  {
    JsonlWriter first(dir.string(), key, false);
    AddTraceRow(first, 7);
    first.Commit();
  }
  const std::string before = testing::ReadWholeFile(dir / "trace.jsonl");
  ASSERT_NE(before.find("\"events\":7"), std::string::npos) << before;
  {
    JsonlWriter failed(dir.string(), key, true);
    AddTraceRow(failed, 8);
  }  // no Commit: as when the analysis fails
  EXPECT_EQ(testing::ReadWholeFile(dir / "trace.jsonl"), before);
  for (const auto& entry : fs::directory_iterator(dir))
    EXPECT_NE(entry.path().extension(), ".replace") << entry.path();
  {
    JsonlWriter again(dir.string(), key, true);
    AddTraceRow(again, 9);
    again.Commit();
  }
  const std::string after = testing::ReadWholeFile(dir / "trace.jsonl");
  EXPECT_EQ(after.find("\"events\":7"), std::string::npos) << after;
  EXPECT_NE(after.find("\"events\":9"), std::string::npos) << after;
  fs::remove_all(dir);
}

TEST(FailedExport, JsonlIntoANewDirectoryLeavesNoDirectory) {
  const fs::path dir = Scratch("jsonl_new");
  {
    JsonlWriter failed(dir.string(), {"t1", "alpha"}, false);
    AddTraceRow(failed, 1);
  }
  EXPECT_FALSE(fs::exists(dir));
}

// A path of the other format's kind is refused, saying what each writes, and stays as it
// was ("cannot create directory x.db: Not a directory", "jl: cannot open: unable to open
// database file" said neither).
TEST(FailedExport, APathOfTheOtherKindIsRefusedAndKept) {
  const fs::path file = Scratch("a_file.db");
  { std::ofstream(file) << "x"; }
  const fs::path dir = Scratch("a_dir");
  fs::create_directory(dir);
  try {
    JsonlWriter w(file.string(), {"t1", "alpha"}, false);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_EQ(std::string(e.what()),
              file.string() +
                  " is a file: --format jsonl writes a directory of tables (one "
                  ".jsonl file each); give a new directory or one it wrote");
  }
  try {
    SqliteWriter w(dir.string(), {"t1", "alpha"}, false);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_EQ(std::string(e.what()), dir.string() +
                                         " is a directory: --format sqlite writes one "
                                         "database file; give a new file or one it "
                                         "wrote");
  }
  EXPECT_EQ(testing::ReadWholeFile(file), "x");
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove(file);
  fs::remove(dir);
}

// A database the failed export created stays, without rows (another host's export may be
// waiting for the lock on that new file); an earlier one keeps its rows.
TEST(FailedExport, SqliteLeavesNoRowsAndKeepsAnEarlierDatabasesRows) {
  const fs::path db = Scratch("new.db");
  {
    SqliteWriter failed(db.string(), {"t1", "alpha"}, false);
    AddTraceRow(failed, 1);
  }
  EXPECT_LE(SqliteEvents(db), 0);  // no trace table, or no row in it
  EXPECT_FALSE(fs::exists(db.string() + "-journal"));
  {
    SqliteWriter first(db.string(), {"t1", "alpha"}, false);
    AddTraceRow(first, 7);
    first.Commit();
  }
  {
    SqliteWriter failed(db.string(), {"t1", "alpha"}, true);
    AddTraceRow(failed, 8);
  }
  EXPECT_EQ(SqliteEvents(db), 7);
  fs::remove(db);
}

}  // namespace
}  // namespace cstool
