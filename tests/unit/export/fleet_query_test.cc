// Many recordings in one database: two fixtures appended under different hosts answer a
// cross-trace query, run for real with the sqlite3 shell; the same trace is never
// appended twice.
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "export/schema.h"
#include "tests/support/export_db.h"
#include "tests/support/files.h"

namespace cstool::testing {
namespace {

std::string SqliteMissing() {
  return RunCommand({"sqlite3", "-version"}).status == 0
             ? ""
             : "the sqlite3 shell is not installed (scripts/install-deps.sh installs it)";
}

// `sqlite3 DB SQL`: its output lines.
std::vector<std::string> Shell(const std::string& db, const std::string& sql) {
  CommandResult r = RunCommand({"sqlite3", db, sql});
  EXPECT_EQ(r.status, 0) << sql << "\n" << r.err;
  std::vector<std::string> lines;
  for (size_t at = 0, nl; (nl = r.out.find('\n', at)) != std::string::npos; at = nl + 1)
    lines.push_back(r.out.substr(at, nl - at));
  return lines;
}

// The reported thread with the most wait_cpu_preempted time (the smaller tid on a tie),
// from the JSON report: "tid|comm|ns".
std::string MostPreempted(const nlohmann::json& report) {
  const nlohmann::json* best = nullptr;
  for (const auto& t : report["threads"]) {
    if (!best) {
      best = &t;
      continue;
    }
    const int64_t a = t["microstates_ns"]["wait_cpu_preempted"].get<int64_t>();
    const int64_t b = (*best)["microstates_ns"]["wait_cpu_preempted"].get<int64_t>();
    if (a > b || (a == b && t["tid"].get<int>() < (*best)["tid"].get<int>())) best = &t;
  }
  return fmt::format("{}|{}|{}", (*best)["tid"].get<int>(), (*best)["comm"].get<std::string>(),
                     (*best)["microstates_ns"]["wait_cpu_preempted"].get<int64_t>());
}

constexpr const char* kMostPreemptedPerTrace = R"(
SELECT host, tid, name, dur FROM (
  SELECT th.host, th.tid, th.name, m.dur,
         row_number() OVER (PARTITION BY m.trace_id ORDER BY m.dur DESC, th.tid) AS rank
  FROM microstate m JOIN thread th USING (trace_id, utid)
  WHERE m.state = 'wait_cpu_preempted' AND th.in_report)
WHERE rank = 1 ORDER BY host;)";

class Fleet : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = SqliteMissing(); !why.empty()) GTEST_SKIP() << why;
  }
  ScratchDir dir_{"fleet"};
};

TEST_F(Fleet, TwoRecordingsAnswerACrossTraceQuery) {
  const std::string db = dir_ / "fleet.db";
  const std::string a = Fixture("golden_mutex.dat"), b = Fixture("small_v6.dat");
  ASSERT_EQ(ExportTables(a, "sqlite", db, {"--host", "alpha"}).status, 0);
  CommandResult second = ExportTables(b, "sqlite", db, {"--host", "beta"});
  ASSERT_EQ(second.status, 0) << second.err;

  EXPECT_EQ(Shell(db, "SELECT host, count(*) FROM trace GROUP BY host ORDER BY host;"),
            (std::vector<std::string>{"alpha|1", "beta|1"}));
  EXPECT_EQ(Shell(db, kMostPreemptedPerTrace),
            (std::vector<std::string>{"alpha|" + MostPreempted(JsonReport(a)),
                                      "beta|" + MostPreempted(JsonReport(b))}));

  // Switch counts by cause over both hosts: the two reports' sums.
  std::map<std::string, int64_t> causes;
  for (const std::string& f : {a, b}) {
    const nlohmann::json report = JsonReport(f, {"--all-threads"});
    for (const auto& t : report["threads"])
      for (auto& [k, v] : t["switches"]["causes"].items()) causes[k] += v.get<int64_t>();
  }
  std::vector<std::string> expected;
  for (auto& [k, v] : causes) expected.push_back(fmt::format("{}|{}", k, v));
  EXPECT_EQ(Shell(db, "SELECT cause, count(*) FROM switch GROUP BY cause ORDER BY cause;"),
            expected);
}

