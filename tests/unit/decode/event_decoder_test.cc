#include "decode/event_decoder.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/errors.h"
#include "decode/decode_trace.h"
#include "format/trace_handles.h"
#include "model/task_state.h"
#include "pipeline/analyze_trace.h"
#include "tests/support/files.h"
#include "tests/support/synthetic_trace.h"

namespace cstool {
namespace {

using testing::ReadWholeFile;
const std::string kFormats = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/formats/";
const std::string kEvents = kFormats + "events";

// Parses one format text into a fresh tep_handle and returns the event.
struct ParsedFormat {
  TepHandlePtr tep{tep_alloc()};
  tep_event* event = nullptr;
  explicit ParsedFormat(const std::string& text, const char* sys = "sched") {
    tep_set_long_size(tep.get(), 8);
    tep_parse_format(tep.get(), &event, text.data(), text.size(), sys);
  }
};

TEST(TaskStateMap, CurrentKernelLayout) {
  ParsedFormat f(ReadWholeFile(kEvents + "/sched/sched_switch/format"));
  ASSERT_NE(f.event, nullptr);
  TaskStateMap m(f.event);
  EXPECT_TRUE(m.from_format()) << m.problem();
  EXPECT_EQ(m.state_mask(), 0xffu);
  EXPECT_EQ(m.preempt_mask(), 0x100u);
  EXPECT_EQ(m.Map(0).bits, 0);
  EXPECT_FALSE(m.Map(0).preempted);
  EXPECT_EQ(m.Map(0x1).bits, kStateInterruptible);
  EXPECT_EQ(m.Map(0x2).bits, kStateUninterruptible);
  EXPECT_EQ(m.Map(0x4).bits, kStateStopped);
  EXPECT_EQ(m.Map(0x8).bits, kStateTraced);
  EXPECT_EQ(m.Map(0x10).bits, kStateDead);
  EXPECT_EQ(m.Map(0x20).bits, kStateZombie);
  EXPECT_EQ(m.Map(0x40).bits, kStateParked);
  EXPECT_EQ(m.Map(0x80).bits, kStateIdle);
  EXPECT_EQ(m.Map(0x100).bits, 0);
  EXPECT_TRUE(m.Map(0x100).preempted);
  EXPECT_EQ(m.Map(0x3).bits, kStateInterruptible | kStateUninterruptible);
  EXPECT_EQ(m.Map(uint64_t{1} << 40).bits, 0);  // outside the format's masks
}

TEST(TaskStateMap, Linux44Layout) {
  ParsedFormat f(ReadWholeFile(kFormats + "sched_switch_4.4.format"));
  ASSERT_NE(f.event, nullptr);
  TaskStateMap m(f.event);
  EXPECT_TRUE(m.from_format()) << m.problem();
  EXPECT_EQ(m.state_mask(), 0x7ffu);
  EXPECT_EQ(m.preempt_mask(), 0x800u);  // TASK_STATE_MAX
  EXPECT_EQ(m.Map(1).bits, kStateInterruptible);
  EXPECT_EQ(m.Map(2).bits, kStateUninterruptible);
  EXPECT_EQ(m.Map(16).bits, kStateZombie);  // Z and X swapped places in 4.14
  EXPECT_EQ(m.Map(32).bits, kStateDead);
  EXPECT_EQ(m.Map(64).bits, kStateDead);                  // x: TASK_DEAD
  EXPECT_EQ(m.Map(2 | 128).bits, kStateUninterruptible);  // TASK_KILLABLE
  EXPECT_EQ(m.Map(2 | 1024).bits, kStateIdle);            // TASK_IDLE = D|N
  EXPECT_EQ(m.Map(512).bits, kStateParked);
  EXPECT_TRUE(m.Map(0x800).preempted);
  EXPECT_EQ(m.Map(0x800).bits, 0);
  EXPECT_FALSE(m.Map(0x100).preempted);  // W (waking) here, not the preempt bit
}

TEST(TaskStateMap, FourByteStateWith0x1000PreemptBit) {
  ParsedFormat f(ReadWholeFile(kFormats + "sched_switch_32bit_state.format"));
  ASSERT_NE(f.event, nullptr);
  TaskStateMap m(f.event);
  EXPECT_TRUE(m.from_format()) << m.problem();
  EXPECT_EQ(m.preempt_mask(), 0x1000u);
  EXPECT_EQ(m.Map(16).bits, kStateDead);
  EXPECT_EQ(m.Map(2048).bits, kStateUnknownBits);  // "n": a letter cstool does not know
  EXPECT_TRUE(m.Map(0x1000).preempted);
}

TEST(TaskStateMap, FallsBackWithoutFormat) {
  TaskStateMap m(static_cast<const tep_event*>(nullptr));
  EXPECT_FALSE(m.from_format());
  EXPECT_FALSE(m.problem().empty());
  EXPECT_TRUE(m.Map(0x100).preempted);
  EXPECT_EQ(m.Map(0x2).bits, kStateUninterruptible);
}

TEST(PrintFormat, EvaluatesExpressionsAndSymbols) {
  ParsedFormat f(ReadWholeFile(kEvents + "/irq/softirq_entry/format"), "irq");
  ASSERT_NE(f.event, nullptr);
  auto syms = PrintSymbols(f.event, "vec");
  ASSERT_GE(syms.size(), 10u);
  EXPECT_EQ(syms[0].first, 0u);
  EXPECT_EQ(syms[0].second, "HI");
  EXPECT_EQ(syms[1].second, "TIMER");
  EXPECT_EQ(syms[3].second, "NET_RX");
}

// Collects what the decoder pushes.
struct CollectSink : EventSink {
  std::vector<SchedSwitch> switches;
  std::vector<std::string> prev_comms, next_comms;
  std::vector<std::pair<std::string, std::string>> forks;
  std::vector<std::string> execs, irq_names, softirqs, vectors;
  std::vector<SysExit> sys_exits;
  std::vector<SysEnter> sys_enters;
  std::vector<int> others;
  std::vector<LostEvents> lost;
  void PushSchedSwitch(const SchedSwitch& e) override {
    switches.push_back(e);
    prev_comms.emplace_back(e.prev_comm);
    next_comms.emplace_back(e.next_comm);
  }
  void PushSchedProcessFork(const SchedProcessFork& e) override {
    forks.emplace_back(std::string(e.parent_comm), std::string(e.child_comm));
  }
  void PushSchedProcessExec(const SchedProcessExec& e) override { execs.emplace_back(e.filename); }
  void PushIrqHandlerEntry(const IrqHandlerEntry& e) override { irq_names.emplace_back(e.name); }
  void PushSoftirq(const Softirq& e) override {
    softirqs.push_back(fmt::format("{}:{}:{}", static_cast<int>(e.phase), e.vec, e.name));
  }
  void PushIrqVector(const IrqVector& e) override {
    vectors.push_back(fmt::format("{}:{}:{}", e.entry ? "entry" : "exit", e.vector, e.name));
  }
  void PushSysEnter(const SysEnter& e) override { sys_enters.push_back(e); }
  void PushSysExit(const SysExit& e) override { sys_exits.push_back(e); }
  void PushOtherEvent(const EventCommon&, int type) override { others.push_back(type); }
  void PushLostEvents(const LostEvents& l) override { lost.push_back(l); }
};

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (name + "_" + std::to_string(::getpid()) + ".dat"))
      .string();
}

