#include "export/schema.h"

#include <fmt/core.h>

#include <array>

namespace cstool {
namespace {

constexpr ColumnType I = ColumnType::kInteger;
constexpr ColumnType T = ColumnType::kText;

constexpr Column kTrace[] = {
    {"file", T}, {"events", I},      {"cpus", I},        {"start_ts", I}, {"end_ts", I},
    {"dur", I},  {"lost_events", I}, {"trace_clock", T}, {"command", T},  {"cstool_version", T}};
constexpr Column kProcess[] = {
    {"pid", I}, {"ppid", I}, {"name", T}, {"threads", I}, {"in_report", I}};
constexpr Column kThread[] = {{"utid", I},
                              {"tid", I},
                              {"pid", I},
                              {"name", T},
                              {"start_ts", I},
                              {"end_ts", I},
                              {"dur", I},
                              {"in_report", I},
                              {"created_in_trace", I},
                              {"exited", I},
                              {"lost_events_touched", I},
                              {"voluntary", I},
                              {"involuntary", I},
                              {"wakeups", I},
                              {"migrations", I}};
constexpr Column kThreadState[] = {{"utid", I}, {"ts", I},         {"dur", I},        {"state", T},
                                   {"cpu", I},  {"waker_utid", I}, {"irq_context", I}};
constexpr Column kSchedSlice[] = {{"utid", I}, {"ts", I}, {"dur", I}, {"cpu", I}, {"end_cause", T}};
constexpr Column kSwitch[] = {{"ts", I},        {"cpu", I},   {"utid", I},        {"next_utid", I},
                              {"voluntary", I}, {"cause", T}, {"preempted_at", T}};
constexpr Column kMicrostate[] = {{"utid", I}, {"state", T}, {"dur", I}};
constexpr Column kSyscall[] = {{"utid", I}, {"name", T}, {"calls", I}, {"blocked", I}, {"dur", I}};
constexpr Column kIrq[] = {{"utid", I}, {"name", T}, {"count", I}, {"dur", I}};
constexpr Column kKernelCheck[] = {{"utid", I},
                                   {"tid", I},
                                   {"status", T},
                                   {"voluntary", I},
                                   {"kernel_voluntary", I},
                                   {"involuntary", I},
                                   {"kernel_involuntary", I},
                                   {"on_cpu_ns", I},
                                   {"kernel_on_cpu_ns", I},
                                   {"wait_cpu_ns", I},
                                   {"kernel_wait_cpu_ns", I},
                                   {"unknown_ns", I},
                                   {"on_cpu_tolerance_ns", I},
                                   {"wait_tolerance_ns", I},
                                   {"switches_ok", I},
                                   {"on_cpu_ok", I},
                                   {"wait_ok", I},
                                   {"times_judged", I},
                                   {"note", T}};
constexpr Column kLostEvents[] = {{"cpu", I}, {"count", I}};

// In Table order.
constexpr std::array<TableSchema, kTableCount> kTables = {{
    {Table::kTrace, "trace", kTrace},
    {Table::kProcess, "process", kProcess},
    {Table::kThread, "thread", kThread},
    {Table::kThreadState, "thread_state", kThreadState},
    {Table::kSchedSlice, "sched_slice", kSchedSlice},
    {Table::kSwitch, "switch", kSwitch},
    {Table::kMicrostate, "microstate", kMicrostate},
    {Table::kSyscall, "syscall", kSyscall},
    {Table::kIrq, "irq", kIrq},
    {Table::kKernelCheck, "kernel_check", kKernelCheck},
    {Table::kLostEvents, "lost_events", kLostEvents},
}};

std::string_view SqlType(ColumnType t) { return t == ColumnType::kInteger ? "INTEGER" : "TEXT"; }

}  // namespace

const TableSchema& SchemaOf(Table t) { return kTables[static_cast<size_t>(t)]; }
std::span<const TableSchema> AllTables() { return kTables; }

// Names are quoted: `switch` and others are keywords in some SQL dialects.
std::string CreateTableSql(const TableSchema& t) {
  std::string sql = fmt::format("CREATE TABLE IF NOT EXISTS \"{}\" (", t.name);
  bool first = true;
  auto add = [&](const Column& c) {
    sql += fmt::format("{}\"{}\" {}", first ? "" : ", ", c.name, SqlType(c.type));
    first = false;
  };
  for (const Column& c : kKeyColumns) add(c);
  for (const Column& c : t.columns) add(c);
  return sql + ")";
}

std::string InsertSql(const TableSchema& t) {
  std::string sql = fmt::format("INSERT INTO \"{}\" VALUES (?, ?", t.name);
  for (size_t i = 0; i < t.columns.size(); ++i) sql += ", ?";
  return sql + ")";
}

}  // namespace cstool