TEST_F(Fleet, TheSameTraceIsRefusedOrReplacedNeverDoubled) {
  const std::string db = dir_ / "fleet.db";
  const std::string a = Fixture("golden_mutex.dat");
  ASSERT_EQ(ExportTables(a, "sqlite", db, {"--host", "alpha"}).status, 0);
  auto counts = [&] {
    std::string sql;
    for (const TableSchema& t : AllTables())
      sql += fmt::format("SELECT '{}', count(*) FROM \"{}\";", t.name, t.name);
    return Shell(db, sql);
  };
  const std::vector<std::string> before = counts();

  // Under another host name and from another path it is still the same recording.
  const std::string copy = dir_ / "copy.dat";
  std::filesystem::copy_file(a, copy);
  CommandResult again = ExportTables(copy, "sqlite", db, {"--host", "gamma"});
  EXPECT_EQ(again.status, 1);
  EXPECT_NE(again.err.find("already holds trace"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("--replace"), std::string::npos) << again.err;
  EXPECT_EQ(counts(), before);

  CommandResult replaced = ExportTables(copy, "sqlite", db, {"--host", "gamma", "--replace"});
  EXPECT_EQ(replaced.status, 0) << replaced.err;
  EXPECT_EQ(counts(), before);
  EXPECT_EQ(Shell(db, "SELECT DISTINCT host FROM thread_state;"),
            (std::vector<std::string>{"gamma"}));
  // Without --host, exported again in place it keeps the host it was stored under (it
  // took the exporting machine's name), and says which.
  CommandResult kept = ExportTables(copy, "sqlite", db, {"--replace"});
  EXPECT_EQ(kept.status, 0) << kept.err;
  EXPECT_EQ(Shell(db, "SELECT DISTINCT host FROM thread_state UNION SELECT host FROM trace;"),
            (std::vector<std::string>{"gamma"}));
  EXPECT_NE(kept.err.find("(host gamma)"), std::string::npos) << kept.err;
}

TEST_F(Fleet, JsonlDirectoryAppendsAndRefusesTheSameTrace) {
  const std::string out = dir_ / "tables";
  ASSERT_EQ(ExportTables(Fixture("golden_mutex.dat"), "jsonl", out, {"--host", "alpha"}).status, 0);
  ASSERT_EQ(ExportTables(Fixture("small_v6.dat"), "jsonl", out, {"--host", "beta"}).status, 0);
  const std::string trace = ReadWholeFile(out + "/trace.jsonl");
  EXPECT_NE(trace.find("\"host\":\"alpha\""), std::string::npos);
  EXPECT_NE(trace.find("\"host\":\"beta\""), std::string::npos);
  const auto size = std::filesystem::file_size(out + "/thread_state.jsonl");
  CommandResult again = ExportTables(Fixture("golden_mutex.dat"), "jsonl", out);
  EXPECT_EQ(again.status, 1);
  EXPECT_NE(again.err.find("already holds trace"), std::string::npos) << again.err;
  EXPECT_EQ(std::filesystem::file_size(out + "/thread_state.jsonl"), size);
  ASSERT_EQ(
      ExportTables(Fixture("golden_mutex.dat"), "jsonl", out, {"--host", "alpha", "--replace"})
          .status,
      0);
  EXPECT_EQ(std::filesystem::file_size(out + "/thread_state.jsonl"), size);
  // Without --host it stays alpha's.
  ASSERT_EQ(ExportTables(Fixture("golden_mutex.dat"), "jsonl", out, {"--replace"}).status, 0);
  EXPECT_EQ(std::filesystem::file_size(out + "/thread_state.jsonl"), size);
  const std::string after = ReadWholeFile(out + "/trace.jsonl");
  EXPECT_NE(after.find("\"host\":\"alpha\""), std::string::npos) << after;
  EXPECT_NE(after.find("\"host\":\"beta\""), std::string::npos) << after;
}

TEST_F(Fleet, ADatabaseOfAnotherSchemaVersionIsRefused) {
  const std::string db = dir_ / "old.db";
  ASSERT_EQ(RunCommand({"sqlite3", db,
                        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta "
                        "VALUES ('schema_version', '0');"})
                .status,
            0);
  CommandResult r = ExportTables(Fixture("small_v6.dat"), "sqlite", db);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("schema version 0"), std::string::npos) << r.err;
}