// Writes `t` to a file of its own, reads it back with cstool's reader and decodes it all.
// (The events' string views point into pages gone by then: the copies are the strings.)
CollectSink DecodeWritten(SyntheticTrace& t, const std::string& name) {
  const std::string path = TempPath(name);
  t.Write(path);
  auto reader = OpenTraceFile(path);
  EventDecoder dec(reader->tep());
  CollectSink sink;
  DecodeTrace(*reader, dec, sink);
  std::filesystem::remove(path);
  return sink;
}

TEST(EventDecoder, DecodesEveryKnownEventFromSyntheticFile) {
  SyntheticTrace t(kEvents, 2);
  const int sw = t.AddEvent("sched", "sched_switch");
  const int fork = t.AddEvent("sched", "sched_process_fork");
  const int exec = t.AddEvent("sched", "sched_process_exec");
  const int irq = t.AddEvent("irq", "irq_handler_entry");
  const int sirq = t.AddEvent("irq", "softirq_entry");
  const int lt = t.AddEvent("irq_vectors", "local_timer_entry");
  const int rx = t.AddEvent("irq_vectors", "reschedule_exit");
  const int se = t.AddEvent("raw_syscalls", "sys_enter");
  const int sx = t.AddEvent("raw_syscalls", "sys_exit");
  const int other = t.AddEventFormat("test", R"(name: my_event
ID: 4000
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:int x;	offset:8;	size:4;	signed:1;

print fmt: "x=%d", REC->x
)");
  EXPECT_EQ(other, 4000);

  auto s = t.NewRecord(sw, 100, kFlagNeedResched);
  s.SetString("prev_comm", "exactly16chars!!").Set("prev_pid", 100).Set("prev_prio", 120);
  s.Set("prev_state", 0x100).SetString("next_comm", "b").Set("next_pid", 200);
  t.Append(0, 1000, s);
  s.Set("prev_state", 0x2).SetString("prev_comm", "a");
  t.Append(0, 2000, s);
  t.Append(1, 1500,
           t.NewRecord(fork, 5)
               .SetString("parent_comm", "parent")
               .Set("parent_pid", 5)
               .SetString("child_comm", "child")
               .Set("child_pid", 6));
  t.Append(1, 1600, t.NewRecord(exec, 6).SetString("filename", "/bin/true").Set("pid", 6));
  t.Append(1, 1700, t.NewRecord(irq, 0).Set("irq", 11).SetString("name", "virtio0-input"));
  t.Append(1, 1800, t.NewRecord(sirq, 0).Set("vec", 1));
  t.Append(1, 1900, t.NewRecord(lt, 0).Set("vector", 236));
  t.Append(1, 2100, t.NewRecord(rx, 0).Set("vector", 253));
  t.Append(0, 3000, t.NewRecord(se, 100).Set("id", 0));
  t.Append(0, 4000, t.NewRecord(sx, 100).Set("id", 0).Set("ret", -11));
  t.Append(0, 5000, t.NewRecord(other, 100).Set("x", 1));
  const std::string path = TempPath("cstool_decoder");
  t.Write(path);

  for (ReaderBackend b : {ReaderBackend::kFast, ReaderBackend::kLibTracecmd}) {
    SCOPED_TRACE(static_cast<int>(b));
    auto reader = OpenTraceFile(path, {b, ""});
    EventDecoder dec(reader->tep());
    CollectSink sink;
    DecodeStats st = DecodeTrace(*reader, dec, sink);
    EXPECT_EQ(st.events, 11u);
    ASSERT_EQ(sink.switches.size(), 2u);
    EXPECT_EQ(sink.prev_comms[0], "exactly16chars!");  // char[16]: 15 chars + NUL
    EXPECT_EQ(sink.prev_comms[1], "a");
    EXPECT_EQ(sink.next_comms[0], "b");
    EXPECT_TRUE(sink.switches[0].prev_preempted);
    EXPECT_EQ(sink.switches[0].prev_state, 0);
    EXPECT_EQ(sink.switches[0].c.flags, kFlagNeedResched);
    EXPECT_EQ(sink.switches[0].prev_prio, 120);
    EXPECT_FALSE(sink.switches[1].prev_preempted);
    EXPECT_EQ(sink.switches[1].prev_state, kStateUninterruptible);
    ASSERT_EQ(sink.forks.size(), 1u);
    EXPECT_EQ(sink.forks[0], std::make_pair(std::string("parent"), std::string("child")));
    EXPECT_EQ(sink.execs, std::vector<std::string>{"/bin/true"});
    EXPECT_EQ(sink.irq_names, std::vector<std::string>{"virtio0-input"});
    EXPECT_EQ(sink.softirqs, std::vector<std::string>{"1:1:TIMER"});
    EXPECT_EQ(sink.vectors,
              (std::vector<std::string>{"entry:236:local_timer", "exit:253:reschedule"}));
    ASSERT_EQ(sink.sys_exits.size(), 1u);
    EXPECT_EQ(sink.sys_exits[0].ret, -11);
    EXPECT_EQ(sink.others, std::vector<int>{4000});
    EXPECT_EQ(st.first_ts, 1000);
    EXPECT_EQ(st.last_ts, 5000);
    // Events this file lacks are reported, not fatal.
    auto& missing = dec.missing_events();
    EXPECT_NE(std::find(missing.begin(), missing.end(), "sched:sched_waking"), missing.end());
    EXPECT_NE(std::find(missing.begin(), missing.end(), "nmi:nmi_handler"), missing.end());
    EXPECT_EQ(std::find(missing.begin(), missing.end(), "sched:sched_switch"), missing.end());
  }
  std::filesystem::remove(path);
}

