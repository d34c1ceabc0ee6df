// The command tree: each process's parent (from the traced fork, else from /proc), the
// inclusive totals of every subtree, the folded rows the table prints, --tree ordering,
// and the ppid/tree keys of JSON and CSV.
#include "analysis/process_tree.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/report_view.h"
#include "output/output.h"
#include "tests/support/render.h"
#include "tests/support/sim.h"

namespace cstool::testing {
namespace {

ProcessTotals Process(int32_t pid, int32_t ppid, std::string comm, int64_t first, int64_t end,
                      int64_t user_ns, uint64_t voluntary) {
  ProcessTotals p;
  p.pid = pid;
  p.ppid = ppid;
  p.comm = std::move(comm);
  p.threads = 1;
  p.first_ts = first;
  p.end_ts = end;
  p.sum.microstates[static_cast<size_t>(Microstate::kUser)] = user_ns;
  p.sum.voluntary = voluntary;
  return p;
}

int64_t User(const SubtreeTotals& t) {
  return t.microstates[static_cast<size_t>(Microstate::kUser)];
}

// make (10) runs three workers and two shells, each shell one compiler.
std::vector<ProcessTotals> MakeLike() {
  return {Process(10, 1, "make", 0, 1000, 5, 1),    Process(11, 10, "worker", 100, 200, 10, 2),
          Process(14, 10, "sh", 150, 600, 20, 3),   Process(12, 10, "worker", 110, 300, 11, 4),
          Process(15, 14, "gcc", 160, 590, 100, 5), Process(13, 10, "worker", 120, 400, 12, 6),
          Process(16, 10, "sh", 700, 900, 30, 7),   Process(17, 16, "gcc", 710, 890, 200, 8)};
}

TEST(ProcessTreeBuild, SubtreeTotalsAreInclusive) {
  const std::vector<ProcessTotals> procs = MakeLike();
  const ProcessTree tree = BuildProcessTree(procs);
  ASSERT_EQ(tree.roots, std::vector<size_t>{0});
  const SubtreeTotals& root = tree.subtree[0];
  EXPECT_EQ(root.processes, 8u);
  EXPECT_EQ(root.threads, 8u);
  EXPECT_EQ(User(root), 5 + 10 + 20 + 11 + 100 + 12 + 30 + 200);
  EXPECT_EQ(root.voluntary, 36u);
  EXPECT_EQ(root.Wall(), 1000);
  // The first shell with its compiler: 150 .. 600.
  EXPECT_EQ(User(tree.subtree[2]), 120);
  EXPECT_EQ(tree.subtree[2].processes, 2u);
  EXPECT_EQ(tree.subtree[2].Wall(), 450);
  // Preorder: parents first, siblings by creation (first_ts).
  std::vector<int32_t> pids;
  for (size_t i : tree.preorder) pids.push_back(procs[i].pid);
  EXPECT_EQ(pids, (std::vector<int32_t>{10, 11, 12, 13, 14, 15, 16, 17}));
  EXPECT_EQ(tree.depth[4], 2u);  // gcc 15
}

TEST(ProcessTreeBuild, SameNamedSiblingsFoldIntoOneRowWithTheirChildren) {
  const std::vector<ProcessTotals> procs = MakeLike();
  const std::vector<ProcessTreeRow> rows = FoldedTreeRows(BuildProcessTree(procs), procs);
  ASSERT_EQ(rows.size(), 4u);
  auto pids = [&](const ProcessTreeRow& r) {
    std::vector<int32_t> out;
    for (size_t m : r.members) out.push_back(procs[m].pid);
    return out;
  };
  EXPECT_EQ(pids(rows[0]), std::vector<int32_t>{10});
  EXPECT_EQ(pids(rows[1]), (std::vector<int32_t>{11, 12, 13}));
  EXPECT_EQ(rows[1].depth, 1u);
  EXPECT_EQ(User(rows[1].totals), 33);
  EXPECT_EQ(rows[1].totals.Wall(), 300);  // 100 .. 400
  EXPECT_EQ(pids(rows[2]), (std::vector<int32_t>{14, 16}));
  EXPECT_EQ(User(rows[2].totals), 20 + 100 + 30 + 200);
  EXPECT_EQ(rows[2].totals.processes, 4u);
  // The two shells' compilers, folded under the shells' row.
  EXPECT_EQ(pids(rows[3]), (std::vector<int32_t>{15, 17}));
  EXPECT_EQ(rows[3].depth, 2u);
  EXPECT_EQ(User(rows[3].totals), 300);
}

TEST(ProcessTreeBuild, AParentLoopIsCutNotFollowedForever) {
  // pid reuse can make two processes name each other as parent.
  const std::vector<ProcessTotals> procs = {Process(5, 6, "a", 0, 10, 1, 0),
                                            Process(6, 5, "b", 5, 10, 2, 0)};
  const ProcessTree tree = BuildProcessTree(procs);
  ASSERT_EQ(tree.roots.size(), 1u);
  EXPECT_EQ(tree.subtree[tree.roots[0]].processes, 2u);
  EXPECT_EQ(tree.preorder.size(), 2u);
}

// Process 100 (known from the recorder, its parent 50 from /proc) forks process 200,
// whose thread 201 forks process 300; 100's thread 101 is a thread, not a process.
class ForkedTree : public ::testing::Test {
 protected:
  ForkedTree() : sim_({}, Policy()) {
    sim_.Switch(0, 0, 0, kR, 100);
    sim_.Fork(10, 0, 100, 101, /*thread=*/true);
    sim_.Fork(20, 0, 100, 200, /*thread=*/false);
    sim_.Switch(30, 0, 100, kS, 200);
    sim_.Rename(35, 0, 200, "child");
    sim_.Fork(40, 0, 200, 201, /*thread=*/true);
    sim_.Switch(50, 0, 200, kS, 201);
    sim_.Fork(60, 0, 201, 300, /*thread=*/false);
    sim_.Switch(70, 0, 201, kS, 300);
    sim_.Rename(75, 0, 300, "grandchild");
    sim_.Switch(80, 0, 300, kS, 101);
    sim_.Switch(90, 0, 101, kS, 0);
    sim_.Finish(100);
  }
  static TrackingPolicy Policy() {
    TrackingPolicy p;
    p.known_tgids = {{100, 100}};
    return p;
  }
  ReportModel WithProcParents() const {
    ReportModel m = sim_.model();
    m.trace.has_recording_info = true;
    m.trace.recording.threads = {{100, 100, "task", 50}, {200, 200, "child", 999}};
    return m;
  }
  static const ProcessTotals& Proc(const ReportView& v, int32_t pid) {
    for (const ProcessTotals& p : v.processes)
      if (p.pid == pid) return p;
    throw std::runtime_error("no process " + std::to_string(pid));
  }

