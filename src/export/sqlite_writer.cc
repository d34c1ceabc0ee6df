#include "export/sqlite_writer.h"

#include <fmt/core.h>
#include <sqlite3.h>

#include <filesystem>
#include <stdexcept>

#include "base/errors.h"

namespace cstool {
namespace {

// Steps a statement that returns rows, calling `row` for each.
template <typename Row>
int StepRows(sqlite3_stmt* st, Row row) {
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) row(st);
  return rc;
}

std::string ColumnText(sqlite3_stmt* st, int i) {
  const unsigned char* s = sqlite3_column_text(st, i);
  return s ? reinterpret_cast<const char*>(s) : "";
}

}  // namespace

void SqliteWriter::CloseDb::operator()(sqlite3* db) const { sqlite3_close_v2(db); }
void SqliteWriter::FinalizeStmt::operator()(sqlite3_stmt* st) const { sqlite3_finalize(st); }

SqliteWriter::SqliteWriter(const std::string& path, TraceKey key, bool replace)
    : path_(path), key_(std::move(key)) {
  try {
    Begin(replace);
  } catch (...) {
    Abandon();
    throw;
  }
}

void SqliteWriter::Begin(bool replace) {
  if (std::error_code ec; std::filesystem::is_directory(path_, ec))
    throw Error(fmt::format("{} is a directory: --format sqlite writes one database file; give "
                            "a new file or one it wrote",
                            path_),
                ExitCode::kUsage);
  sqlite3* db = nullptr;
  const int rc =
      sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  db_.reset(db);  // a handle even on failure, for the message
  if (rc != SQLITE_OK) Fail("cannot open");
  sqlite3_busy_timeout(db_.get(), 10'000);  // another host's export appending to a shared file
  // One big transaction: the journal is what makes it atomic, fsyncs at commit only. (The
  // first statement is where SQLite reads the file's header.)
  const char* pragma = "PRAGMA synchronous = NORMAL";
  const int read = sqlite3_exec(db_.get(), pragma, nullptr, nullptr, nullptr);
  if (read == SQLITE_NOTADB)
    throw Error(fmt::format("{} is not a SQLite database: --format sqlite adds its tables to a "
                            "SQLite database, or makes a new file; give a new file or a database",
                            path_),
                ExitCode::kUsage);
  if (read != SQLITE_OK) Fail(pragma);
  Exec("BEGIN IMMEDIATE");
  CheckSchema();
  CheckDuplicate(replace);
  for (const TableSchema& t : AllTables()) {
    const std::string sql = InsertSql(t);
    sqlite3_stmt* st = nullptr;
    const int prepared =
        sqlite3_prepare_v3(db_.get(), sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &st, nullptr);
    insert_[static_cast<size_t>(t.table)].reset(st);
    if (prepared != SQLITE_OK) Fail("cannot prepare " + sql);
  }
}

SqliteWriter::~SqliteWriter() {
  if (!committed_) Abandon();
}

// The rollback undoes this export's rows. A database it created stays, empty: another
// host's export may be waiting for the lock on the same new file, and would write into a
// removed one.
void SqliteWriter::Abandon() noexcept {
  for (Statement& st : insert_) st.reset();
  if (db_) sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
  db_.reset();
}

void SqliteWriter::Fail(const std::string& what) {
  throw Error(
      fmt::format("{}: {}: {}", path_, what, db_ ? sqlite3_errmsg(db_.get()) : "out of memory"));
}

void SqliteWriter::Exec(const std::string& sql) {
  if (sqlite3_exec(db_.get(), sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) Fail(sql);
}

// A new database gets the schema; an existing one must have this version's.
void SqliteWriter::CheckSchema() {
  Exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)");
  sqlite3_stmt* raw = nullptr;
  sqlite3_prepare_v2(db_.get(), "SELECT value FROM meta WHERE key = 'schema_version'", -1, &raw,
                     nullptr);
  Statement st(raw);
  if (!st) Fail("cannot read meta");
  std::string version;
  StepRows(st.get(), [&](sqlite3_stmt* s) { version = ColumnText(s, 0); });
  if (version.empty()) {
    Exec(
        fmt::format("INSERT INTO meta VALUES ('schema_version', '{}'), ('created_by', 'cstool {}')",
                    kExportSchemaVersion, CSTOOL_VERSION));
  } else if (version != std::to_string(kExportSchemaVersion)) {
    throw Error(fmt::format(
        "{} has export schema version {}, this cstool writes version {} (see cstool-export(5)): "
        "export into a new database",
        path_, version, kExportSchemaVersion));
  }
  for (const TableSchema& t : AllTables()) Exec(CreateTableSql(t));
  // The joins of a fleet query go through these; the large tables stay unindexed so that
  // inserts stay fast (an index can be added after loading).
  Exec("CREATE INDEX IF NOT EXISTS thread_key ON thread (trace_id, utid)");
  Exec("CREATE INDEX IF NOT EXISTS process_key ON process (trace_id, pid)");
}

void SqliteWriter::CheckDuplicate(bool replace) {
  sqlite3_stmt* raw = nullptr;
  sqlite3_prepare_v2(db_.get(), "SELECT host, file FROM trace WHERE trace_id = ?", -1, &raw,
                     nullptr);
  Statement st(raw);
  if (!st) Fail("cannot read the trace table");
  sqlite3_bind_text(st.get(), 1, key_.trace_id.data(), static_cast<int>(key_.trace_id.size()),
                    SQLITE_TRANSIENT);
  std::string host, file;
  bool found = false;
  StepRows(st.get(), [&](sqlite3_stmt* s) {
    found = true;
    host = ColumnText(s, 0);
    file = ColumnText(s, 1);
  });
  if (!found) return;
  if (replace && !key_.host_given) key_.host = host;
  if (!replace)
    throw Error(fmt::format(
        "{} already holds trace {} (host {}, file {}): the same recording is exported only "
        "once, every thread of it whatever -p/-t selected (they set in_report); --replace "
        "exports it again in place of those rows",
        path_, key_.trace_id, host, file));
  for (const TableSchema& t : AllTables())
    Exec(fmt::format("DELETE FROM \"{}\" WHERE trace_id = '{}'", t.name, key_.trace_id));
}

void SqliteWriter::Add(Table table, std::span<const Value> values) {
  if (values.size() != SchemaOf(table).columns.size())
    throw std::logic_error("export row of the wrong width");
  sqlite3_stmt* st = insert_[static_cast<size_t>(table)].get();
  sqlite3_bind_text(st, 1, key_.trace_id.data(), static_cast<int>(key_.trace_id.size()),
                    SQLITE_STATIC);
  sqlite3_bind_text(st, 2, key_.host.data(), static_cast<int>(key_.host.size()), SQLITE_STATIC);
  int i = 3;
  for (const Value& v : values) {
    if (const int64_t* n = std::get_if<int64_t>(&v))
      sqlite3_bind_int64(st, i, *n);
    else if (const std::string_view* s = std::get_if<std::string_view>(&v))
      sqlite3_bind_text(st, i, s->data(), static_cast<int>(s->size()), SQLITE_STATIC);
    else
      sqlite3_bind_null(st, i);
    ++i;
  }
  if (sqlite3_step(st) != SQLITE_DONE) Fail(fmt::format("insert into {}", SchemaOf(table).name));
  sqlite3_reset(st);
  Count(table);
}

void SqliteWriter::Commit() {
  Exec("COMMIT");
  committed_ = true;
}

}  // namespace cstool