TEST(EventDecoder, OldKernelLayoutsDecodeByFormat) {
  struct Case {
    const char* file;
    uint64_t preempt;
    int state_size;
  };
  for (const Case& c : {Case{"sched_switch_4.4.format", 0x800, 8},
                        Case{"sched_switch_32bit_state.format", 0x1000, 4}}) {
    SCOPED_TRACE(c.file);
    SyntheticTrace t(kEvents, 1);
    const int sw = t.AddEventFormat("sched", ReadWholeFile(kFormats + c.file));
    auto r = t.NewRecord(sw, 7).SetString("prev_comm", "old").Set("prev_pid", 7);
    r.Set("next_pid", 8).SetString("next_comm", "new");
    t.Append(0, 10, r.Set("prev_state", static_cast<int64_t>(c.preempt)));
    t.Append(0, 20, r.Set("prev_state", 16));  // Z on 4.4, X on the other
    t.Append(0, 30, r.Set("prev_state", 2 | 1024));
    const CollectSink sink = DecodeWritten(t, "cstool_old_layout");
    ASSERT_EQ(sink.switches.size(), 3u);
    EXPECT_TRUE(sink.switches[0].prev_preempted);
    EXPECT_EQ(sink.switches[0].prev_state, 0);
    EXPECT_EQ(sink.switches[1].prev_state, c.state_size == 8 ? kStateZombie : kStateDead);
    EXPECT_EQ(sink.switches[2].prev_state, kStateIdle);
    EXPECT_EQ(sink.switches[2].next_pid, 8);
    EXPECT_EQ(sink.next_comms[2], "new");
  }
}