TEST(ExportUsage, FormatsAndOutputGoTogether) {
  CommandResult no_output =
      RunCommand({CSTOOL_BINARY, "report", Fixture("small_v6.dat"), "--format", "sqlite"});
  EXPECT_EQ(no_output.status, 2);
  EXPECT_NE(no_output.err.find("needs -o"), std::string::npos) << no_output.err;
  // --host and --replace are the export's: without it they would be ignored.
  for (const char* option : {"--host", "--replace"}) {
    std::vector<std::string> argv = {CSTOOL_BINARY, "report", Fixture("small_v6.dat"), option};
    if (std::string_view(option) == "--host") argv.push_back("alpha");
    CommandResult ignored = RunCommand(argv);
    EXPECT_EQ(ignored.status, 2) << option;
    EXPECT_NE(ignored.err.find(std::string(option) + " goes with --format sqlite|jsonl"),
              std::string::npos)
        << ignored.err;
  }
  // With table, json or csv, -o is the file the report goes to instead of stdout.
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() /
      ("cstool_report_to_file_" + std::to_string(::getpid()) + ".json");
  CommandResult to_stdout =
      RunCommand({CSTOOL_BINARY, "report", Fixture("small_v6.dat"), "--format", "json"});
  CommandResult to_file = RunCommand(
      {CSTOOL_BINARY, "report", Fixture("small_v6.dat"), "--format", "json", "-o", file.string()});
  EXPECT_EQ(to_file.status, 0) << to_file.err;
  EXPECT_EQ(to_file.out, "");
  EXPECT_EQ(ReadWholeFile(file), to_stdout.out);
  CommandResult unwritable = RunCommand(
      {CSTOOL_BINARY, "report", Fixture("small_v6.dat"), "-o", "/nonexistent-dir/report.txt"});
  EXPECT_EQ(unwritable.status, 1);
  EXPECT_NE(unwritable.err.find("/nonexistent-dir/report.txt: cannot write: No such file"),
            std::string::npos)
      << unwritable.err;
  // -o naming the recording itself (record's -o habit) is refused, the file untouched.
  const std::filesystem::path copy = std::filesystem::temp_directory_path() /
                                     ("cstool_report_input_" + std::to_string(::getpid()) + ".dat");
  std::filesystem::copy_file(Fixture("small_v6.dat"), copy,
                             std::filesystem::copy_options::overwrite_existing);
  const auto size = std::filesystem::file_size(copy);
  CommandResult onto_input =
      RunCommand({CSTOOL_BINARY, "report", copy.string(), "-o", copy.string()});
  EXPECT_EQ(onto_input.status, 2);
  EXPECT_NE(onto_input.err.find("is the recording being read"), std::string::npos)
      << onto_input.err;
  EXPECT_EQ(std::filesystem::file_size(copy), size);
  // A failed analysis leaves an earlier report as it was, and no partial file.
  { std::ofstream(file) << "earlier report"; }
  CommandResult failed =
      RunCommand({CSTOOL_BINARY, "report", "/nonexistent.dat", "-o", file.string()});
  EXPECT_EQ(failed.status, 1);
  EXPECT_EQ(ReadWholeFile(file), "earlier report");
  EXPECT_FALSE(std::filesystem::exists(file.string() + ".partial"));
  std::filesystem::remove(file);
  std::filesystem::remove(copy);
  CommandResult unknown =
      RunCommand({CSTOOL_BINARY, "report", Fixture("small_v6.dat"), "--format", "parquet"});
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("sqlite, jsonl"), std::string::npos) << unknown.err;
}

}  // namespace
}  // namespace cstool::testing
