// The streamed tables on a scripted trace: thread_state rows tile each thread's life and
// sum to its microstates, on-CPU rows name the CPU, waits after a wakeup name the waker
// (or interrupt context), switch and sched_slice rows carry the causes.
#include "export/streamed_rows.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/support/sim.h"

namespace cstool::testing {
namespace {

// Keeps every row, values as text ("NULL" for null).
class RowCollector final : public RowSink {
 public:
  void Add(Table table, std::span<const Value> values) override {
    std::map<std::string, std::string> row;
    const TableSchema& schema = SchemaOf(table);
    for (size_t i = 0; i < values.size(); ++i) {
      const Value& v = values[i];
      std::string text = "NULL";
      if (const int64_t* n = std::get_if<int64_t>(&v)) text = std::to_string(*n);
      if (const std::string_view* s = std::get_if<std::string_view>(&v)) text = std::string(*s);
      row[std::string(schema.columns[i].name)] = text;
    }
    rows[table].push_back(row);
    Count(table);
  }
  void Commit() override {}
  std::map<Table, std::vector<std::map<std::string, std::string>>> rows;
};

TEST(StreamedRows, StatesCpusWakersAndCauses) {
  Sim s;
  RowCollector sink;
  StreamedRowObserver streamed(sink, s.syscalls());
  s.AddObserver(&streamed);
  s.SysEnter(900, 0, 100, kWrite);  // 100 runs on CPU 0
  s.SysEnter(950, 1, 101, kRead);   // 101 runs on CPU 1 ...
  s.Switch(1000, 1, 101, kS, 0);    // ... and sleeps in read
  s.Wake(1200, 0, 100, 101, 1);     // 100 wakes it (task context)
  s.Switch(1300, 1, 0, kR, 101);    // it runs on CPU 1
  s.SysExit(1400, 1, 101, kRead);
  s.SysEnter(1450, 1, 101, kRead);
  s.Switch(1500, 1, 101, kS, 0);  // sleeps again
  s.IrqEntry(1550, 1, 0);
  s.Wake(1560, 1, 0, 101, 1, kFlagHardirq);  // woken from an interrupt on idle CPU 1
  s.IrqExit(1570, 1, 0);
  s.Switch(1600, 1, 0, kR, 101);
  s.SysExit(1800, 0, 100, kWrite);
  s.Finish(2000);
  streamed.Flush();

  const int64_t utid100 = s.Report(100).thread->id, utid101 = s.Report(101).thread->id;
  std::map<int64_t, std::map<std::string, int64_t>> summed;
  std::vector<std::map<std::string, std::string>> waits;
  for (const auto& r : sink.rows[Table::kThreadState]) {
    summed[std::stoll(r.at("utid"))][r.at("state")] += std::stoll(r.at("dur"));
    const std::string& state = r.at("state");
    const bool on_cpu = state == "user" || state == "sys" || state == "irq" || state == "softirq";
    const int64_t utid = std::stoll(r.at("utid"));
    const std::string expected_cpu = !on_cpu ? "NULL" : utid == utid100 ? "0" : "1";
    EXPECT_EQ(r.at("cpu"), expected_cpu) << state << " at " << r.at("ts");
    if (state == "wait_cpu_wakeup" && utid == utid101) waits.push_back(r);
  }
  for (int tid : {100, 101})
    for (size_t i = 0; i < kMicrostateCount; ++i) {
      const Microstate m = static_cast<Microstate>(i);
      EXPECT_EQ(summed[s.Report(tid).thread->id][std::string(MicrostateKey(m))], s.Micro(tid, m))
          << tid << " " << MicrostateKey(m);
    }
  ASSERT_EQ(waits.size(), 2u);
  EXPECT_EQ(waits[0].at("ts"), "1200");
  EXPECT_EQ(waits[0].at("waker_utid"), std::to_string(utid100));
  EXPECT_EQ(waits[0].at("irq_context"), "0");
  EXPECT_EQ(waits[1].at("ts"), "1560");
  EXPECT_EQ(waits[1].at("waker_utid"), "NULL");
  EXPECT_EQ(waits[1].at("irq_context"), "1");

  // Two switch-outs of 101, both asleep in read.
  std::vector<std::string> causes;
  for (const auto& r : sink.rows[Table::kSwitch]) {
    EXPECT_EQ(r.at("utid"), std::to_string(utid101));
    EXPECT_EQ(r.at("voluntary"), "1");
    EXPECT_EQ(r.at("preempted_at"), "NULL");
    causes.push_back(r.at("ts") + " " + r.at("cause"));
  }
  EXPECT_EQ(causes, (std::vector<std::string>{"1000 sleep:read", "1500 sleep:read"}));
  // 101's run on CPU 1 between its sleeps ends with the second one.
  bool found = false;
  for (const auto& r : sink.rows[Table::kSchedSlice])
    if (r.at("utid") == std::to_string(utid101) && r.at("ts") == "1300") {
      found = true;
      EXPECT_EQ(r.at("dur"), "200");
      EXPECT_EQ(r.at("cpu"), "1");
      EXPECT_EQ(r.at("end_cause"), "sleep:read");
    }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace cstool::testing
