// The whole report pipeline (file → reader → decoder → state machine → observers →
// renderers) on synthetic v6 files built from this kernel's real formats: files that
// lack event families, losses in the middle, and damaged files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernel/kernel_recording.h"
#include "model/events.h"
#include "pipeline/analyze_trace.h"
#include "tests/support/report_csv.h"
#include "tests/support/run_command.h"
#include "tests/support/synthetic_trace.h"

namespace cstool::testing {
namespace {

const std::string kEvents = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/formats/events";

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (name + "_" + std::to_string(::getpid()) + ".dat"))
      .string();
}

// Two threads take turns on CPU 0: 100 runs, blocks; 200 runs; 100 is woken...
void AddPingPong(SyntheticTrace& t, int sw, int waking, int rounds, uint64_t ts0) {
  uint64_t ts = ts0;
  int a = 100, b = 200;
  for (int i = 0; i < rounds; ++i) {
    auto w = t.NewRecord(waking, a);
    w.SetString("comm", "b").Set("pid", b).Set("prio", 120).Set("target_cpu", 0);
    t.Append(0, ts += 1000, w);
    auto s = t.NewRecord(sw, a);
    s.SetString("prev_comm", "a").Set("prev_pid", a).Set("prev_prio", 120).Set("prev_state", 1);
    s.SetString("next_comm", "b").Set("next_pid", b).Set("next_prio", 120);
    t.Append(0, ts += 1000, s);
    std::swap(a, b);
  }
}

// Writes `t`, analyses it and removes the file.
std::unique_ptr<AnalyzedTrace> AnalyzeSynthetic(const SyntheticTrace& t, const std::string& name) {
  const std::string path = TempPath(name);
  t.Write(path);
  SyscallTable syscalls;
  auto analyzed = AnalyzeTrace(path, syscalls);
  std::remove(path.c_str());
  return analyzed;
}

TEST(ReportPipeline, SchedOnlyFileStillReportsAndSaysWhatIsMissing) {
  SyntheticTrace t(kEvents, 1);
  int sw = t.AddEvent("sched", "sched_switch");
  int waking = t.AddEvent("sched", "sched_waking");
  AddPingPong(t, sw, waking, 10, 1000000);
  std::string path = TempPath("sched_only");
  t.Write(path);

  SyscallTable syscalls;
  auto analyzed = AnalyzeTrace(path, syscalls);
  const TraceSummary& s = analyzed->model.trace;
  EXPECT_EQ(s.events, 20u);
  auto has = [&](const std::string& e) {
    return std::find(s.missing_events.begin(), s.missing_events.end(), e) != s.missing_events.end();
  };
  EXPECT_TRUE(has("raw_syscalls:sys_enter"));
  EXPECT_TRUE(has("irq:irq_handler_entry"));
  ASSERT_FALSE(s.notes.empty());
  EXPECT_NE(s.notes[0].find("no raw_syscalls events"), std::string::npos);
  // Without syscall events on-CPU time is user time, and every sleep is sleep:kernel.
  for (const ThreadReport& r : analyzed->model.threads) {
    if (!r.thread) continue;
    EXPECT_EQ(r.microstates[static_cast<size_t>(Microstate::kSys)], 0);
    int64_t sum = 0;
    for (int64_t v : r.microstates) sum += v;
    EXPECT_EQ(sum, r.Lifetime());
  }
  CommandResult out = RunCommand({CSTOOL_BINARY, "report", path});
  EXPECT_EQ(out.status, 0) << out.err;
  EXPECT_NE(out.out.find("MISSING EVENTS:"), std::string::npos);
  EXPECT_NE(out.out.find("NOTE: no raw_syscalls events"), std::string::npos);
  std::remove(path.c_str());
}

