// Shared by the export tests: a scratch directory, the cstool binary's reports, and SQL
// queries through libsqlite3 or the sqlite3 command-line shell.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/files.h"
#include "tests/support/run_command.h"

namespace cstool::testing {

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag)
      : path_(std::filesystem::temp_directory_path() /
              ("cstool-export-" + tag + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// `cstool report FILE --format json ARGS...`, parsed.
inline nlohmann::json JsonReport(const std::string& file, std::vector<std::string> args = {}) {
  std::vector<std::string> argv = {CSTOOL_BINARY, "report", file, "--format", "json"};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandResult r = RunCommand(argv);
  EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;  // 1: --check disagreed
  return nlohmann::json::parse(r.out);
}

// `cstool report FILE --format FORMAT -o OUT ARGS...`; returns its result.
inline CommandResult ExportTables(const std::string& file, const std::string& format,
                                  const std::string& out, std::vector<std::string> args = {}) {
  std::vector<std::string> argv = {CSTOOL_BINARY, "report", file, "--format", format, "-o", out};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv);
}

// The rows of a query, every value as text ("NULL" for null).
class Database {
 public:
  explicit Database(const std::string& path) {
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  }
  ~Database() { sqlite3_close(db_); }
  std::vector<std::vector<std::string>> Rows(const std::string& sql) const {
    std::vector<std::vector<std::string>> rows;
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db_);
      return rows;
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int i = 0; i < sqlite3_column_count(st); ++i) {
        const unsigned char* v = sqlite3_column_text(st, i);
        row.emplace_back(v ? reinterpret_cast<const char*>(v) : "NULL");
      }
      rows.push_back(std::move(row));
    }
    sqlite3_finalize(st);
    return rows;
  }
  int64_t Number(const std::string& sql) const {
    auto rows = Rows(sql);
    EXPECT_EQ(rows.size(), 1u) << sql;
    return rows.empty() || rows[0][0] == "NULL" ? -1 : std::stoll(rows[0][0]);
  }

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace cstool::testing
