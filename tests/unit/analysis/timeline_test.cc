// The timeline export and the barscopes on a scripted trace: the JSON parses as
// trace-event format, has thread and CPU tracks, slices tile each thread's lifetime,
// flows pair up, switch-out slices carry their causes, records are compact.
#include "analysis/timeline.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "analysis/barscope.h"
#include "analysis/report_view.h"
#include "format/trace_event_writer.h"
#include "output/html_output.h"
#include "output/timeline_output.h"
#include "tests/support/pingpong_script.h"
#include "tests/support/sim.h"

namespace cstool::testing {
namespace {

using nlohmann::json;

int64_t Ns(const json& micros) { return std::llround(micros.get<double>() * 1000.0); }

// Two threads of one process on two CPUs: a sleep in read, a wakeup from the other
// thread, an interrupt, a tick preemption and a lost-events gap.
void Script(Sim& s) {
  s.SysEnter(1000, 0, 100, kRead);
  s.SysExit(1100, 0, 100, kRead);
  s.Fork(1500, 0, 100, 101, /*thread=*/true);
  s.Wake(1600, 0, 100, 101, 1, 0, WakeupKind::kWakeupNew);
  s.Switch(1700, 1, 0, kR, 101);
  s.SysExit(1800, 1, 101, 56);
  s.SysEnter(1900, 0, 100, kRead);
  s.Switch(2000, 0, 100, kS, 0);
  s.IrqEntry(2100, 1, 101);
  s.IrqExit(2200, 1, 101);
  s.WakeBoth(2500, 1, 101, 100, 0);
  s.Switch(2600, 0, 0, kR, 100);
  s.SysExit(2700, 0, 100, kRead);
  s.Vector(3000, 1, 101, true);
  s.Tick(3005, 1, 101, kFlagHardirq | kFlagNeedResched);
  s.Vector(3010, 1, 101, false);
  s.Switch(3100, 1, 101, kR, 0);
  s.Lost(3500, 1, 5);
  s.Finish(4000);
}

class TimelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto writer = MakeJsonTimelineWriter(out_);
    TimelineObserver timeline(*writer, sim_.syscalls(), [](const Thread&) { return true; });
    sim_.AddObserver(&timeline);
    Script(sim_);
    doc_ = json::parse(out_.str());
  }
  std::vector<json> Events(const std::string& ph) const {
    std::vector<json> v;
    for (const json& e : doc_.at("traceEvents"))
      if (e.at("ph") == ph) v.push_back(e);
    return v;
  }
  std::vector<json> ThreadSlices(int tid) const {
    std::vector<json> v;
    for (const json& e : Events("X"))
      if (e.at("tid") == tid && e.at("pid") != TimelineObserver::kCpuPid) v.push_back(e);
    std::sort(v.begin(), v.end(),
              [](const json& a, const json& b) { return Ns(a.at("ts")) < Ns(b.at("ts")); });
    return v;
  }
  std::vector<json> CpuSlices(int cpu) const {
    std::vector<json> v;
    for (const json& e : Events("X"))
      if (e.at("pid") == TimelineObserver::kCpuPid &&
          e.at("tid") == TimelineObserver::kCpuPid + 1 + cpu)
        v.push_back(e);
    return v;
  }

  Sim sim_;
  std::ostringstream out_;
  json doc_;
};

TEST_F(TimelineTest, IsTraceEventJsonWithThreadAndCpuTracks) {
  ASSERT_TRUE(doc_.at("traceEvents").is_array());
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names;
  std::map<int64_t, std::string> process_names;
  for (const json& m : Events("M")) {
    if (m.at("name") == "thread_name")
      thread_names[{m.at("pid"), m.at("tid")}] = m.at("args").at("name");
    if (m.at("name") == "process_name") process_names[m.at("pid")] = m.at("args").at("name");
  }
  const int64_t cpus = TimelineObserver::kCpuPid;
  EXPECT_EQ(process_names[cpus], "CPUs");
  EXPECT_EQ((thread_names[{cpus, cpus + 1}]), "CPU 0");
  EXPECT_EQ((thread_names[{cpus, cpus + 2}]), "CPU 1");
  EXPECT_EQ((thread_names[{100, 100}]), "task 100");
  EXPECT_FALSE(ThreadSlices(100).empty());
  EXPECT_FALSE(ThreadSlices(101).empty());
  EXPECT_FALSE(CpuSlices(0).empty());
  EXPECT_FALSE(CpuSlices(1).empty());
  for (const json& e : Events("X")) {
    EXPECT_TRUE(e.at("ts").is_number());
    EXPECT_GE(e.at("dur").get<double>(), 0.0);
    EXPECT_TRUE(e.contains("name"));
    // Compact: no category, no empty args.
    EXPECT_FALSE(e.contains("cat")) << e.dump();
    if (e.contains("args")) {
      EXPECT_FALSE(e.at("args").empty()) << e.dump();
    }
  }
}