// Without sched_switch no thread is seen leaving a CPU: the report says its microstates
// are not measured (it showed a sleeping thread 99 % in user time, with no word of it).
TEST(ReportPipeline, AFileWithoutSchedSwitchSaysItsMicrostatesAreNotMeasured) {
  SyntheticTrace t(kEvents, 1);
  const int waking = t.AddEvent("sched", "sched_waking");
  for (uint64_t i = 0; i < 10; ++i)
    t.Append(0, 1000 + i * 1000, t.NewRecord(waking, 100).Set("pid", 101).Set("target_cpu", 0));
  const auto analyzed = AnalyzeSynthetic(t, "no_switch");
  const std::vector<std::string>& notes = analyzed->model.trace.notes;
  const std::string expected =
      "no sched:sched_switch in this file: without it no thread is ever seen leaving a CPU, so "
      "the microstates are not measured (a thread shows as running from its first event on) "
      "and there are no switches or waits; record with sched:sched_switch";
  EXPECT_EQ(std::count(notes.begin(), notes.end(), expected), 1);
  // A file with it has no such note.
  SyntheticTrace with(kEvents, 1);
  const int sw = with.AddEvent("sched", "sched_switch");
  const int w = with.AddEvent("sched", "sched_waking");
  AddPingPong(with, sw, w, 10, 1000000);
  const auto ping = AnalyzeSynthetic(with, "with_switch");
  for (const std::string& n : ping->model.trace.notes)
    EXPECT_EQ(n.find("no sched:sched_switch"), std::string::npos) << n;
}

// A file's trace clock is the report's (JSON trace.trace_clock), and one the analysis
// cannot take as synchronised nanoseconds is said: trace-cmd's default `local` is per CPU,
// `counter` counts events.
TEST(ReportPipeline, TheTraceClockIsNamedAndAClockNotInSyncIsSaid) {
  struct Case {
    std::string clock, note;
  };
  for (const Case& c : std::vector<Case>{{"local", "not synchronised"},
                                         {"counter", "not nanoseconds (an event counter)"},
                                         {"x86-tsc", "no TSC-to-ns conversion"},
                                         {"mono", ""},
                                         {"global", ""}}) {
    SCOPED_TRACE(c.clock);
    SyntheticTrace t(kEvents, 1);
    t.SetTraceClock(c.clock);
    AddPingPong(t, t.AddEvent("sched", "sched_switch"), t.AddEvent("sched", "sched_waking"), 4,
                1000000);
    auto analyzed = AnalyzeSynthetic(t, "clock");
    const TraceSummary& s = analyzed->model.trace;
    EXPECT_EQ(s.trace_clock, c.clock);
    const auto said = std::find_if(s.notes.begin(), s.notes.end(), [](const std::string& n) {
      return n.starts_with("the trace clock is");
    });
    if (c.note.empty()) {
      EXPECT_EQ(said, s.notes.end()) << *said;
    } else {
      ASSERT_NE(said, s.notes.end());
      EXPECT_NE(said->find("'" + c.clock + "'"), std::string::npos) << *said;
      EXPECT_NE(said->find(c.note), std::string::npos) << *said;
    }
  }
}

// trace-cmd record -B (tests/fixtures/README.md): the report of the top-level buffer says
// which instances it leaves out, whichever reader reads the file.
TEST(ReportPipeline, AFileOfSeveralBuffersSaysWhichOneIsReported) {
  const std::string file = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/two_buffers_v7.dat";
  auto note_of = [](const TraceSummary& s) {
    std::vector<std::string> said;
    for (const std::string& n : s.notes)
      if (n.starts_with("this report is of")) said.push_back(n);
    return said;
  };
  for (ReaderBackend reader : {ReaderBackend::kFast, ReaderBackend::kLibTracecmd}) {
    SCOPED_TRACE(static_cast<int>(reader));
    SyscallTable syscalls;
    auto top = AnalyzeTrace(file, syscalls, {.reader = reader});
    EXPECT_EQ(top->model.trace.events, 367u);
    EXPECT_EQ(note_of(top->model.trace),
              std::vector<std::string>{
                  "this report is of the file's top-level buffer; its other buffers are not read "
                  "(\"wakeups\": --buffer NAME reads one)"});
    auto wakeups = AnalyzeTrace(file, syscalls, {.reader = reader, .buffer = "wakeups"});
    EXPECT_EQ(wakeups->model.trace.events, 413u);
    // Asked for by name: the top-level buffer is left out knowingly.
    EXPECT_TRUE(note_of(wakeups->model.trace).empty());
  }
}

