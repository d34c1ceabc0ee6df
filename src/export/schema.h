// The tables `report --format sqlite|jsonl` writes (man/cstool-export.5 documents every
// column). Named and shaped after Perfetto's trace processor where it has the table
// (process, thread, thread_state, sched_slice; utid is its unique thread id, here
// Thread::id within one trace), plus cstool's own. Every table but `meta` starts with
// trace_id and host, so the recordings of many hosts append into one database.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace cstool {

// Bumped whenever a table or column changes meaning, is removed or renamed; a writer
// refuses to append to a database or directory of another version.
inline constexpr int kExportSchemaVersion = 1;

enum class Table : uint8_t {
  kTrace,
  kProcess,
  kThread,
  kThreadState,
  kSchedSlice,
  kSwitch,
  kMicrostate,
  kSyscall,
  kIrq,
  kKernelCheck,
  kLostEvents,
};
inline constexpr size_t kTableCount = static_cast<size_t>(Table::kLostEvents) + 1;

enum class ColumnType : uint8_t { kInteger, kText };

struct Column {
  std::string_view name;
  ColumnType type;
};

struct TableSchema {
  Table table;
  std::string_view name;
  // After trace_id and host, which every table starts with (kKeyColumns).
  std::span<const Column> columns;
};

inline constexpr Column kKeyColumns[] = {{"trace_id", ColumnType::kText},
                                         {"host", ColumnType::kText}};

const TableSchema& SchemaOf(Table t);
std::span<const TableSchema> AllTables();

// CREATE TABLE IF NOT EXISTS for SQLite, key columns first.
std::string CreateTableSql(const TableSchema& t);
// INSERT with one ? per column, key columns first.
std::string InsertSql(const TableSchema& t);

}  // namespace cstool
