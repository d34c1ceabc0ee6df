#include "export/table_export.h"

#include <fmt/core.h>

#include "export/jsonl_writer.h"
#include "export/sqlite_writer.h"
#include "export/streamed_rows.h"
#include "export/summary_rows.h"
#include "export/trace_id.h"

namespace cstool {

TableExport::TableExport(const TableExportOptions& options, const std::string& trace_file,
                         const SyscallTable& syscalls)
    : options_(options) {
  key_.trace_id = TraceIdOf(trace_file);
  key_.host = options.host.empty() ? LocalHostName() : options.host;
  key_.host_given = !options.host.empty();
  // The key as the writer settled it (a replaced trace's stored host).
  auto keep = [this](auto writer) {
    key_ = writer->key();
    sink_ = std::move(writer);
  };
  if (options.format == "sqlite")
    keep(std::make_unique<SqliteWriter>(options.path, key_, options.replace));
  else {
    auto jsonl = std::make_unique<JsonlWriter>(options.path, key_, options.replace);
    recovered_ = jsonl->recovered();
    keep(std::move(jsonl));
  }
  streamed_ = std::make_unique<StreamedRowObserver>(*sink_, syscalls);
}

TableExport::~TableExport() = default;

Observer* TableExport::observer() const { return streamed_.get(); }

void TableExport::Finish(const ReportView& view, const KernelCheckResult* check) {
  streamed_->Flush();
  WriteSummaryRows(view, check, *sink_);
  sink_->Commit();
}

std::string TableExport::Summary() const {
  std::string tables;
  for (const TableSchema& t : AllTables())
    if (uint64_t n = sink_->rows(t.table); n > 0)
      tables += fmt::format("{}{} {}", tables.empty() ? "" : ", ", t.name, n);
  return fmt::format("trace {} (host {}): {} rows ({}) into {}", key_.trace_id, key_.host,
                     sink_->total_rows(), tables, options_.path);
}

}  // namespace cstool