// A damaged section the report reads only when needed (saved cmdlines here) costs only
// what it holds, and the report says so instead of going on silently.
TEST(ReportPipeline, ADamagedCmdlinesSectionIsANote) {
  const std::string file = TempPath("damaged_cmdlines");
  std::filesystem::copy_file(std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/small_v7_zstd.dat",
                             file, std::filesystem::copy_options::overwrite_existing);
  {
    // The CMDLINES section is at 7589 (trace-cmd dump --options); its zstd frame starts
    // 24 bytes in (section header, then the compressed and the whole size).
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(7633);
    const char c = static_cast<char>(f.get() ^ 0xff);
    f.seekp(7633);
    f.put(c);
  }
  SyscallTable syscalls;
  auto analyzed = AnalyzeTrace(file, syscalls, {.reader = ReaderBackend::kFast});
  const std::vector<std::string>& notes = analyzed->model.trace.notes;
  const std::string expected =
      "the file's saved cmdlines section is damaged (" + file +
      ": corrupt file at offset 7605 (saved cmdlines section): zstd: Data corruption detected): "
      "threads no event named are shown without a name";
  EXPECT_EQ(std::count(notes.begin(), notes.end(), expected), 1) << ::testing::PrintToString(notes);
  std::filesystem::remove(file);
}

// Anomalies of the error kind (the file is damaged) are said beside the tables, the others
// only in them.
TEST(ReportPipeline, DamagedRecordsAreAWarning) {
  TraceSummary s;
  s.anomalies = {{"missing_switch_out", 3}, {"lost_events", 2}};
  EXPECT_EQ(DamagedRecordsWarning(s), "");
  s.anomalies["time_backwards"] = 1;
  s.anomalies["unknown_event_type"] = 15;
  EXPECT_EQ(DamagedRecordsWarning(s),
            "damaged records (time_backwards=1 unknown_event_type=15): the file itself is "
            "damaged; records were skipped or are out of time order, so the numbers they touch "
            "may be wrong; --explain-anomalies says where");
}

// trace-cmd extract stores the format of every event the kernel has, recorded or not: in a
// file not written by cstool an event with a format but no record is missing all the
// same, or on-CPU time with syscall formats but no syscall records would all be sys.
TEST(ReportPipeline, FormatsWithoutRecordsInAForeignFileCountAsMissing) {
  for (const bool with_sys_exit : {false, true}) {
    SCOPED_TRACE(with_sys_exit);
    SyntheticTrace t(kEvents, 1);
    int sw = t.AddEvent("sched", "sched_switch");
    int waking = t.AddEvent("sched", "sched_waking");
    t.AddEvent("sched", "sched_wakeup");
    t.AddEvent("raw_syscalls", "sys_enter");
    const int sys_exit = t.AddEvent("raw_syscalls", "sys_exit");
    t.AddEvent("irq", "irq_handler_entry");
    t.AddEvent("irq", "irq_handler_exit");
    t.AddEvent("exceptions", "page_fault_user");
    if (with_sys_exit) t.Append(0, 999000, t.NewRecord(sys_exit, 100).Set("id", 0).Set("ret", 0));
    AddPingPong(t, sw, waking, 10, 1000000);
    std::string path = TempPath("unrecorded");
    t.Write(path);

    SyscallTable syscalls;
    auto analyzed = AnalyzeTrace(path, syscalls);
    std::remove(path.c_str());
    const TraceSummary& s = analyzed->model.trace;
    auto has = [&](const std::string& e) {
      return std::find(s.missing_events.begin(), s.missing_events.end(), e) !=
             s.missing_events.end();
    };
    auto noted = [&](std::string_view what) {
      return std::any_of(s.notes.begin(), s.notes.end(),
                         [what](const std::string& n) { return n.starts_with(what); });
    };
    EXPECT_EQ(has("raw_syscalls:sys_enter"), !with_sys_exit);
    EXPECT_EQ(has("raw_syscalls:sys_exit"), !with_sys_exit);
    EXPECT_EQ(noted("no raw_syscalls events"), !with_sys_exit);
    EXPECT_TRUE(has("sched:sched_wakeup"));
    EXPECT_FALSE(has("sched:sched_waking"));
    EXPECT_TRUE(has("irq:irq_handler_entry"));
    EXPECT_TRUE(noted("no irq events"));
    EXPECT_TRUE(has("exceptions:page_fault_user"));
    EXPECT_TRUE(noted("no exceptions events"));
    if (with_sys_exit) continue;
    for (const ThreadReport& r : analyzed->model.threads) {
      if (!r.thread) continue;
      EXPECT_EQ(r.microstates[static_cast<size_t>(Microstate::kSys)], 0);
      EXPECT_GT(r.microstates[static_cast<size_t>(Microstate::kUser)], 0);
    }
  }
}

