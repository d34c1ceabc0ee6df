// Rows into a SQLite database (libsqlite3): the schema created on first use and checked
// on every later one (meta.schema_version), all of one trace's rows in one transaction
// through one prepared INSERT per table, so millions of thread_state rows stream at
// constant memory and a failed export leaves the database as it was (closing the
// connection without Commit rolls the transaction back).
#pragma once

#include <array>
#include <memory>
#include <string>

#include "export/row_sink.h"

struct sqlite3;
struct sqlite3_stmt;

namespace cstool {

class SqliteWriter final : public RowSink {
 public:
  // Opens (creating) `path` and starts the transaction. Throws cstool::Error when it
  // cannot, when the database has another schema version, or when it already holds
  // key.trace_id and `replace` is false (with `replace`, that trace's rows are deleted
  // first, in the same transaction). Without Commit() the transaction is rolled back.
  SqliteWriter(const std::string& path, TraceKey key, bool replace);
  // The trace's key as written: its host the stored one when --replace re-exports a trace
  // without --host (TraceKey::host_given).
  const TraceKey& key() const { return key_; }
  ~SqliteWriter() override;
  SqliteWriter(const SqliteWriter&) = delete;
  SqliteWriter& operator=(const SqliteWriter&) = delete;

  void Add(Table table, std::span<const Value> values) override;
  void Commit() override;

 private:
  void Begin(bool replace);
  void Abandon() noexcept;
  void Exec(const std::string& sql);
  [[noreturn]] void Fail(const std::string& what);
  void CheckSchema();
  void CheckDuplicate(bool replace);

  struct CloseDb {
    void operator()(sqlite3* db) const;  // rolls back a transaction still open
  };
  struct FinalizeStmt {
    void operator()(sqlite3_stmt* st) const;
  };
  using Statement = std::unique_ptr<sqlite3_stmt, FinalizeStmt>;

  std::string path_;
  TraceKey key_;
  bool committed_ = false;
  // Declared before the statements: they are finalized first, also when the
  // constructor throws.
  std::unique_ptr<sqlite3, CloseDb> db_;
  std::array<Statement, kTableCount> insert_;
};

}  // namespace cstool