// Exact records: short names, times in microseconds without trailing zeros, the
// switch-out's cause only on the slice it ends, flows without name or category.
TEST_F(TimelineTest, CompactRecords) {
  const std::string text = out_.str();
  for (const char* record : {
           R"({"ph":"X","pid":100,"tid":100,"name":"sys","ts":1.9,"dur":0.1,)"
           R"("args":{"cause":"sleep:read"}})",
           R"({"ph":"X","pid":100,"tid":100,"name":"sleep:read","ts":2,"dur":0.5})",
           R"({"ph":"X","pid":101,"tid":101,"name":"runnable","ts":1.6,"dur":0.1})",
           R"({"ph":"X","pid":101,"tid":101,"name":"user","ts":3.01,"dur":0.09,)"
           R"("args":{"cause":"preempt:tick","preempted_at":"irq_return"}})",
           R"({"ph":"X","pid":1000000000,"tid":1000000002,"name":"irq:24 virtio0","ts":2.1,)"
           R"("dur":0.1})",
           R"({"ph":"X","pid":1000000000,"tid":1000000002,"name":"task 101","ts":1.7,"dur":1.4,)"
           R"("args":{"cause":"preempt:tick","preempted_at":"irq_return"}})",
           R"({"ph":"s","pid":101,"tid":101,"id":2,"ts":2.5})",
           R"({"ph":"f","pid":100,"tid":100,"bp":"e","id":2,"ts":2.501})",
           R"({"ph":"i","pid":1000000000,"tid":1000000002,"name":"lost events","s":"t","ts":3.5,)"
           R"("args":{"count":5}})",
       })
    EXPECT_NE(text.find(record), std::string::npos) << record << "\n" << text;
}

TEST_F(TimelineTest, ThreadSlicesTileLifetime) {
  for (const Thread& t : sim_.sm().threads()) {
    auto slices = ThreadSlices(t.tid);
    ASSERT_FALSE(slices.empty()) << t.tid;
    EXPECT_EQ(Ns(slices.front().at("ts")), t.first_ts) << t.tid;
    int64_t at = t.first_ts;
    for (const json& s : slices) {
      EXPECT_EQ(Ns(s.at("ts")), at) << "gap or overlap on tid " << t.tid;
      at = Ns(s.at("ts")) + Ns(s.at("dur"));
    }
    EXPECT_EQ(at, t.end_ts) << t.tid;
  }
}

TEST_F(TimelineTest, SwitchOutSlicesCarryCauses) {
  bool saw_read = false, saw_preempt = false;
  auto slices = ThreadSlices(100);
  for (size_t i = 0; i < slices.size(); ++i) {
    const json& s = slices[i];
    if (Ns(s.at("ts")) + Ns(s.at("dur")) == 2000) {
      EXPECT_EQ(s.at("args").at("cause"), "sleep:read");
      EXPECT_FALSE(s.at("args").contains("preempted_at")) << "voluntary";
      ASSERT_LT(i + 1, slices.size());
      EXPECT_EQ(slices[i + 1].at("name"), "sleep:read");
      EXPECT_FALSE(slices[i + 1].contains("args"));
      saw_read = true;
    } else {
      EXPECT_FALSE(s.contains("args")) << s.dump();
    }
  }
  auto slices101 = ThreadSlices(101);
  for (size_t i = 0; i < slices101.size(); ++i) {
    const json& s = slices101[i];
    if (Ns(s.at("ts")) + Ns(s.at("dur")) == 3100) {
      EXPECT_EQ(s.at("args").at("cause"), "preempt:tick");
      EXPECT_TRUE(s.at("args").contains("preempted_at"));
      // It waits until CPU 1 loses events at 3500; from there it is unknown (nothing
      // after shows it), and neither slice ends with a switch.
      ASSERT_EQ(i + 3, slices101.size());
      EXPECT_EQ(slices101[i + 1].at("name"), "preempted");
      EXPECT_EQ(Ns(slices101[i + 1].at("dur")), 400);
      EXPECT_FALSE(slices101[i + 1].contains("args"));
      EXPECT_EQ(slices101[i + 2].at("name"), "unknown");
      EXPECT_EQ(Ns(slices101[i + 2].at("ts")), 3500);
      EXPECT_FALSE(slices101[i + 2].contains("args"));
      saw_preempt = true;
    }
  }
  EXPECT_TRUE(saw_read);
  EXPECT_TRUE(saw_preempt);
  // The CPU track's slice of 101 ends with the same switch and says so.
  bool cpu_slice = false;
  for (const json& s : CpuSlices(1))
    if (s.at("name") == "task 101" && Ns(s.at("ts")) == 1700 && Ns(s.at("dur")) == 1400) {
      EXPECT_EQ(s.at("args").at("cause"), "preempt:tick");
      EXPECT_TRUE(s.at("args").contains("preempted_at"));
      cpu_slice = true;
    }
  EXPECT_TRUE(cpu_slice);
}