// A 32-bit kernel's syscall events: `long` fields of 4 bytes, read by their format's width
// and sign (the decoder loads 8-byte fields directly, and these by the general way).
TEST(EventDecoder, ThirtyTwoBitSyscallFieldsDecodeByFormat) {
  constexpr std::string_view kCommon = R"(format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

)";
  SyntheticTrace t(kEvents, 1);
  const int se = t.AddEventFormat(
      "raw_syscalls", "name: sys_enter\nID: 21\n" + std::string(kCommon) +
                          "\tfield:long id;\toffset:8;\tsize:4;\tsigned:1;\n"
                          "\tfield:unsigned long args[6];\toffset:12;\tsize:24;\tsigned:0;\n\n"
                          "print fmt: \"NR %ld\", REC->id\n");
  const int sx =
      t.AddEventFormat("raw_syscalls", "name: sys_exit\nID: 22\n" + std::string(kCommon) +
                                           "\tfield:long id;\toffset:8;\tsize:4;\tsigned:1;\n"
                                           "\tfield:long ret;\toffset:12;\tsize:4;\tsigned:1;\n\n"
                                           "print fmt: \"NR %ld = %ld\", REC->id, REC->ret\n");
  t.Append(0, 10, t.NewRecord(se, 7).Set("id", 3));
  t.Append(0, 20, t.NewRecord(sx, 7).Set("id", 3).Set("ret", -11));
  t.Append(0, 30, t.NewRecord(se, 7).Set("id", -1));  // (a ptrace'd task's skipped call)
  t.Append(0, 40, t.NewRecord(sx, 7).Set("id", -1).Set("ret", 0x7fffffff));
  const CollectSink sink = DecodeWritten(t, "cstool_32bit_syscalls");
  ASSERT_EQ(sink.sys_enters.size(), 2u);
  ASSERT_EQ(sink.sys_exits.size(), 2u);
  EXPECT_EQ(sink.sys_enters[0].id, 3);
  EXPECT_EQ(sink.sys_enters[1].id, -1);
  EXPECT_EQ(sink.sys_exits[0].id, 3);
  EXPECT_EQ(sink.sys_exits[0].ret, -11);
  EXPECT_EQ(sink.sys_exits[1].id, -1);
  EXPECT_EQ(sink.sys_exits[1].ret, 0x7fffffff);
}

