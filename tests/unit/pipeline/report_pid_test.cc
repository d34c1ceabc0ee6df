// The PID a report shows for each thread: its process when the file tells it, unknown
// (table -, JSON null, CSV empty) otherwise, never its tid; such threads stay out of the
// process totals and of -p, and one note says how many there are.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/report_view.h"
#include "format/trace_file_format.h"
#include "output/html_output.h"
#include "output/output.h"
#include "pipeline/analyze_trace.h"
#include "tests/support/render.h"
#include "tests/support/sim.h"
#include "tests/support/synthetic_trace.h"

namespace cstool::testing {
namespace {

constexpr std::string_view kNote = "processes could not be grouped for 1 thread:";

size_t Count(const std::string& text, std::string_view what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

// The whitespace-separated fields of the table rows whose first field is `id`, by section.
std::vector<std::vector<std::string>> Rows(const std::string& table, const std::string& section,
                                           const std::string& id) {
  std::vector<std::vector<std::string>> out;
  std::istringstream in(table);
  std::string line, current;
  while (std::getline(in, line)) {
    // Every section heading (THREADS, PROCESSES, COMMAND TREE, WAKERS, LOST EVENTS, ...)
    // starts at the first column in capitals; rows are indented.
    if (!line.empty() && std::isupper(static_cast<unsigned char>(line[0])))
      current = line.substr(0, line.find(' '));
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    if (current == section && !f.empty() && f[0] == id) out.push_back(f);
  }
  return out;
}

// Process 100 (known from the recorder's list) with its thread 101, and 300, a thread
// from before the trace whose process the file does not tell.
class UnknownPid : public ::testing::Test {
 protected:
  UnknownPid() : sim_({}, Policy()) {
    sim_.Switch(0, 0, 0, kR, 100);
    sim_.Fork(10, 0, 100, 101, /*thread=*/true);
    sim_.Switch(20, 0, 100, kS, 300);
    sim_.Switch(30, 0, 300, kS, 101);
    sim_.Switch(40, 0, 101, kS, 100);
    sim_.Finish(100);
  }
  static TrackingPolicy Policy() {
    TrackingPolicy p;
    p.known_tgids = {{100, 100}};
    return p;
  }
  ReportView View(ViewOptions options = {}) {
    return BuildView(sim_.model(), sim_.syscalls(), options);
  }

  Sim sim_;
};

TEST_F(UnknownPid, TableShowsDashAndLeavesItOutOfProcesses) {
  std::string table = RenderReport(View(), "table");
  auto row = Rows(table, "THREADS", "300");
  ASSERT_EQ(row.size(), 1u) << table;
  EXPECT_EQ(row[0][1], "-");
  ASSERT_EQ(Rows(table, "THREADS", "101").size(), 1u);
  EXPECT_EQ(Rows(table, "THREADS", "101")[0][1], "100");
  ASSERT_EQ(Rows(table, "PROCESSES", "100").size(), 1u);
  EXPECT_EQ(Rows(table, "PROCESSES", "100")[0][1], "2");  // 100 and 101
  EXPECT_TRUE(Rows(table, "PROCESSES", "300").empty());
  EXPECT_TRUE(Rows(table, "PROCESSES", "-").empty());
  // Said once, in the header: before the tables it explains.
  EXPECT_EQ(Count(table, kNote), 1u) << table;
  EXPECT_LT(table.find(std::string("NOTE: ") + std::string(kNote)), table.find("THREADS"));
}

TEST_F(UnknownPid, JsonSaysNullAndNotesItOnce) {
  nlohmann::json j = ReportToJson(View());
  bool saw_unknown = false;
  for (const auto& t : j["threads"]) {
    if (t["tid"] == 300) {
      saw_unknown = true;
      EXPECT_TRUE(t["pid"].is_null()) << t["pid"];
    } else {
      EXPECT_EQ(t["pid"], 100);
    }
  }
  EXPECT_TRUE(saw_unknown);
  ASSERT_EQ(j["processes"].size(), 1u);
  EXPECT_EQ(j["processes"][0]["pid"], 100);
  size_t notes = 0;
  for (const auto& n : j["trace"]["notes"]) notes += n.get<std::string>().starts_with(kNote);
  EXPECT_EQ(notes, 1u) << j["trace"]["notes"];
}

TEST_F(UnknownPid, CsvLeavesThePidEmpty) {
  std::string csv = RenderReport(View(), "csv");
  EXPECT_EQ(Count(csv, "\n300,,,task,"), 1u) << csv;  // no pid, so no ppid either
  EXPECT_EQ(Count(csv, "\n101,100,,task,"), 1u) << csv;
}

TEST_F(UnknownPid, HtmlShowsDashAndNotesItAtTheTop) {
  std::ostringstream out;
  RenderHtml(View(), BarscopeModel{}, out);
  const std::string page = out.str();
  EXPECT_NE(page.find("<tr><td>300</td><td>-</td>"), std::string::npos);
  EXPECT_EQ(page.find("<tr><td>300</td><td>300</td>"), std::string::npos);
  EXPECT_EQ(Count(page, kNote), 1u);
  EXPECT_LT(page.find(kNote), page.find("<h2>Threads</h2>"));
}

TEST_F(UnknownPid, PidSelectionNeverMatchesByTid) {
  EXPECT_TRUE(View({.pids = {300}}).threads.empty());
  ReportView known = View({.pids = {100}});
  EXPECT_EQ(known.threads.size(), 2u);
  EXPECT_EQ(known.ungrouped_threads, 0u);
  EXPECT_EQ(known.UngroupedNote(), "");  // nothing to say
  ReportView by_tid = View({.tids = {300}});
  ASSERT_EQ(by_tid.threads.size(), 1u);
  EXPECT_TRUE(by_tid.processes.empty());
  EXPECT_EQ(by_tid.ungrouped_threads, 1u);
}

TEST_F(UnknownPid, SortByPidPutsUnknownLast) {
  ReportView v = View({.sort = "pid"});
  ASSERT_EQ(v.threads.size(), 3u);
  EXPECT_EQ(v.threads.back()->thread->tid, 300);
}

// A system-wide cstool recording lists every thread with its tgid: the report uses them.
TEST(ReportPid, SystemWideRecordingsThreadListGroupsThreads) {
  SyntheticTrace t(std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/formats/events", 1);
  int sw = t.AddEvent("sched", "sched_switch");
  uint64_t ts = 1000000;
  for (auto [prev, next] : {std::pair{100, 200}, std::pair{200, 100}}) {
    auto s = t.NewRecord(sw, prev);
    s.SetString("prev_comm", "a").Set("prev_pid", prev).Set("prev_prio", 120).Set("prev_state", 1);
    s.SetString("next_comm", "b").Set("next_pid", next).Set("next_prio", 120);
    t.Append(0, ts += 1000, s);
  }
  const std::string path =
      (std::filesystem::temp_directory_path() / ("report_pid_" + std::to_string(::getpid())))
          .string() +
      ".dat";
  t.Write(path);
  SyscallTable syscalls;
  auto tgid_of = [&](int tid) {
    auto analyzed = AnalyzeTrace(path, syscalls);
    for (const Thread& th : analyzed->machine->threads())
      if (th.tid == tid) return th.tgid;
    return -1;
  };
  EXPECT_EQ(tgid_of(200), 0);  // no thread list: unknown
  const std::string sidecar = path + std::string(tracefile::kCstoolInfoSidecarSuffix);
  std::ofstream(sidecar) << nlohmann::json{
      {"system_wide", true},
      {"threads", {{{"tid", 100}, {"tgid", 100}}, {{"tid", 200}, {"tgid", 150}}}}};
  EXPECT_EQ(tgid_of(200), 150);
  EXPECT_EQ(tgid_of(100), 100);
  std::remove(sidecar.c_str());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace cstool::testing
