// `report --format sqlite|jsonl -o PATH`: one trace's rows appended to a database or a
// directory. Made before the analysis (so that a bad path, another schema version or a
// trace exported already fail before it), its observer streams the large tables during
// the analysis, Finish writes the rest and commits. Destroyed without Finish, it leaves
// PATH as it was.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "analysis/report_view.h"
#include "check/kernel_check.h"
#include "export/row_sink.h"
#include "model/syscall_table.h"
#include "sched/observer.h"

namespace cstool {

class StreamedRowObserver;

struct TableExportOptions {
  std::string format;  // "sqlite" or "jsonl"
  std::string path;    // -o: the database file, or the directory
  std::string host;    // --host ("": this machine's name)
  bool replace = false;
};

class TableExport {
 public:
  static bool IsTableFormat(std::string_view format) {
    return format == "sqlite" || format == "jsonl";
  }

  // Throws cstool::Error (see SqliteWriter, JsonlWriter).
  TableExport(const TableExportOptions& options, const std::string& trace_file,
              const SyscallTable& syscalls);
  ~TableExport();

  Observer* observer() const;
  void Finish(const ReportView& view, const KernelCheckResult* check);
  // "trace 0123456789abcdef (host h): 1234 rows (thread_state 1000, ...) into PATH"
  std::string Summary() const;
  const RowSink& sink() const { return *sink_; }
  const TraceKey& key() const { return key_; }
  // What the writer did about an earlier export killed on the way ("" if none; a SQLite
  // database recovers by itself).
  const std::string& recovered() const { return recovered_; }

 private:
  TableExportOptions options_;
  TraceKey key_;
  std::string recovered_;
  std::unique_ptr<RowSink> sink_;
  std::unique_ptr<StreamedRowObserver> streamed_;
};

}  // namespace cstool