TEST(EventDecoder, ShortRecordsAndBadStringsAreCountedNotFatal) {
  SyntheticTrace t(kEvents, 1);
  const int fork = t.AddEvent("sched", "sched_process_fork");
  const int sw = t.AddEvent("sched", "sched_switch");
  auto f = t.NewRecord(fork, 1).SetString("parent_comm", "p").SetString("child_comm", "c");
  // Point child_comm's __data_loc far outside the record.
  auto bytes = f.bytes();
  std::vector<uint8_t> bad(bytes.begin(), bytes.end());
  const uint32_t loc = (8u << 16) | 4000u;
  std::memcpy(bad.data() + 16, &loc, 4);  // child_comm's offset in this kernel's format
  t.Append(0, 1, bad);
  auto full = t.NewRecord(sw, 1);
  std::vector<uint8_t> shorty(full.bytes().begin(), full.bytes().begin() + 12);
  t.Append(0, 2, shorty);
  const std::string path = TempPath("cstool_short");
  t.Write(path);
  auto reader = OpenTraceFile(path);
  CollectSink sink;
  DecodeStats st = DecodeTrace(*reader, sink);
  EXPECT_EQ(st.anomalies["bad_string"], 1u);
  EXPECT_EQ(st.anomalies["short_record"], 1u);
  ASSERT_EQ(sink.forks.size(), 1u);
  EXPECT_EQ(sink.forks[0].first, "p");
  EXPECT_EQ(sink.forks[0].second, "");
  EXPECT_TRUE(sink.switches.empty());
  std::filesystem::remove(path);
}

// A record whose id lies between the file's formats' ids but is none of them (a damaged
// record, or a damaged format's ID line) is counted, not taken for an event the report
// does not decode.
TEST(EventDecoder, AnIdNoFormatDefinesIsCounted) {
  SyntheticTrace t(kEvents, 1);
  const int fork = t.AddEvent("sched", "sched_process_fork");
  const int sw = t.AddEvent("sched", "sched_switch");
  const int undefined = std::min(fork, sw) - 1;
  ASSERT_GT(undefined, 0);
  auto rec = t.NewRecord(sw, 1);
  std::vector<uint8_t> bytes(rec.bytes().begin(), rec.bytes().end());
  const uint16_t type = static_cast<uint16_t>(undefined);
  std::memcpy(bytes.data(), &type, 2);  // common_type
  t.Append(0, 1, bytes);
  t.Append(0, 2, t.NewRecord(sw, 1).bytes());
  const std::string path = TempPath("cstool_undefined_id");
  t.Write(path);
  auto reader = OpenTraceFile(path);
  CollectSink sink;
  DecodeStats st = DecodeTrace(*reader, sink);
  EXPECT_EQ(st.anomalies["unknown_event_type"], 1u);
  EXPECT_EQ(sink.switches.size(), 1u);
  std::filesystem::remove(path);
}