// cstool's own files store the formats of what they recorded only, and a family recorded
// without a single record (a workload that made no syscall) is not missing.
TEST(ReportPipeline, FormatsWithoutRecordsInACstoolFileAreNotMissing) {
  SyntheticTrace t(kEvents, 1);
  int sw = t.AddEvent("sched", "sched_switch");
  int waking = t.AddEvent("sched", "sched_waking");
  t.AddEvent("raw_syscalls", "sys_enter");
  t.AddEvent("raw_syscalls", "sys_exit");
  AddPingPong(t, sw, waking, 10, 1000000);
  RecordingInfo info;
  info.system_wide = true;
  t.SetRecordingInfo(info);
  auto analyzed = AnalyzeSynthetic(t, "recorded_none");
  const auto& missing = analyzed->model.trace.missing_events;
  EXPECT_EQ(std::find(missing.begin(), missing.end(), "raw_syscalls:sys_enter"), missing.end());
}

// A recording of one process without fork events: thread 200 met it (they take turns)
// but the trace cannot say whether the process started it. It is left out, and the
// note counts it; with sched_process_fork recorded nothing is unplaced.
TEST(ReportPipeline, WithoutForkEventsTheThreadsLeftOutAreCounted) {
  auto notes_of = [](bool with_fork) {
    SyntheticTrace t(kEvents, 1);
    int sw = t.AddEvent("sched", "sched_switch");
    int waking = t.AddEvent("sched", "sched_waking");
    if (with_fork) t.AddEvent("sched", "sched_process_fork");
    AddPingPong(t, sw, waking, 10, 1000000);
    RecordingInfo info;
    info.target_pids = {100};
    t.SetRecordingInfo(info);
    auto analyzed = AnalyzeSynthetic(t, with_fork ? "with_fork" : "no_fork");
    for (const Thread& th : analyzed->machine->threads())
      EXPECT_EQ(th.tracked, th.tid == 100) << th.tid;
    return analyzed->model.trace.notes;
  };
  auto unplaced = [](const std::vector<std::string>& notes) {
    return std::count_if(notes.begin(), notes.end(), [](const std::string& n) {
      return n.starts_with("no sched_process_fork events");
    });
  };
  const std::vector<std::string> without = notes_of(false);
  ASSERT_EQ(unplaced(without), 1);
  EXPECT_NE(std::find_if(without.begin(), without.end(),
                         [](const std::string& n) {
                           return n.ends_with(
                               "1 other thread in the trace is left out (--all-threads lists "
                               "them)");
                         }),
            without.end());
  EXPECT_EQ(unplaced(notes_of(true)), 0);
}