TEST_F(TimelineTest, FlowsPairUpFromWakerToWakee) {
  std::map<uint64_t, json> starts, ends;
  for (const json& e : Events("s")) starts[e.at("id")] = e;
  for (const json& e : Events("f")) ends[e.at("id")] = e;
  ASSERT_EQ(starts.size(), 2u);  // wakeup_new of 101 by 100, wakeup of 100 by 101
  ASSERT_EQ(ends.size(), starts.size());
  for (auto& [id, s] : starts) ASSERT_TRUE(ends.count(id)) << id;
  bool saw = false;
  for (auto& [id, s] : starts)
    if (s.at("tid") == 101 && ends[id].at("tid") == 100) {
      EXPECT_EQ(Ns(s.at("ts")), 2500);
      saw = true;
    }
  EXPECT_TRUE(saw);
}

TEST_F(TimelineTest, IrqsAndLostEventsOnCpuTracks) {
  bool irq = false;
  for (const json& s : CpuSlices(1))
    if (s.at("name") == "irq:24 virtio0" && Ns(s.at("ts")) == 2100 && Ns(s.at("dur")) == 100)
      irq = true;
  EXPECT_TRUE(irq);
  bool lost = false;
  for (const json& i : Events("i"))
    if (i.at("tid") == TimelineObserver::kCpuPid + 2 && i.at("args").at("count") == 5) lost = true;
  EXPECT_TRUE(lost);
}

TEST(TimelineFilter, OnlySelectedThreadsGetTracks) {
  Sim sim;
  std::ostringstream out;
  auto writer = MakeJsonTimelineWriter(out);
  TimelineObserver timeline(*writer, sim.syscalls(), [](const Thread& t) { return t.tid == 101; });
  sim.AddObserver(&timeline);
  Script(sim);
  json doc = json::parse(out.str());
  std::set<int64_t> tids;
  for (const json& e : doc.at("traceEvents"))
    if (e.at("ph") == "X" && e.at("pid") != TimelineObserver::kCpuPid)
      tids.insert(e.at("tid").get<int64_t>());
  EXPECT_EQ(tids, std::set<int64_t>{101});
}

TEST(TraceEventWriter, EscapesAnyComm) {
  std::string s;
  TraceEventWriter::AppendJsonString(s, std::string("a\"b\\c\n\xff", 7));
  EXPECT_EQ(s, "\"a\\\"b\\\\c\\u000a\\u00ff\"");
  auto micros = [](int64_t ns) {
    std::string t;
    TraceEventWriter::AppendMicros(t, ns);
    return t;
  };
  EXPECT_EQ(micros(1234567), "1234.567");
  EXPECT_EQ(micros(1234560), "1234.56");
  EXPECT_EQ(micros(1234500), "1234.5");
  EXPECT_EQ(micros(1234000), "1234");
  EXPECT_EQ(micros(1205), "1.205");
  EXPECT_EQ(micros(5), "0.005");
  EXPECT_EQ(micros(0), "0");
  EXPECT_EQ(micros(-1500), "-1.5");
}

