// `report --format sqlite|jsonl`: the exported tables hold the JSON report's numbers, to
// the nanosecond, for every fixture; the JSON Lines files hold the same rows.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "export/schema.h"
#include "tests/support/export_db.h"

namespace cstool::testing {
namespace {

using Counts = std::map<std::string, int64_t>;

std::string Text(const Counts& c) {
  std::string out;
  for (auto& [k, v] : c)
    if (v != 0) out += fmt::format("{}={} ", k, v);
  return out;
}

// One thread as both sides describe it: identity, switch counts, microstates (from the
// microstate table, and summed from thread_state), causes, preemption points, syscalls,
// irqs.
struct ThreadText {
  std::string identity;
  std::string microstates;
  std::string states_summed;
  std::string causes;
  std::string preempted_at;
  std::string syscalls;
  std::string irqs;
  auto operator<=>(const ThreadText&) const = default;
};

std::ostream& operator<<(std::ostream& os, const ThreadText& t) {
  return os << "\n  " << t.identity << "\n    microstates " << t.microstates
            << "\n    thread_state " << t.states_summed << "\n    causes " << t.causes
            << "\n    preempted_at " << t.preempted_at << "\n    syscalls " << t.syscalls
            << "\n    irqs " << t.irqs;
}

std::vector<ThreadText> FromJson(const nlohmann::json& report) {
  std::vector<ThreadText> out;
  for (const auto& t : report["threads"]) {
    ThreadText x;
    x.identity = fmt::format(
        "tid={} pid={} comm={} lifetime={} vol={} invol={} wakeups={}", t["tid"].get<int>(),
        t["pid"].is_null() ? -1 : t["pid"].get<int>(), t["comm"].get<std::string>(),
        t["lifetime_ns"].get<int64_t>(), t["switches"]["voluntary"].get<int64_t>(),
        t["switches"]["involuntary"].get<int64_t>(), t["wakeups"].get<int64_t>());
    Counts m, causes, at, sys, irqs;
    for (auto& [k, v] : t["microstates_ns"].items()) m[k] = v.get<int64_t>();
    for (auto& [k, v] : t["switches"]["causes"].items()) causes[k] = v.get<int64_t>();
    for (auto& [k, v] : t["switches"]["preempted_at"].items()) at[k] = v.get<int64_t>();
    for (auto& [k, v] : t["syscalls"].items()) {
      sys[k + ".calls"] = v["calls"].get<int64_t>();
      sys[k + ".blocked"] = v["blocked"].get<int64_t>();
      sys[k + ".ns"] = v["time_ns"].get<int64_t>();
    }
    for (auto& [k, v] : t["irqs"].items()) {
      irqs[k + ".count"] = v["count"].get<int64_t>();
      irqs[k + ".ns"] = v["time_ns"].get<int64_t>();
    }
    x.microstates = x.states_summed = Text(m);
    x.causes = Text(causes);
    x.preempted_at = Text(at);
    x.syscalls = Text(sys);
    x.irqs = Text(irqs);
    out.push_back(x);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<ThreadText> FromDatabase(const Database& db) {
  std::map<std::string, ThreadText> by_utid;
  std::map<std::string, Counts> m, summed, causes, at, sys, irqs;
  for (auto& r : db.Rows("SELECT utid, tid, coalesce(pid, -1), name, dur, voluntary, "
                         "involuntary, wakeups FROM thread"))
    by_utid[r[0]].identity =
        fmt::format("tid={} pid={} comm={} lifetime={} vol={} invol={} wakeups={}", r[1], r[2],
                    r[3], r[4], r[5], r[6], r[7]);
  for (auto& r : db.Rows("SELECT utid, state, dur FROM microstate"))
    m[r[0]][r[1]] = std::stoll(r[2]);
  for (auto& r : db.Rows("SELECT utid, state, sum(dur) FROM thread_state GROUP BY utid, state"))
    summed[r[0]][r[1]] = std::stoll(r[2]);
  for (auto& r : db.Rows("SELECT utid, cause, count(*) FROM switch GROUP BY utid, cause"))
    causes[r[0]][r[1]] = std::stoll(r[2]);
  for (auto& r : db.Rows("SELECT utid, preempted_at, count(*) FROM switch WHERE preempted_at "
                         "IS NOT NULL GROUP BY utid, preempted_at"))
    at[r[0]][r[1]] = std::stoll(r[2]);
  for (auto& r : db.Rows("SELECT utid, name, calls, blocked, dur FROM syscall")) {
    sys[r[0]][r[1] + ".calls"] = std::stoll(r[2]);
    sys[r[0]][r[1] + ".blocked"] = std::stoll(r[3]);
    sys[r[0]][r[1] + ".ns"] = std::stoll(r[4]);
  }
  for (auto& r : db.Rows("SELECT utid, name, count, dur FROM irq")) {
    irqs[r[0]][r[1] + ".count"] = std::stoll(r[2]);
    irqs[r[0]][r[1] + ".ns"] = std::stoll(r[3]);
  }
  std::vector<ThreadText> out;
  for (auto& [utid, x] : by_utid) {
    x.microstates = Text(m[utid]);
    x.states_summed = Text(summed[utid]);
    x.causes = Text(causes[utid]);
    x.preempted_at = Text(at[utid]);
    x.syscalls = Text(sys[utid]);
    x.irqs = Text(irqs[utid]);
    out.push_back(x);
  }
  std::sort(out.begin(), out.end());
  return out;
}

class FixtureExport : public ::testing::TestWithParam<std::string> {};

TEST_P(FixtureExport, SqliteHoldsTheJsonReportsNumbers) {
  const std::string file = Fixture(GetParam());
  ScratchDir dir("fixture");
  const std::string db_path = dir / "runs.db";
  CommandResult r = ExportTables(file, "sqlite", db_path, {"--host", "h1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");  // the rows go to -o, only a status line to stderr
  EXPECT_NE(r.err.find("rows"), std::string::npos) << r.err;

  const nlohmann::json all = JsonReport(file, {"--all-threads"});
  const nlohmann::json report = JsonReport(file);
  Database db(db_path);
  EXPECT_EQ(db.Number("SELECT value FROM meta WHERE key = 'schema_version'"), kExportSchemaVersion);

  // Every thread, to the nanosecond.
  const std::vector<ThreadText> expected = FromJson(all);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(FromDatabase(db), expected);

  // Row counts.
  EXPECT_EQ(db.Number("SELECT count(*) FROM thread"), static_cast<int64_t>(all["threads"].size()));
  EXPECT_EQ(db.Number("SELECT count(*) FROM thread WHERE in_report"),
            static_cast<int64_t>(report["threads"].size()));
  EXPECT_EQ(db.Number("SELECT count(*) FROM process"),
            static_cast<int64_t>(all["processes"].size()));
  EXPECT_EQ(db.Number("SELECT count(*) FROM process WHERE in_report"),
            static_cast<int64_t>(report["processes"].size()));
  EXPECT_EQ(
      db.Number("SELECT count(*) FROM microstate"),
      static_cast<int64_t>(all["threads"].size() * all["threads"][0]["microstates_ns"].size()));
  int64_t switches = 0, syscalls = 0, irqs = 0;
  for (const auto& t : all["threads"]) {
    switches +=
        t["switches"]["voluntary"].get<int64_t>() + t["switches"]["involuntary"].get<int64_t>();
    syscalls += static_cast<int64_t>(t["syscalls"].size());
    irqs += static_cast<int64_t>(t["irqs"].size());
  }
  EXPECT_GT(switches, 0);
  EXPECT_EQ(db.Number("SELECT count(*) FROM switch"), switches);
  EXPECT_EQ(db.Number("SELECT count(*) FROM syscall"), syscalls);
  EXPECT_EQ(db.Number("SELECT count(*) FROM irq"), irqs);

  // The trace and its losses.
  const auto& trace = all["trace"];
  EXPECT_EQ(db.Rows("SELECT host, events, cpus, start_ts, dur, lost_events FROM trace"),
            (std::vector<std::vector<std::string>>{
                {"h1", std::to_string(trace["events"].get<int64_t>()),
                 std::to_string(trace["cpus"].get<int64_t>()),
                 std::to_string(trace["first_ts"].get<int64_t>()),
                 std::to_string(trace["duration_ns"].get<int64_t>()),
                 std::to_string(trace["lost_events_total"].get<int64_t>())}}));
  std::vector<std::vector<std::string>> lost;
  for (auto& [cpu, n] : trace["lost_events"].items())
    lost.push_back({cpu, std::to_string(n.get<int64_t>())});
  EXPECT_EQ(db.Rows("SELECT cpu, count FROM lost_events ORDER BY cpu"), lost);

  // Every row carries the trace's keys.
  const std::string id = db.Rows("SELECT trace_id FROM trace")[0][0];
  EXPECT_EQ(id.size(), 16u);
  for (const TableSchema& t : AllTables())
    EXPECT_EQ(db.Number(fmt::format("SELECT count(*) FROM \"{}\" WHERE trace_id != '{}' OR "
                                    "host != 'h1'",
                                    t.name, id)),
              0)
        << t.name;

  // Thread states tile each thread's lifetime; on-CPU ones say where.
  EXPECT_EQ(db.Number("SELECT count(*) FROM thread th WHERE th.dur != (SELECT "
                      "coalesce(sum(dur), 0) FROM thread_state s WHERE s.utid = th.utid)"),
            0);
  EXPECT_EQ(db.Number("SELECT count(*) FROM thread_state WHERE dur <= 0"), 0);
  EXPECT_GT(db.Number("SELECT count(*) FROM thread_state WHERE state = 'user' AND cpu IS NOT "
                      "NULL"),
            0);
  EXPECT_EQ(db.Number("SELECT count(*) FROM thread_state WHERE state IN ('sleep', "
                      "'sleep_futex', 'wait_cpu_preempted') AND cpu IS NOT NULL"),
            0);
  EXPECT_EQ(db.Number("SELECT count(*) FROM thread_state s JOIN thread t USING (trace_id, utid) "
                      "WHERE t.in_report AND s.state IN ('user', 'sys', 'irq', 'softirq') AND "
                      "s.cpu IS NULL"),
            0);
  // Wakers are threads of the trace, and only waits after a wakeup have them.
  EXPECT_GT(db.Number("SELECT count(*) FROM thread_state WHERE waker_utid IS NOT NULL"), 0);
  EXPECT_EQ(db.Number("SELECT count(*) FROM thread_state s WHERE waker_utid IS NOT NULL AND "
                      "(state != 'wait_cpu_wakeup' OR irq_context IS NULL OR NOT EXISTS (SELECT "
                      "1 FROM thread t WHERE t.utid = s.waker_utid))"),
            0);
  EXPECT_GT(db.Number("SELECT count(*) FROM sched_slice"), 0);
}

TEST_P(FixtureExport, JsonlHasTheSqliteRows) {
  const std::string file = Fixture(GetParam());
  ScratchDir dir("jsonl");
  ASSERT_EQ(ExportTables(file, "sqlite", dir / "runs.db", {"--host", "h1"}).status, 0);
  CommandResult r = ExportTables(file, "jsonl", dir / "tables", {"--host", "h1"});
  ASSERT_EQ(r.status, 0) << r.err;
  Database db(dir / "runs.db");
  for (const TableSchema& t : AllTables()) {
    std::ifstream in(dir / ("tables/" + std::string(t.name) + ".jsonl"));
    ASSERT_TRUE(in) << t.name;
    int64_t lines = 0;
    for (std::string line; std::getline(in, line); ++lines) {
      nlohmann::json row = nlohmann::json::parse(line, nullptr, false);
      ASSERT_TRUE(row.is_object()) << t.name << ": " << line;
      ASSERT_EQ(row.size(), t.columns.size() + 2) << line;
      EXPECT_EQ(row["host"], "h1");
      for (const Column& c : t.columns) ASSERT_TRUE(row.contains(c.name)) << c.name;
    }
    EXPECT_EQ(lines, db.Number(fmt::format("SELECT count(*) FROM \"{}\"", t.name))) << t.name;
  }
  EXPECT_EQ(nlohmann::json::parse(std::ifstream(dir / "tables/meta.json"))["schema_version"],
            kExportSchemaVersion);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FixtureExport,
                         ::testing::Values("golden_mutex.dat", "small_v6.dat", "small_v7_none.dat",
                                           "small_v7_zstd.dat"),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '.', '_');
                           return n;
                         });

}  // namespace
}  // namespace cstool::testing