// record -C: the report says which CPUs the trace leaves out (only --check said so), and
// its summary line names the traced CPUs and lists the lost events of those only (the
// left-out ones have empty buffers in the file: it said "on 4 CPUs; lost events: cpu0 0,
// cpu1 0, ...").
TEST(ReportPipeline, CpusLeftOutOfTheRecordingAreNamed) {
  SyntheticTrace t(kEvents, 4);
  int sw = t.AddEvent("sched", "sched_switch");
  int waking = t.AddEvent("sched", "sched_waking");
  AddPingPong(t, sw, waking, 10, 1000000);
  RecordingInfo info;
  info.system_wide = true;
  info.untraced_cpus = {1, 2, 3};
  t.SetRecordingInfo(info);
  const std::string path = TempPath("cpus_left_out");
  t.Write(path);
  SyscallTable syscalls;
  auto analyzed = AnalyzeTrace(path, syscalls);
  const auto& notes = analyzed->model.trace.notes;
  EXPECT_EQ(std::count_if(notes.begin(), notes.end(),
                          [](const std::string& n) {
                            return n.starts_with("CPU 1-3 not recorded (record -C)");
                          }),
            1)
      << ::testing::PrintToString(notes);
  CommandResult table = RunCommand({CSTOOL_BINARY, "report", path});
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find(" on CPU 0 (of 4; -C left out CPUs 1,2,3) over "), std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("; lost events: cpu0 0\n"), std::string::npos) << table.out;
  std::remove(path.c_str());
}

// A file without task:task_newtask (record --no-defaults -e sched) shows no fork's
// flags: a thread that exited names its process only in its exit record (taskstats),
// which now groups it ("processes could not be grouped", PID "-" before).
TEST(ReportPipeline, AnExitRecordNamesTheProcessOfAThreadTheFileDoesNot) {
  SyntheticTrace t(kEvents, 1);
  int sw = t.AddEvent("sched", "sched_switch");
  int waking = t.AddEvent("sched", "sched_waking");
  AddPingPong(t, sw, waking, 10, 1000000);
  KernelRecording kernel;
  KernelTaskCounters exit_record;
  exit_record.tid = 200;
  exit_record.tgid = 100;
  exit_record.source = KernelTaskCounters::Source::kTaskstatsExit;
  kernel.counters.Add(exit_record);
  RecordingInfo info;
  info.kernel_counters = kernel.ToJson();
  t.SetRecordingInfo(info);
  auto analyzed = AnalyzeSynthetic(t, "exit_record_tgid");
  int grouped = 0;
  for (const ThreadReport& r : analyzed->model.threads)
    if (r.thread && r.thread->tid == 200) grouped += r.thread->tgid == 100 ? 1 : 0;
  EXPECT_EQ(grouped, 1);
}

