// A failed export changes nothing: the rows of earlier exports stay (also those a
// --replace export was to replace), and a directory of JSON Lines the export created is
// not left behind.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

// An export killed on the way (here: a child that ends without unwinding, as kill -9
// leaves it) cannot truncate its files back; its journal lets the next export into the
// directory take its rows back out, so the trace is neither half there nor there twice.
TEST(FailedExport, AKilledJsonlExportIsRolledBackByTheNext) {
  const fs::path dir = Scratch("jsonl_killed");
  {
    JsonlWriter first(dir.string(), {"t1", "alpha"}, false);
    AddTraceRow(first, 7);
    first.Commit();
  }
  EXPECT_FALSE(fs::exists(dir / "export-journal.json"));
  const std::string before = testing::ReadWholeFile(dir / "trace.jsonl");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    JsonlWriter killed(dir.string(), {"t2", "alpha"}, false);
    for (int i = 0; i < 20000; ++i) AddTraceRow(killed, 5);  // past the stream's buffer
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(fs::exists(dir / "export-journal.json"));
  ASSERT_GT(fs::file_size(dir / "trace.jsonl"), before.size());  // partial rows on disk
  JsonlWriter again(dir.string(), {"t2", "alpha"}, false);       // not refused as there already
  EXPECT_EQ(again.recovered(), "removed the rows of trace t2 that an export into " + dir.string() +
                                   ", killed on the way, had written");
  EXPECT_EQ(testing::ReadWholeFile(dir / "trace.jsonl"), before);
  AddTraceRow(again, 9);
  again.Commit();
  const std::string after = testing::ReadWholeFile(dir / "trace.jsonl");
  EXPECT_EQ(after.substr(0, before.size()), before);
  EXPECT_EQ(std::count(after.begin(), after.end(), '\n'), 2);
  EXPECT_NE(after.find("\"events\":9"), std::string::npos) << after;
  EXPECT_FALSE(fs::exists(dir / "export-journal.json"));
  fs::remove_all(dir);
}

// Killed once every row was written, while the --replace rewrites were being put in
// place: the next export finishes that instead of undoing it.
TEST(FailedExport, AJsonlExportKilledWhileCommittingIsFinishedByTheNext) {
  const fs::path dir = Scratch("jsonl_committing");
  {
    JsonlWriter first(dir.string(), {"t1", "alpha"}, false);
    AddTraceRow(first, 7);
    first.Commit();
  }
  const std::string rewritten = "{\"trace_id\":\"t1\",\"host\":\"alpha\",\"events\":8}\n";
  { std::ofstream(dir / "trace.jsonl.replace") << rewritten; }
  {
    std::ofstream(dir / "export-journal.json")
        << R"({"trace_id":"t1","replacing":true,"committing":true,"files":{}})"
        << "\n";
  }
  JsonlWriter next(dir.string(), {"t3", "alpha"}, false);
  EXPECT_EQ(next.recovered(), "finished the export of trace t1 into " + dir.string() +
                                  ", killed while it put its tables in place");
  EXPECT_EQ(testing::ReadWholeFile(dir / "trace.jsonl"), rewritten);
  EXPECT_FALSE(fs::exists(dir / "trace.jsonl.replace"));
  fs::remove_all(dir);
}

// A journal acts on the tables' own files only, whatever names it holds.
TEST(FailedExport, AJournalTouchesNoFileButTheTables) {
  const fs::path dir = Scratch("jsonl_journal_names");
  const fs::path outside = Scratch("jsonl_outside.txt");
  { std::ofstream(outside) << "keep\n"; }
  {
    JsonlWriter first(dir.string(), {"t1", "alpha"}, false);
    first.Commit();
  }
  {
    std::ofstream(dir / "export-journal.json")
        << R"({"trace_id":"t2","replacing":false,"committing":false,"files":{"../)"
        << outside.filename().string() << R"(":{"size":0,"existed":false}}})"
        << "\n";
  }
  JsonlWriter next(dir.string(), {"t3", "alpha"}, false);
  EXPECT_FALSE(next.recovered().empty());
  EXPECT_EQ(testing::ReadWholeFile(outside), "keep\n");
  fs::remove_all(dir);
  fs::remove(outside);
}

TEST(FailedExport, AJournalThatCannotBeReadIsRefused) {
  const fs::path dir = Scratch("jsonl_bad_journal");
  {
    JsonlWriter first(dir.string(), {"t1", "alpha"}, false);
    first.Commit();
  }
  { std::ofstream(dir / "export-journal.json") << "{\"trace_id\""; }
  try {
    JsonlWriter w(dir.string(), {"t2", "alpha"}, false);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              (dir / "export-journal.json").string() +
                  " is not a journal cstool can read: an export into " + dir.string() +
                  " was killed and its rows may be partly there; remove the file once the "
                  "tables are checked");
  }
  EXPECT_TRUE(fs::exists(dir / "export-journal.json"));
  fs::remove_all(dir);
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
