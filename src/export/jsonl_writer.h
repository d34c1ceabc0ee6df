// Rows as JSON Lines, one file per table in a directory (DIR/<table>.jsonl, one object
// per line with the table's columns as keys, NULL as null), for engines that ingest
// them directly: DuckDB read_json, ClickHouse JSONEachRow, BigQuery. DIR/meta.json says
// the schema version. Appends like the SQLite writer, all or nothing: a trace already in
// DIR/trace.jsonl is refused, or with `replace` each file is rewritten without its lines
// beside the original (FILE.replace) and renamed over it at the commit; a failed export
// truncates every file back to where it started, removes the rewrites, and removes DIR
// when it made it. An export killed on the way (a signal, kill -9, a crash) cannot undo
// itself: its journal (DIR/export-journal.json, the files' sizes before it) stays, and the
// next export into DIR first rolls back what it left (or, killed while renaming its
// rewrites in place, finishes them), so rows are never left half-written or doubled.
#pragma once

#include <array>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "export/row_sink.h"

namespace cstool {

class JsonlWriter final : public RowSink {
 public:
  // Throws cstool::Error when DIR cannot be created or written, holds another schema
  // version, or already holds key.trace_id and `replace` is false.
  JsonlWriter(const std::string& dir, TraceKey key, bool replace);
  // The trace's key as written: its host the stored one when --replace re-exports a trace
  // without --host (TraceKey::host_given).
  const TraceKey& key() const { return key_; }
  // What the journal of an export killed before this one said and this one did about it
  // ("" if there was none).
  const std::string& recovered() const { return recovered_; }
  ~JsonlWriter() override;
  JsonlWriter(const JsonlWriter&) = delete;
  JsonlWriter& operator=(const JsonlWriter&) = delete;

  void Add(Table table, std::span<const Value> values) override;
  void Commit() override;

 private:
  struct File {
    std::string path;
    std::string written;      // path, or its rewrite without the replaced trace's lines
    uint64_t start_size = 0;  // where this export's lines begin in `written`
    uint64_t path_size = 0;   // `path`'s size before the export (the journal's)
    bool existed = false;     // whether `path` did
    std::vector<char> buffer;
    std::ofstream out;
  };
  std::string PathOf(const TableSchema& t) const;
  void Open(bool replace);
  // A failed export, in the constructor or after: every file as it was before.
  void Undo() noexcept;
  // The journal: written before the first byte of the export, marked when the commit
  // starts (from then on a recovery finishes the commit), removed when it is done.
  std::string JournalPath() const;
  void WriteJournal(bool committing);
  // An earlier export's journal: its files back as they were, or its commit finished.
  void Recover();
  void CheckSchema();
  // Whether DIR holds the trace already: then refused, unless `replace`.
  bool CheckDuplicate(bool replace);
  // With --replace: each file rewritten without the trace's lines into FILE.replace.
  void RewriteWithoutTrace();
  // How each line of the trace starts: {"trace_id":"...",
  std::string TraceLineStart() const;

  std::string dir_;
  TraceKey key_;
  std::string prefix_;  // {"trace_id":"...","host":"...", as every line starts
  std::string line_;
  std::array<File, kTableCount> files_;
  bool made_dir_ = false;  // DIR did not exist: a failed export removes it
  bool committed_ = false;
  bool replacing_ = false;  // writes FILE.replace rewrites, renamed over FILE at the commit
  bool journaled_ = false;  // the journal is this export's: it has begun to write
  std::string recovered_;
};

}  // namespace cstool