TEST(ReportPipeline, LostEventsInTheMiddleAreCountedAndFlagTheThreads) {
  SyntheticTrace t(kEvents, 2);
  int sw = t.AddEvent("sched", "sched_switch");
  int waking = t.AddEvent("sched", "sched_waking");
  AddPingPong(t, sw, waking, 200, 1000000);  // spans several pages
  t.MarkLost(0, 57);
  AddPingPong(t, sw, waking, 200, 10000000);
  std::string path = TempPath("lost_middle");
  t.Write(path);

  CommandResult out = RunCommand({CSTOOL_BINARY, "report", path, "--format", "json"});
  ASSERT_EQ(out.status, 0) << out.err;
  auto j = nlohmann::json::parse(out.out);
  EXPECT_EQ(j["trace"]["lost_events"]["0"].get<uint64_t>(), 57u);
  EXPECT_EQ(j["trace"]["lost_events"]["1"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["trace"]["anomalies"]["lost_events"].get<uint64_t>(), 57u);
  for (const auto& th : j["threads"]) EXPECT_TRUE(th["lost_events_touched"].get<bool>());
  CommandResult table = RunCommand({CSTOOL_BINARY, "report", path});
  EXPECT_NE(table.out.find("100!"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("LOST EVENTS: 57 total, cpu0 57, cpu1 0"), std::string::npos);
  CommandResult csv = RunCommand({CSTOOL_BINARY, "report", path, "--format", "csv"});
  const auto rows = CsvRows(csv.out);
  EXPECT_EQ(rows.size(), j["threads"].size()) << csv.out;
  for (const auto& row : rows) EXPECT_EQ(row.at("lost_events_touched"), "1") << csv.out;
  std::remove(path.c_str());
}

TEST(ReportPipeline, TruncatedFileFailsWithOffsetAndNoCrash) {
  std::string src = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/golden_mutex.dat";
  std::ifstream in(src, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::string path = TempPath("truncated");
  for (size_t cut : {size_t{5}, size_t{100}, size_t{3000}, bytes.size() / 2, bytes.size() - 100}) {
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(cut));
    CommandResult r = RunCommand({CSTOOL_BINARY, "report", path});
    EXPECT_EQ(r.status, 1) << "cut at " << cut << ": " << r.err;
    EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("offset"), std::string::npos) << r.err;
    // Cut in the events (the last CPU's pages): the error says what reads around it.
    if (cut == bytes.size() - 100) {
      EXPECT_NE(r.err.find("(--salvage reports what the file still holds)"), std::string::npos)
          << r.err;
    }
  }
  std::remove(path.c_str());
}

// trace-cmd's file has no kernel counters: the report is printed, the check fails.
TEST(ReportPipeline, CheckOfAFileWithoutKernelCountersFails) {
  std::string src = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/small_v6.dat";
  CommandResult plain = RunCommand({CSTOOL_BINARY, "report", src});
  EXPECT_EQ(plain.status, 0) << plain.err;
  CommandResult check = RunCommand({CSTOOL_BINARY, "report", src, "--check"});
  EXPECT_EQ(check.status, 1) << check.err;
  EXPECT_EQ(check.out.rfind(plain.out, 0), 0u) << check.out;  // the report, then the check
  EXPECT_NE(check.out.find("\nkernel check: NOT CHECKED: nothing to compare"), std::string::npos)
      << check.out;
  CommandResult json = RunCommand({CSTOOL_BINARY, "report", src, "--check", "--format", "json"});
  EXPECT_EQ(json.status, 1) << json.err;
  const nlohmann::json parsed = nlohmann::json::parse(json.out);
  EXPECT_FALSE(parsed["check"]["passed"].get<bool>());
  // A thread whose process the file does not name has none in the check either (it had
  // its tid there), as in the thread table; and its note is the file's, not the thread's.
  const nlohmann::json& threads = parsed["check"]["threads"];
  bool unknown = false, known = false;
  for (const nlohmann::json& t : threads) {
    EXPECT_EQ(t["note"], "the file holds no kernel counters") << t.dump();
    if (t["tid"] == 21) {  // migration/1: a kernel thread, seen running only
      unknown = true;
      EXPECT_TRUE(t["pid"].is_null()) << t.dump();
    }
    if (t["tid"] == 5333) {  // the ping-pong's second thread, forked in the trace
      known = true;
      EXPECT_EQ(t["pid"], 5332) << t.dump();
    }
  }
  EXPECT_TRUE(unknown && known) << threads.dump();
  EXPECT_NE(check.out.find("\n      21       - migration/1      none     none: the file holds no "
                           "kernel counters\n"),
            std::string::npos)
      << check.out;
}

// CSV with --check stays one table: each thread's row carries its check, the verdict is
// the status line on standard error, the exit status the same.
TEST(ReportPipeline, CsvCheckIsColumnsOfTheThreadRows) {
  const std::string src = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/small_v6.dat";
  CommandResult plain = RunCommand({CSTOOL_BINARY, "report", src, "--format", "csv"});
  CommandResult check = RunCommand({CSTOOL_BINARY, "report", src, "--check", "--format", "csv"});
  EXPECT_EQ(check.status, 1) << check.err;
  EXPECT_EQ(check.out.find('#'), std::string::npos) << check.out;
  EXPECT_EQ(check.out.find("\n\n"), std::string::npos) << check.out;
  EXPECT_NE(check.err.find("kernel check: NOT CHECKED: nothing to compare"), std::string::npos)
      << check.err;
  const auto rows = CsvRows(check.out);
  const auto plain_rows = CsvRows(plain.out);
  ASSERT_EQ(rows.size(), plain_rows.size());
  ASSERT_FALSE(rows.empty());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].size(), plain_rows[i].size() + 10);
    EXPECT_EQ(rows[i].at("tid"), plain_rows[i].at("tid"));
    EXPECT_EQ(rows[i].at("check_status"), "none") << rows[i].at("tid");
    EXPECT_EQ(rows[i].at("check_window"), "none") << rows[i].at("tid");
    EXPECT_EQ(rows[i].at("kernel_nvcsw"), "") << rows[i].at("tid");  // not compared
  }
}