  Sim sim_;
};

TEST_F(ForkedTree, ParentsComeFromTheTracedForkThenFromProc) {
  const ReportModel model = WithProcParents();
  const ReportView view = BuildView(model, sim_.syscalls(), {});
  ASSERT_EQ(view.processes.size(), 3u);
  EXPECT_EQ(Proc(view, 100).ppid, 50);   // alive before the trace: /proc
  EXPECT_EQ(Proc(view, 200).ppid, 100);  // the traced fork wins over /proc's 999
  EXPECT_EQ(Proc(view, 300).ppid, 200);  // forked by thread 201 of process 200
  EXPECT_EQ(Proc(view, 100).threads, 2u);
  ASSERT_EQ(view.tree.roots.size(), 1u);
  EXPECT_EQ(view.processes[view.tree.roots[0]].pid, 100);
  EXPECT_EQ(view.tree.subtree[view.tree.roots[0]].processes, 3u);
  EXPECT_EQ(view.tree.subtree[view.tree.roots[0]].threads, 5u);
}

TEST_F(ForkedTree, WithoutProcTheRootsParentIsUnknown) {
  const ReportView view = BuildView(sim_.model(), sim_.syscalls(), {});
  EXPECT_EQ(Proc(view, 100).ppid, 0);
  EXPECT_EQ(Proc(view, 200).ppid, 100);
  const nlohmann::json j = nlohmann::json::parse(RenderReport(view, "json"));
  for (const auto& p : j["processes"]) {
    if (p["pid"] == 100) {
      EXPECT_TRUE(p["ppid"].is_null());
    }
  }
  EXPECT_EQ(j["tree_roots"], nlohmann::json::array({100}));
}

TEST_F(ForkedTree, TreeOrderPutsParentsFirstAndThreadsByProcess) {
  ViewOptions options;
  options.tree = true;
  const ReportView view = BuildView(sim_.model(), sim_.syscalls(), options);
  std::vector<int32_t> pids, tids;
  for (const ProcessTotals& p : view.processes) pids.push_back(p.pid);
  for (const ThreadReport* r : view.threads) tids.push_back(r->thread->tid);
  EXPECT_EQ(pids, (std::vector<int32_t>{100, 200, 300}));
  EXPECT_EQ(tids, (std::vector<int32_t>{100, 101, 200, 201, 300}));
  // The tree was rebuilt over the reordered processes.
  EXPECT_EQ(view.tree.preorder, (std::vector<size_t>{0, 1, 2}));
}

TEST_F(ForkedTree, JsonCsvAndTableCarryTheTree) {
  const ReportModel model = WithProcParents();
  const ReportView view = BuildView(model, sim_.syscalls(), {});

  const nlohmann::json j = nlohmann::json::parse(RenderReport(view, "json"));
  ASSERT_EQ(j["processes"].size(), 3u);
  for (const auto& p : j["processes"]) {
    if (p["pid"] == 100) {
      EXPECT_EQ(p["ppid"], 50);
      EXPECT_EQ(p["tree"]["processes"], 3);
      EXPECT_EQ(p["tree"]["threads"], 5);
      EXPECT_EQ(p["tree"]["wall_ns"], 100);
      int64_t sum = 0;
      for (auto& [k, v] : p["tree"]["microstates_ns"].items()) sum += v.get<int64_t>();
      int64_t lifetimes = 0;
      for (const auto& t : j["threads"]) lifetimes += t["lifetime_ns"].get<int64_t>();
      EXPECT_EQ(sum, lifetimes);  // the root's tree is every thread
    }
    if (p["pid"] == 300) {
      EXPECT_EQ(p["ppid"], 200);
      EXPECT_EQ(p["tree"]["processes"], 1);
    }
  }

  const std::string csv = RenderReport(view, "csv");
  EXPECT_TRUE(csv.starts_with("tid,pid,ppid,comm,lifetime_ns,")) << csv;
  EXPECT_NE(csv.find("\n201,200,100,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n100,100,50,"), std::string::npos) << csv;

  const std::string table = RenderReport(view, "table");
  const size_t at = table.find("COMMAND TREE");
  ASSERT_NE(at, std::string::npos) << table;
  std::istringstream rows(table.substr(at));
  std::string line;
  std::vector<std::vector<std::string>> fields;
  std::getline(rows, line);  // title
  std::getline(rows, line);  // header
  while (std::getline(rows, line) && !line.empty()) {
    std::istringstream in(line);
    std::vector<std::string> f;
    for (std::string w; in >> w;) f.push_back(w);
    fields.push_back(f);
  }
  ASSERT_EQ(fields.size(), 3u) << table;
  EXPECT_EQ(fields[0][0], "100");
  EXPECT_EQ(fields[0][1], "50");
  EXPECT_EQ(fields[0][2], "3");  // processes
  EXPECT_EQ(fields[0][3], "5");  // threads
  EXPECT_EQ(fields[0].back(), "task");
  EXPECT_EQ(fields[1][0], "200");
  EXPECT_EQ(fields[1].back(), "child");
  EXPECT_EQ(fields[2][0], "300");
  EXPECT_EQ(fields[2].back(), "grandchild");
  // Indented by depth.
  EXPECT_NE(table.find("    grandchild\n"), std::string::npos) << table;
}

TEST_F(ForkedTree, OneProcessHasNoTreeSection) {
  ViewOptions options;
  options.pids = {300};
  const ReportView view = BuildView(sim_.model(), sim_.syscalls(), options);
  EXPECT_EQ(RenderReport(view, "table").find("COMMAND TREE"), std::string::npos);
}

}  // namespace
}  // namespace cstool::testing