TEST(EventDecoder, LostEventsAndRecordingInfoRoundTrip) {
  SyntheticTrace t(kEvents, 2);
  const int se = t.AddEvent("raw_syscalls", "sys_enter");
  RecordingInfo info;
  info.tool_version = "test";
  info.cpus = {{0, 1, 2, 3, 4, 5, 6, 7}};
  t.SetRecordingInfo(info);
  t.SetTraceClock("mono");
  t.SetCpuStat(0, "CPU: 0\nentries: 1\noverrun: 3\ndropped events: 4\n");
  t.Append(0, 100, t.NewRecord(se, 1));
  t.MarkLost(0, 17);
  t.Append(0, 200, t.NewRecord(se, 1));
  t.MarkLost(1, -1);
  t.Append(1, 150, t.NewRecord(se, 2));
  // A large time gap forces a time-extend event.
  t.Append(1, 150 + (uint64_t{1} << 30), t.NewRecord(se, 2));
  const std::string path = TempPath("cstool_lost");
  t.Write(path);
  for (ReaderBackend b : {ReaderBackend::kFast, ReaderBackend::kLibTracecmd}) {
    SCOPED_TRACE(static_cast<int>(b));
    auto reader = OpenTraceFile(path, {b, ""});
    if (b == ReaderBackend::kFast) {
      ASSERT_TRUE(reader->recording_info().has_value());
      EXPECT_EQ(reader->recording_info()->tool_version, "test");
      EXPECT_EQ(reader->recording_info()->cpus[0].overrun, 6u);
    }
    EXPECT_EQ(reader->trace_clock(), "mono");
    EXPECT_EQ(reader->cpu_stats().at(0).dropped, 4u);
    CollectSink sink;
    DecodeStats st = DecodeTrace(*reader, sink);
    EXPECT_EQ(st.events, 4u);
    // A loss is dated where its gap began: the CPU's record before it, or for a CPU
    // with none, the first after it.
    ASSERT_EQ(sink.lost.size(), 2u);
    EXPECT_EQ(sink.lost[0].cpu, 0);
    EXPECT_EQ(sink.lost[0].ts, 100);
    EXPECT_EQ(sink.lost[0].count, 17);
    EXPECT_EQ(sink.lost[1].cpu, 1);
    EXPECT_EQ(sink.lost[1].ts, 150);
    EXPECT_EQ(sink.lost[1].count, -1);
    EXPECT_EQ(st.lost_per_cpu[0], 17u);
    EXPECT_EQ(st.lost_gaps_unknown, 1u);
    EXPECT_EQ(st.last_ts, static_cast<int64_t>(150 + (uint64_t{1} << 30)));
  }
  std::filesystem::remove(path);
}