// The size of a timeline is deterministic, so it can be held to a figure. A synthetic
// ping-pong like `cstool_workload pingpong` records it (two threads of one process on
// two CPUs passing a byte through pipes: write, wakeup, read, sleep), at a realistic
// uptime (2239 s: 14-character timestamps) with 5-digit tids. Per round trip: 16 events
// in; out, per thread, its slices (user, sys, irq... each a record of about 75 bytes;
// sys ending in the switch-out +29 for its cause, sleep:read, runnable, sys), the CPU
// track's run (+ cause) and the wakeup's two flow records: 99.7 B/event (the records
// before they were made compact gave about 200 B/event on real ping-pong recordings).
TEST(TimelineSize, PingPongBytesPerEvent) {
  Sim sim;
  std::ostringstream out;
  uint64_t events = 0;
  {
    auto writer = MakeJsonTimelineWriter(out);
    TimelineObserver timeline(*writer, sim.syscalls(), [](const Thread&) { return true; });
    sim.AddObserver(&timeline);
    events = ScriptPingPong(sim);
  }
  json doc = json::parse(out.str());
  // Everything is there: per round trip and thread 6 slices (sys of the write, user,
  // sys of the read ending in the switch-out, sleep:read, runnable (one slice although
  // sched_waking and sched_wakeup split it), sys), one CPU run (with the cause) and
  // one wakeup arrow.
  std::map<std::string, int> kinds;
  for (const json& e : doc.at("traceEvents")) {
    std::string kind = e.at("ph");
    if (kind == "X") kind += e.at("pid") == TimelineObserver::kCpuPid ? " cpu" : " thread";
    if (e.contains("args") && e.at("args").contains("cause")) kind += " cause";
    ++kinds[kind];
  }
  EXPECT_EQ(kinds["X thread"] + kinds["X thread cause"], 12005);
  EXPECT_EQ(kinds["X thread cause"], 2001);
  EXPECT_EQ(kinds["X cpu"] + kinds["X cpu cause"], 2002);
  EXPECT_EQ(kinds["X cpu cause"], 2001);
  EXPECT_EQ(kinds["s"], 2000);
  EXPECT_EQ(kinds["f"], 2000);
  size_t sleeps = 0;
  for (const json& e : doc.at("traceEvents"))
    if (e.at("ph") == "X" && e.at("name") == "sleep:read") ++sleeps;
  EXPECT_EQ(sleeps, 2001u);
  const double per_event = static_cast<double>(out.str().size()) / static_cast<double>(events);
  std::printf("%zu bytes, %llu events, %.1f B/event\n", out.str().size(),
              static_cast<unsigned long long>(events), per_event);
  EXPECT_LE(per_event, 100.0);
}

TEST(Barscope, RowsPerThreadAndCpuAndHtml) {
  Sim sim;
  BarscopeObserver scope(sim.syscalls(), [](const Thread&) { return true; });
  sim.AddObserver(&scope);
  Script(sim);
  const BarscopeModel& m = scope.model();
  ASSERT_EQ(m.threads.rows.size(), 2u);
  EXPECT_EQ(m.threads.rows[0].id, 100);
  EXPECT_EQ(m.cpus.rows.size(), 2u);
  EXPECT_LE(m.threads.columns, TimeGrid::kMaxColumns);
  EXPECT_GT(m.threads.columns, 0u);
  for (const BarscopeRow& r : m.threads.rows) {
    ASSERT_FALSE(r.spans.empty()) << r.label;
    for (const BarscopeSpan& s : r.spans) {
      EXPECT_LT(s.col0, s.col1);
      EXPECT_LE(s.col1, m.threads.columns);
      EXPECT_LT(s.key, m.threads.legend.size());
      EXPECT_FALSE(s.title.empty());
    }
  }
  EXPECT_FALSE(m.cpus.rows[1].spans.empty());

  ReportView view = BuildView(sim.model(), sim.syscalls(), {});
  std::ostringstream html;
  RenderHtml(view, m, html);
  const std::string page = html.str();
  EXPECT_NE(page.find("id=\"thread-barscope\""), std::string::npos);
  EXPECT_NE(page.find("id=\"cpu-barscope\""), std::string::npos);
  // Self-contained: the only URL is the SVG namespace.
  std::string stripped = page;
  for (size_t at; (at = stripped.find("http://www.w3.org/2000/svg")) != std::string::npos;)
    stripped.erase(at, 26);
  EXPECT_EQ(stripped.find("http"), std::string::npos);
  EXPECT_EQ(page.find("src="), std::string::npos);
}

TEST(TimeBins, LongTracesStayBounded) {
  TimeGrid grid;
  grid.SetOrigin(0);
  struct Bin {
    int64_t ns = 0;
    void Merge(const Bin& o) { ns += o.ns; }
  };
  BinnedRow<Bin> row;
  int64_t total = 0;
  for (int64_t ts = 0; ts < 10'000'000'000; ts += 7'000'001) {
    row.Add(grid, ts, ts + 3'000'000, [](Bin& b, int64_t d) { b.ns += d; });
    total += 3'000'000;
  }
  row.Sync(grid);
  EXPECT_LE(row.bins().size(), TimeGrid::kMaxColumns);
  int64_t sum = 0;
  for (const Bin& b : row.bins()) sum += b.ns;
  EXPECT_EQ(sum, total);
}

}  // namespace
}  // namespace cstool::testing