// --sort asleep: by the time in every sleep state (sleep alone is the plain state).
TEST(ReportPipeline, SortAsleepOrdersByAllSleepStates) {
  const std::string src = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/golden_mutex.dat";
  CommandResult r =
      RunCommand({CSTOOL_BINARY, "report", src, "--sort", "asleep", "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json report = nlohmann::json::parse(r.out);
  std::vector<int64_t> asleep;
  for (const auto& t : report["threads"]) {
    int64_t sum = 0;
    for (const char* k :
         {"sleep", "sleep_futex", "sleep_poll", "sleep_uninterruptible", "sleep_paging"})
      sum += t["microstates_ns"][k].get<int64_t>();
    asleep.push_back(sum);
  }
  ASSERT_GE(asleep.size(), 3u);
  EXPECT_TRUE(std::is_sorted(asleep.rbegin(), asleep.rend()));
  EXPECT_GT(asleep.front(), asleep.back());
}

// --sort takes the THREADS table's column titles, in any case, as the keys they show.
TEST(ReportPipeline, SortTakesColumnTitles) {
  const std::string src = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/golden_mutex.dat";
  const auto order = [&](const std::string& key) {
    CommandResult r = RunCommand({CSTOOL_BINARY, "report", src, "--sort", key, "--format", "csv"});
    EXPECT_EQ(r.status, 0) << key << ": " << r.err;
    return r.out;
  };
  for (const auto& [title, key] :
       std::vector<std::pair<std::string, std::string>>{{"LATW", "wait_cpu_wakeup"},
                                                        {"latp", "wait_cpu_preempted"},
                                                        {"Lck", "sleep_futex"},
                                                        {"VCX", "voluntary"},
                                                        {"icx", "involuntary"},
                                                        {"LIFE(ms)", "lifetime"},
                                                        {"life", "lifetime"},
                                                        {"TID", "tid"},
                                                        {"USER", "user"},
                                                        {"migr", "migrations"}}) {
    EXPECT_EQ(order(title), order(key)) << title;
  }
  // The orders differ, so that equal outputs above say something.
  EXPECT_NE(order("sleep_futex"), order("tid"));
  EXPECT_NE(order("voluntary"), order("lifetime"));
  // migrations: the most moved thread first (the WAKERS table's MIGR).
  const nlohmann::json by_migrations = nlohmann::json::parse(
      RunCommand({CSTOOL_BINARY, "report", src, "--sort", "MIGR", "--format", "json"}).out);
  std::vector<uint64_t> moves;
  for (const nlohmann::json& t : by_migrations.at("threads"))
    moves.push_back(t.at("migrations").get<uint64_t>());
  EXPECT_TRUE(std::is_sorted(moves.rbegin(), moves.rend())) << by_migrations.dump();
  EXPECT_NE(order("migrations"), order("tid"));
}

// --sort comm (the THREADS table's COMM title too): by name, ascending.
TEST(ReportPipeline, SortByCommOrdersByNameAscending) {
  const std::string src = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/small_v6.dat";
  for (const char* key : {"comm", "COMM"}) {
    CommandResult r = RunCommand({CSTOOL_BINARY, "report", src, "--sort", key, "--format", "json"});
    ASSERT_EQ(r.status, 0) << r.err;
    std::vector<std::string> names;
    const nlohmann::json report = nlohmann::json::parse(r.out);
    for (const nlohmann::json& t : report.at("threads"))
      names.push_back(t.at("comm").get<std::string>());
    ASSERT_GE(names.size(), 3u);
    EXPECT_TRUE(std::is_sorted(names.begin(), names.end())) << key;
    EXPECT_NE(names.front(), names.back()) << key;
  }
}

// -t and -p take a comma-separated list as well as repeats, and one value each time:
// `report -t TID FILE` took FILE for a second thread ("Could not convert: --tid =
// 16697,FILE").
TEST(ReportPipeline, SelectionsTakeCommaLists) {
  const std::string src = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/golden_mutex.dat";
  const auto tids = [&](std::vector<std::string> args, bool file_last = false) {
    std::vector<std::string> cmd = {CSTOOL_BINARY, "report", "--format", "json"};
    if (!file_last) cmd.push_back(src);
    cmd.insert(cmd.end(), args.begin(), args.end());
    if (file_last) cmd.push_back(src);
    CommandResult r = RunCommand(cmd);
    EXPECT_EQ(r.status, 0) << r.err;
    std::vector<int64_t> out;
    const nlohmann::json report = nlohmann::json::parse(r.out);
    for (const nlohmann::json& t : report.at("threads")) out.push_back(t.at("tid").get<int64_t>());
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(tids({"-t", "16697,16698"}), (std::vector<int64_t>{16697, 16698}));
  EXPECT_EQ(tids({"-t", "16697", "-t", "16698"}), (std::vector<int64_t>{16697, 16698}));
  EXPECT_EQ(tids({"-p", "16694,16694"}), tids({"-p", "16694"}));
  EXPECT_EQ(tids({"-t", "16697"}, true), (std::vector<int64_t>{16697}));
  EXPECT_EQ(tids({"-p", "16694"}, true), tids({"-p", "16694"}));
}

TEST(ReportPipeline, UsageErrorsExitTwo) {
  std::string src = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/golden_mutex.dat";
  CommandResult fmt = RunCommand({CSTOOL_BINARY, "report", src, "--format", "xml"});
  EXPECT_EQ(fmt.status, 2);
  EXPECT_NE(fmt.err.find("unknown format 'xml'"), std::string::npos) << fmt.err;
  CommandResult sort = RunCommand({CSTOOL_BINARY, "report", src, "--sort", "bogus"});
  EXPECT_EQ(sort.status, 2);
  EXPECT_NE(sort.err.find("unknown sort key"), std::string::npos) << sort.err;
  CommandResult missing = RunCommand({CSTOOL_BINARY, "report", "/nonexistent/x.dat"});
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("/nonexistent/x.dat"), std::string::npos) << missing.err;
}

TEST(ReportPipeline, FiltersSelectThreadsAndProcesses) {
  std::string src = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/golden_mutex.dat";
  CommandResult all = RunCommand({CSTOOL_BINARY, "report", src, "--format", "json"});
  auto j = nlohmann::json::parse(all.out);
  ASSERT_GE(j["threads"].size(), 2u);
  int tid = j["threads"][1]["tid"];
  CommandResult one =
      RunCommand({CSTOOL_BINARY, "report", src, "--format", "json", "-t", std::to_string(tid)});
  auto k = nlohmann::json::parse(one.out);
  ASSERT_EQ(k["threads"].size(), 1u);
  EXPECT_EQ(k["threads"][0]["tid"], tid);
  // Selecting nothing is an error that says what the file holds
  // (tests/unit/cmd/user_errors_test.cc).
  CommandResult none = RunCommand({CSTOOL_BINARY, "report", src, "--format", "json", "-p", "1"});
  EXPECT_EQ(none.status, 1);
  EXPECT_EQ(none.out, "");
  EXPECT_TRUE(LastOwnLine(none.err).starts_with("cstool report: no thread matches -p 1;"))
      << none.err;
}

}  // namespace
}  // namespace cstool::testing