// A loss before every page: each batch of pages carries one loss marker per page (the
// records buffer's worst case; the ASan build checks its bounds).
TEST(EventDecoder, LossBeforeEveryPageKeepsEveryRecordAndMarker) {
  SyntheticTrace t(kEvents, 1);
  const int se = t.AddEvent("raw_syscalls", "sys_enter");
  constexpr int kRecords = 2000, kEvery = 40;
  for (int i = 0; i < kRecords; ++i) {
    if (i % kEvery == 0) t.MarkLost(0, 3);
    t.Append(0, 1000 + static_cast<uint64_t>(i), t.NewRecord(se, 1));
  }
  const std::string path = TempPath("cstool_lost_every_page");
  t.Write(path);
  auto reader = OpenTraceFile(path, {ReaderBackend::kFast, ""});
  CollectSink sink;
  DecodeStats st = DecodeTrace(*reader, sink);
  EXPECT_EQ(st.events, static_cast<uint64_t>(kRecords));
  ASSERT_EQ(sink.lost.size(), static_cast<size_t>(kRecords / kEvery));
  for (size_t i = 0; i < sink.lost.size(); ++i) {
    EXPECT_EQ(sink.lost[i].count, 3);
    // Dated at the record before the gap (the first page's: at the first record).
    EXPECT_EQ(sink.lost[i].ts, static_cast<int64_t>(i == 0 ? 1000 : 1000 + i * kEvery - 1));
  }
  EXPECT_EQ(st.lost_per_cpu[0], 3u * (kRecords / kEvery));
  std::filesystem::remove(path);
}

// Kernel differences the decoder cannot paper over must fail clearly or be noted.
namespace {

std::string WithoutPrevState(std::string format) {
  // Drop the field line and every use of it in the print format.
  const size_t line = format.find("\tfield:long prev_state;");
  EXPECT_NE(line, std::string::npos);
  format.erase(line, format.find('\n', line) + 1 - line);
  const size_t print = format.find("print fmt:");
  format.replace(print, std::string::npos,
                 "print fmt: \"prev_comm=%s prev_pid=%d ==> next_comm=%s next_pid=%d\", "
                 "REC->prev_comm, REC->prev_pid, REC->next_comm, REC->next_pid\n");
  return format;
}

std::string WritePingPong(const std::string& sched_switch_format, const std::string& name) {
  SyntheticTrace t(kEvents, 1);
  const int sw = t.AddEventFormat("sched", sched_switch_format);
  for (int i = 0; i < 4; ++i) {
    auto r = t.NewRecord(sw, i % 2 ? 8 : 7);
    r.SetString("prev_comm", "a").Set("prev_pid", i % 2 ? 8 : 7);
    r.SetString("next_comm", "b").Set("next_pid", i % 2 ? 7 : 8);
    t.Append(0, 1000 * (i + 1), r);
  }
  std::string path = TempPath(name);
  t.Write(path);
  return path;
}

}  // namespace

TEST(KernelDifferences, SchedSwitchWithoutPrevStateFailsClearly) {
  const std::string path = WritePingPong(
      WithoutPrevState(ReadWholeFile(kFormats + "sched_switch_4.4.format")), "no_state");
  {
    auto reader = OpenTraceFile(path);
    EventDecoder dec(reader->tep());
    const auto& missing = dec.missing_events();
    EXPECT_NE(std::find(missing.begin(), missing.end(), "sched:sched_switch (field prev_state)"),
              missing.end());
  }
  SyscallTable syscalls;
  try {
    AnalyzeTrace(path, syscalls);
    ADD_FAILURE() << "a sched_switch without prev_state was analysed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no usable 'prev_state' field"), std::string::npos)
        << e.what();
  }
  std::filesystem::remove(path);
}

TEST(KernelDifferences, UnreadableStateLettersAreNotedNotHidden) {
  // prev_state present, but printed as a plain number: no letters, no preempt bit.
  std::string format = ReadWholeFile(kFormats + "sched_switch_4.4.format");
  format.replace(format.find("print fmt:"), std::string::npos,
                 "print fmt: \"prev_pid=%d prev_state=%ld next_pid=%d\", REC->prev_pid, "
                 "REC->prev_state, REC->next_pid\n");
  const std::string path = WritePingPong(format, "plain_state");
  SyscallTable syscalls;
  auto analyzed = AnalyzeTrace(path, syscalls);
  const auto& notes = analyzed->model.trace.notes;
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(), [](const std::string& n) {
    return n.find("prev_state letters could not be read") != std::string::npos;
  })) << ::testing::PrintToString(notes);
  EXPECT_EQ(analyzed->model.trace.events, 4u);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace cstool
