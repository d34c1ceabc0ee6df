#include "format/trace_file_reader.h"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "base/errors.h"
#include "decode/decode_trace.h"
#include "decode/event_decoder.h"
#include "tests/support/child_faults.h"
#include "tests/support/decode_stats.h"
#include "tests/support/synthetic_trace.h"

namespace cstool {
namespace {

const std::string kFixtures = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/";

// Folds every decoded event into a checksum of (ts, cpu, kind, pid) and counts kinds.
class ChecksumSink : public EventSink {
 public:
  uint64_t sum = 1469598103934665603ull;
  std::map<std::string, uint64_t> kinds;
  uint64_t lost_markers = 0;
  std::vector<std::string> switch_states;

  void Mix(const EventCommon& c, uint64_t kind) {
    for (uint64_t v : {static_cast<uint64_t>(c.ts), static_cast<uint64_t>(c.cpu), kind,
                       static_cast<uint64_t>(c.pid)}) {
      sum ^= v;
      sum *= 1099511628211ull;
    }
  }
  void PushSchedSwitch(const SchedSwitch& e) override {
    Mix(e.c, 1);
    ++kinds["switch"];
    EXPECT_FALSE(e.prev_comm.empty());
  }
  void PushSchedWakeup(const SchedWakeup& e) override {
    Mix(e.c, 2 + static_cast<uint64_t>(e.kind));
    ++kinds["wakeup"];
  }
  void PushSchedMigrateTask(const SchedMigrateTask& e) override {
    Mix(e.c, 6);
    ++kinds["migrate"];
    EXPECT_FALSE(e.comm.empty());
  }
  void PushSchedProcessFork(const SchedProcessFork& e) override {
    Mix(e.c, 7);
    ++kinds["fork"];
    EXPECT_FALSE(e.child_comm.empty());
  }
  void PushTaskNewtask(const TaskNewtask& e) override { Mix(e.c, 8), ++kinds["newtask"]; }
  void PushTaskRename(const TaskRename& e) override { Mix(e.c, 9), ++kinds["rename"]; }
  void PushSchedProcessExec(const SchedProcessExec& e) override {
    Mix(e.c, 10);
    ++kinds["exec"];
    EXPECT_FALSE(e.filename.empty());
  }
  void PushSchedProcessExit(const SchedProcessExit& e) override { Mix(e.c, 11), ++kinds["exit"]; }
  void PushSchedProcessFree(const SchedProcessFree& e) override { Mix(e.c, 12), ++kinds["free"]; }
  void PushIrqHandlerEntry(const IrqHandlerEntry& e) override {
    Mix(e.c, 13);
    ++kinds["irq_entry"];
    EXPECT_FALSE(e.name.empty());
  }
  void PushIrqHandlerExit(const IrqHandlerExit& e) override { Mix(e.c, 14), ++kinds["irq_exit"]; }
  void PushSoftirq(const Softirq& e) override {
    Mix(e.c, 15 + static_cast<uint64_t>(e.phase));
    ++kinds["softirq"];
    EXPECT_FALSE(e.name.empty());
  }
  void PushIrqVector(const IrqVector& e) override {
    Mix(e.c, e.entry ? 18 : 19);
    ++kinds["vector:" + std::string(e.name)];
  }
  void PushNmiHandler(const NmiHandler& e) override { Mix(e.c, 20), ++kinds["nmi"]; }
  void PushSysEnter(const SysEnter& e) override { Mix(e.c, 21), ++kinds["sys_enter"]; }
  void PushSysExit(const SysExit& e) override { Mix(e.c, 22), ++kinds["sys_exit"]; }
  void PushPageFault(const PageFault& e) override { Mix(e.c, 23), ++kinds["page_fault"]; }
  void PushLostEvents(const LostEvents& e) override {
    EventCommon c;
    c.ts = e.ts;
    c.cpu = e.cpu;
    Mix(c, 24);
    ++lost_markers;
  }
  void PushOtherEvent(const EventCommon& c, int type) override {
    Mix(c, 100 + static_cast<uint64_t>(type));
    ++kinds["other"];
  }
};

struct Replayed {
  DecodeStats stats;
  ChecksumSink sink;
  std::string backend;
};

Replayed ReplayFile(const std::string& file, ReaderBackend backend) {
  ReaderOptions opt;
  opt.backend = backend;
  auto reader = OpenTraceFile(file, opt);
  Replayed out;
  out.backend = reader->backend_name();
  out.stats = DecodeTrace(*reader, out.sink);
  return out;
}

// Both replays saw the same records, decoded to the same events, with the same losses.
void ExpectSameReplay(const Replayed& a, const Replayed& b) {
  EXPECT_GT(a.stats.events, 1000u);
  testing::ExpectSameDecodeStats(a.stats, b.stats);
  EXPECT_EQ(a.sink.kinds, b.sink.kinds);
  EXPECT_EQ(a.sink.sum, b.sink.sum);
  EXPECT_EQ(a.sink.lost_markers, b.sink.lost_markers);
}

TEST(TraceFileReader, FastPathMatchesLibtracecmdOnV6Fixture) {
  const std::string file = kFixtures + "small_v6.dat";
  Replayed fast = ReplayFile(file, ReaderBackend::kFast);
  Replayed lib = ReplayFile(file, ReaderBackend::kLibTracecmd);
  EXPECT_EQ(fast.backend, "fast-v6");
  EXPECT_EQ(lib.backend, "libtracecmd");
  ExpectSameReplay(fast, lib);
  EXPECT_TRUE(fast.stats.anomalies.empty());
  EXPECT_GT(fast.sink.kinds["switch"], 50u);
  EXPECT_GT(fast.sink.kinds["sys_enter"], 100u);
}

// The own v7 parser reads trace-cmd's v7 files, compressed (zstd) or not, exactly as
// libtracecmd does: same records, same decoded events, same losses.
TEST(TraceFileReader, FastPathMatchesLibtracecmdOnV7Fixtures) {
  for (const char* name : {"small_v7_zstd.dat", "small_v7_none.dat"}) {
    SCOPED_TRACE(name);
    const std::string file = kFixtures + name;
    Replayed fast = ReplayFile(file, ReaderBackend::kAuto);
    Replayed lib = ReplayFile(file, ReaderBackend::kLibTracecmd);
    EXPECT_EQ(fast.backend, "fast-v7");
    EXPECT_EQ(lib.backend, "libtracecmd");
    ExpectSameReplay(fast, lib);
    // And the same as the v6 conversion of the same data.
    ExpectSameReplay(fast, ReplayFile(kFixtures + "small_v6.dat", ReaderBackend::kFast));
  }
}

// Every fixture holds the same recording: the instance "cstool-fixture-N" of a 2-CPU
// machine, trace clock "local", CPU 0 overran (898 events) and CPU 1 did not.
TEST(TraceFileReader, HeaderMetadataOfTheFixtures) {
  for (const char* name : {"small_v6.dat", "small_v7_zstd.dat", "small_v7_none.dat"}) {
    for (ReaderBackend b : {ReaderBackend::kFast, ReaderBackend::kLibTracecmd}) {
      auto r = OpenTraceFile(kFixtures + name, {b, ""});
      SCOPED_TRACE(std::string(name) + " " + r->backend_name());
      EXPECT_EQ(r->file_version(), std::string(name) == "small_v6.dat" ? 6 : 7);
      EXPECT_EQ(r->cpus(), 2);
      EXPECT_EQ(r->long_size(), 8);
      EXPECT_EQ(r->page_size(), 4096u);
      EXPECT_EQ(r->trace_clock(), "local");
      EXPECT_EQ(r->buffer_name().rfind("cstool-fixture-", 0), 0u);
      ASSERT_EQ(r->cpu_stats().size(), 2u);
      EXPECT_EQ(r->cpu_stats().at(0).overrun, 898u);
      EXPECT_EQ(r->cpu_stats().at(1).overrun, 0u);
      EXPECT_FALSE(r->recording_info().has_value());
    }
  }
}

TEST(TraceFileReader, NamedBufferOfV7) {
  for (ReaderBackend b : {ReaderBackend::kFast, ReaderBackend::kLibTracecmd}) {
    SCOPED_TRACE(static_cast<int>(b));
    EXPECT_THROW(OpenTraceFile(kFixtures + "small_v7_zstd.dat", {b, "no-such-buffer"}), Error);
  }
  auto top = OpenTraceFile(kFixtures + "small_v7_zstd.dat", {ReaderBackend::kFast, ""});
  auto named =
      OpenTraceFile(kFixtures + "small_v7_zstd.dat", {ReaderBackend::kFast, top->buffer_name()});
  EXPECT_EQ(named->buffer_name(), top->buffer_name());
}

// trace-cmd record -B: a top-level buffer with data and an instance "wakeups" (see
// tests/fixtures/README.md). Both CPU tables list CPU 0 alone; the CPU count is the file's.
TEST(TraceFileReader, EitherBufferOfATraceCmdFileIsReadByName) {
  const std::string file = kFixtures + "two_buffers_v7.dat";
  for (ReaderBackend b : {ReaderBackend::kFast, ReaderBackend::kLibTracecmd}) {
    SCOPED_TRACE(static_cast<int>(b));
    for (const auto& [buffer, events] :
         {std::pair<std::string, uint64_t>{"", 367}, {"wakeups", 413}}) {
      ReaderOptions opt;
      opt.backend = b;
      opt.buffer = buffer;
      auto reader = OpenTraceFile(file, opt);
      EXPECT_EQ(reader->buffer_name(), buffer);
      EXPECT_EQ(reader->instance_names(), std::vector<std::string>{"wakeups"});
      EXPECT_EQ(reader->cpus(), 2);
      ChecksumSink sink;
      EXPECT_EQ(DecodeTrace(*reader, sink).events, events);
    }
    ReaderOptions opt;
    opt.backend = b;
    opt.buffer = "other";
    try {
      OpenTraceFile(file, opt);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()),
                file + ": no buffer instance named \"other\" (the file has \"wakeups\")");
      EXPECT_EQ(e.code(), ExitCode::kUsage);
    }
  }
}

TEST(TraceFileReader, LossesOfOverwrittenBufferAreReported) {
  Replayed fast = ReplayFile(kFixtures + "small_v6.dat", ReaderBackend::kFast);
  // CPU 0 overran (see the fixture's CPUSTAT); its first page says events were lost.
  EXPECT_GE(fast.stats.lost_gaps_per_cpu[0], 1u);
  EXPECT_EQ(fast.stats.lost_gaps_per_cpu[1], 0u);
  EXPECT_EQ(fast.sink.lost_markers, fast.stats.lost_gaps_per_cpu[0]);
}

TEST(TraceFileReader, SidecarRecordingInfoIsLoaded) {
  auto dir =
      std::filesystem::temp_directory_path() / ("cstool_sidecar_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "t.dat").string();
  std::filesystem::copy_file(kFixtures + "small_v6.dat", file,
                             std::filesystem::copy_options::overwrite_existing);
  RecordingInfo info;
  info.tool_version = "9.9";
  info.target_pids = {42};
  { std::ofstream(file + ".cstool.json") << nlohmann::json(info).dump(); }
  for (ReaderBackend b : {ReaderBackend::kFast, ReaderBackend::kLibTracecmd}) {
    auto r = OpenTraceFile(file, {b, ""});
    ASSERT_TRUE(r->recording_info().has_value());
    EXPECT_EQ(r->recording_info()->tool_version, "9.9");
  }
  { std::ofstream(file + ".cstool.json") << "{not json"; }
  try {
    OpenTraceFile(file);
    ADD_FAILURE() << "no error for a bad sidecar";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(".cstool.json"), std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

// A recording cut short (--max-size, a full disk) holds every CPU's events only up to
// the first page a CPU could not write: the streams end there, on every CPU, whichever
// backend reads.
TEST(TraceFileReader, ACutRecordingEndsEveryCpuAtItsFirstUnwrittenPage) {
  auto dir = std::filesystem::temp_directory_path() / ("cstool_cut_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "t.dat").string();
  std::filesystem::copy_file(kFixtures + "small_v6.dat", file,
                             std::filesystem::copy_options::overwrite_existing);
  auto all_ts = [&](ReaderBackend b) {
    auto r = OpenTraceFile(file, {b, ""});
    std::vector<int64_t> ts;
    for (int cpu = 0; cpu < r->cpus(); ++cpu) {
      auto stream = r->OpenCpu(cpu);
      for (auto batch = stream->NextBatch(); !batch.empty(); batch = stream->NextBatch())
        for (const RawRecord& rec : batch)
          if (!rec.is_loss()) ts.push_back(rec.ts);
    }
    std::sort(ts.begin(), ts.end());
    return ts;
  };
  const std::vector<int64_t> whole = all_ts(ReaderBackend::kFast);
  ASSERT_GT(whole.size(), 100u);
  const int64_t cut = whole[whole.size() / 2];
  RecordingInfo info;
  info.cpus = {{.cpu = 0},
               {.cpu = 1, .unwritten_from_ts = cut + 1000},
               {.cpu = 2, .unwritten_from_ts = cut}};
  EXPECT_EQ(info.CompleteUntilTs(), cut);
  { std::ofstream(file + ".cstool.json") << nlohmann::json(info).dump(); }
  const auto before_cut =
      static_cast<size_t>(std::lower_bound(whole.begin(), whole.end(), cut) - whole.begin());
  for (ReaderBackend b : {ReaderBackend::kFast, ReaderBackend::kLibTracecmd}) {
    const std::vector<int64_t> kept = all_ts(b);
    EXPECT_EQ(kept.size(), before_cut);
    EXPECT_TRUE(std::equal(kept.begin(), kept.end(), whole.begin()));
  }
  std::filesystem::remove_all(dir);
}

// Pages larger than the reader's 256 KiB runs are read whole (each run holds a page).
TEST(TraceFileReader, PagesLargerThanAReadRun) {
  const std::string events = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/formats/events";
  SyntheticTrace t(events, 2, 1u << 20);
  const int se = t.AddEvent("raw_syscalls", "sys_enter");
  const auto r = t.NewRecord(se, 100).Set("id", 1);
  for (uint64_t i = 0; i < 100000; ++i) t.Append(static_cast<int>(i % 2), 1000 + i, r);
  const std::string file = (std::filesystem::temp_directory_path() /
                            ("cstool_big_pages_" + std::to_string(::getpid()) + ".dat"))
                               .string();
  t.Write(file);
  Replayed fast = ReplayFile(file, ReaderBackend::kFast);
  Replayed lib = ReplayFile(file, ReaderBackend::kLibTracecmd);
  std::filesystem::remove(file);
  EXPECT_EQ(fast.stats.events, 100000u);
  ExpectSameReplay(fast, lib);
}

// Each CPU's share of the read budget is cut to whole pages: with 3 or 6 CPUs the share
// (174762 or 87381 bytes) is no multiple of a page, and a run that ended mid-page made
// every later run of that CPU start mid-page.
TEST(TraceFileReader, ReadRunsAreWholePagesWhateverTheCpuCount) {
  const std::string events = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/formats/events";
  for (int cpus : {3, 6}) {
    SCOPED_TRACE(cpus);
    SyntheticTrace t(events, cpus);
    const int se = t.AddEvent("raw_syscalls", "sys_enter");
    const auto r = t.NewRecord(se, 100).Set("id", 1);
    const uint64_t n = 12000u * static_cast<uint64_t>(cpus);  // over 600 KiB per CPU
    for (uint64_t i = 0; i < n; ++i) t.Append(static_cast<int>(i % cpus), 1000 + i, r);
    const std::string file =
        (std::filesystem::temp_directory_path() /
         ("cstool_odd_cpus_" + std::to_string(::getpid()) + "_" + std::to_string(cpus) + ".dat"))
            .string();
    t.Write(file);
    Replayed fast = ReplayFile(file, ReaderBackend::kFast);
    Replayed lib = ReplayFile(file, ReaderBackend::kLibTracecmd);
    std::filesystem::remove(file);
    EXPECT_EQ(fast.stats.events, n);
    ExpectSameReplay(fast, lib);
  }
}

// A format of an event the decoder does not read (the kernel's text, id changed).
constexpr std::string_view kSysEnterReadFormat =
    "name: sys_enter_read\nID: 900\nformat:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
    "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
    "\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;\n"
    "\tfield:char * buf;\toffset:24;\tsize:8;\tsigned:0;\n"
    "\tfield:size_t count;\toffset:32;\tsize:8;\tsigned:0;\n\n"
    "print fmt: \"fd: 0x%08lx, buf: 0x%08lx, count: 0x%08lx\", ((unsigned long)(REC->fd)), "
    "((unsigned long)(REC->buf)), ((unsigned long)(REC->count))\n";

// Switches and sys_enter_read records on two CPUs, `format` as that event's format;
// `with_switches` false leaves the file without any event the decoder reads.
std::string FileWithAnUndecodedEvent(const std::string& name, std::string_view format,
                                     bool with_switches = true) {
  const std::string events = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/formats/events";
  SyntheticTrace t(events, 2);
  const int sw = with_switches ? t.AddEvent("sched", "sched_switch") : -1;
  const int rd = t.AddEventFormat("syscalls", std::string(format));
  for (uint64_t i = 0; i < 2000; ++i) {
    const int cpu = static_cast<int>(i % 2);
    t.Append(cpu, 1000 + 10 * i, t.NewRecord(rd, 100 + cpu).Set("fd", 3).Set("count", 4096));
    if (sw >= 0)
      t.Append(cpu, 1005 + 10 * i,
               t.NewRecord(sw, 100 + cpu)
                   .SetString("prev_comm", "a")
                   .Set("prev_pid", 100 + cpu)
                   .Set("prev_state", 1)
                   .SetString("next_comm", "b")
                   .Set("next_pid", 200 + cpu));
  }
  const std::string file =
      (std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()) + ".dat"))
          .string();
  t.Write(file);
  return file;
}

// The fast reader of `file` as a report opens it: the decoder's formats parsed whole.
std::unique_ptr<TraceFileReader> OpenForDecoder(const std::string& file) {
  ReaderOptions opt;
  opt.decodes_event = &EventDecoder::Decodes;
  return OpenTraceFile(file, opt);
}

Replayed ReplayDecoding(const std::string& file, ReaderOptions::DecodesEvent decodes) {
  ReaderOptions opt;
  opt.backend = ReaderBackend::kFast;
  opt.decodes_event = std::move(decodes);
  auto reader = OpenTraceFile(file, opt);
  Replayed out;
  out.backend = reader->backend_name();
  out.stats = DecodeTrace(*reader, out.sink);
  return out;
}

// Only the decoder's formats are parsed whole (a file of hundreds of syscall formats spent
// most of its report parsing them); the others are registered by name and ID, so their
// records are named and counted as before.
TEST(TraceFileReader, FormatsOfEventsNotDecodedAreRegisteredByNameAndId) {
  const std::string file = FileWithAnUndecodedEvent("cstool_undecoded", kSysEnterReadFormat);
  auto reader = OpenForDecoder(file);
  tep_event* read = tep_find_event_by_name(reader->tep(), "syscalls", "sys_enter_read");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->id, 900);
  EXPECT_EQ(read->format.nr_fields, 0);             // fields and print format not parsed
  EXPECT_EQ(read->flags & TEP_EVENT_FL_FAILED, 0);  // the stand-in parses cleanly
  tep_event* sw = tep_find_event_by_name(reader->tep(), "sched", "sched_switch");
  ASSERT_NE(sw, nullptr);
  EXPECT_GT(sw->format.nr_fields, 0);
  reader.reset();

  Replayed by_name = ReplayDecoding(file, &EventDecoder::Decodes);
  Replayed whole = ReplayDecoding(file, nullptr);
  Replayed lib = ReplayFile(file, ReaderBackend::kLibTracecmd);
  std::filesystem::remove(file);
  EXPECT_EQ(by_name.stats.events_per_type.at("syscalls:sys_enter_read"), 2000u);
  EXPECT_EQ(by_name.stats.events_per_type.at("sched:sched_switch"), 2000u);
  ExpectSameReplay(by_name, whole);
  ExpectSameReplay(by_name, lib);
}

// Formats the caller vouches for (a report: the running kernel's own text) are parsed
// without the trial child that guards against a damaged format crashing libtraceevent;
// the caller is asked about each format parsed whole, and the decoding is the same.
TEST(TraceFileReader, TrustedFormatsNeedNoTrialChild) {
  const std::string file = FileWithAnUndecodedEvent("cstool_trusted", kSysEnterReadFormat);
  for (const bool trusted : {false, true}) {
    SCOPED_TRACE(trusted ? "trusted" : "not trusted");
    std::vector<std::string> asked;
    ReaderOptions opt;
    opt.backend = ReaderBackend::kFast;
    opt.decodes_event = &EventDecoder::Decodes;
    opt.trusts_format = [&](std::string_view system, std::string_view name, std::string_view text) {
      asked.push_back(fmt::format("{}:{}", system, name));
      EXPECT_TRUE(text.starts_with(fmt::format("name: {}\n", name))) << text;
      return trusted;
    };
    const long faults = testing::ChildMinorFaults();
    auto reader = OpenTraceFile(file, opt);
    if (trusted)
      EXPECT_EQ(testing::ChildMinorFaults(), faults);
    else
      EXPECT_GT(testing::ChildMinorFaults(), faults);
    // Only the decoded format is parsed whole, so only it is asked about.
    EXPECT_EQ(asked, std::vector<std::string>{"sched:sched_switch"});
    tep_event* sw = tep_find_event_by_name(reader->tep(), "sched", "sched_switch");
    ASSERT_NE(sw, nullptr);
    EXPECT_GT(sw->format.nr_fields, 0);
    Replayed replay;
    replay.stats = DecodeTrace(*reader, replay.sink);
    EXPECT_EQ(replay.stats.events_per_type.at("sched:sched_switch"), 2000u);
  }
  std::filesystem::remove(file);
}

// Damage in a format the decoder never reads is no error (as in the printk formats); in
// one it reads, or with every format parsed, it is.
TEST(TraceFileReader, DamageInAFormatNotDecodedIsNoError) {
  std::string damaged(kSysEnterReadFormat);
  const std::string file = FileWithAnUndecodedEvent("cstool_undecoded_damaged", damaged);
  {
    // The print format's first byte after its quote becomes a control byte.
    std::string image;
    {
      std::ifstream in(file, std::ios::binary);
      image.assign(std::istreambuf_iterator<char>(in), {});
    }
    const size_t at = image.find("print fmt: \"fd: 0x%08lx");
    ASSERT_NE(at, std::string::npos);
    image[at + 12] = '\x01';
    std::ofstream(file, std::ios::binary | std::ios::trunc) << image;
  }
  Replayed by_name = ReplayDecoding(file, &EventDecoder::Decodes);
  EXPECT_EQ(by_name.stats.events_per_type.at("syscalls:sys_enter_read"), 2000u);
  try {
    ReplayDecoding(file, nullptr);
    ADD_FAILURE() << "a damaged format parsed whole must be an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("syscalls event format: byte 0x01"), std::string::npos)
        << e.what();
  }
  std::filesystem::remove(file);
}

// A format whose name or ID line is not plain is parsed whole, checks and all; so are all
// formats of a file with none of the decoder's events (its common fields are read there).
TEST(TraceFileReader, FormatsWithoutAPlainNameAndIdAreParsedWhole) {
  std::string odd(kSysEnterReadFormat);
  odd.replace(odd.find("ID: 900"), 7, "ID:  900");
  const std::string file = FileWithAnUndecodedEvent("cstool_undecoded_odd_id", odd);
  const std::string only =
      FileWithAnUndecodedEvent("cstool_undecoded_only", kSysEnterReadFormat, false);
  for (const std::string& f : {file, only}) {
    SCOPED_TRACE(f);
    auto reader = OpenForDecoder(f);
    tep_event* read = tep_find_event_by_name(reader->tep(), "syscalls", "sys_enter_read");
    ASSERT_NE(read, nullptr);
    EXPECT_EQ(read->format.nr_fields, 4);
  }
  std::filesystem::remove(file);
  std::filesystem::remove(only);
}

// Kernel symbols are parsed only when a stack asks for them (trace-cmd stores the whole
// /proc/kallsyms, whose parse took longer than a small file's events); then they resolve
// as libtracecmd's do. v7 decompresses the section only then. (No lookup before the
// load: libtraceevent builds its address map at the first one, and keeps it.)
TEST(TraceFileReader, KernelSymbolsLoadOnlyWhenAsked) {
  constexpr unsigned long long kAddr = 0xffffffff81000138ull;  // syscall_return_via_sysret
  for (const char* name : {"small_v6.dat", "small_v7_zstd.dat", "small_v7_none.dat"}) {
    SCOPED_TRACE(name);
    ReaderOptions opt;
    opt.backend = ReaderBackend::kFast;
    // Not loaded at open (another reader: a lookup would fix its empty address map).
    auto unloaded = OpenTraceFile(kFixtures + name, opt);
    EXPECT_EQ(tep_find_function(unloaded->tep(), kAddr), nullptr);
    auto reader = OpenTraceFile(kFixtures + name, opt);
    reader->LoadKernelSymbols();
    const char* fn = tep_find_function(reader->tep(), kAddr);
    ASSERT_NE(fn, nullptr);
    EXPECT_STREQ(fn, "syscall_return_via_sysret");
    reader->LoadKernelSymbols();  // a second call changes nothing
    EXPECT_STREQ(tep_find_function(reader->tep(), kAddr), "syscall_return_via_sysret");
    opt.backend = ReaderBackend::kLibTracecmd;
    auto lib = OpenTraceFile(kFixtures + name, opt);
    EXPECT_STREQ(tep_find_function(lib->tep(), kAddr), "syscall_return_via_sysret");
  }
}

TEST(TraceFileReader, NotATraceFile) {
  auto path = std::filesystem::temp_directory_path() / "cstool_not_trace.dat";
  { std::ofstream(path) << "hello, this is not a trace file at all"; }
  try {
    OpenTraceFile(path.string());
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a trace.dat file"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos);
  }
  std::filesystem::remove(path);
  EXPECT_THROW(OpenTraceFile("/nonexistent/cstool.dat"), Error);
}

// perf record's file (perf sched record), either byte order: named for what it is.
TEST(TraceFileReader, APerfDataFileIsNamed) {
  auto path = std::filesystem::temp_directory_path() / "cstool_perf.data";
  for (const char* magic : {"PERFILE2", "2ELIFREP"}) {
    { std::ofstream(path) << magic << std::string(96, '\0'); }
    try {
      OpenTraceFile(path.string());
      ADD_FAILURE();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(path.string() + ": a perf.data file (perf record), not "
                                                           "a trace.dat"),
                std::string::npos)
          << e.what();
    }
  }
  std::filesystem::remove(path);
}

TEST(TraceFileReader, CpuStatAndClockParsing) {
  CpuStatOption s;
  ASSERT_TRUE(
      ParseCpuStat("CPU: 3\nentries: 5\noverrun: 7\ncommit overrun: 1\nbytes: 0\n"
                   "dropped events: 2\nread events: 9\n",
                   &s));
  EXPECT_EQ(s.cpu, 3);
  EXPECT_EQ(s.entries, 5u);
  EXPECT_EQ(s.overrun, 7u);
  EXPECT_EQ(s.commit_overrun, 1u);
  EXPECT_EQ(s.dropped, 2u);
  EXPECT_EQ(s.read, 9u);
  EXPECT_FALSE(ParseCpuStat("\nBuffer: foo\n\n", &s));
  std::string name;
  EXPECT_TRUE(ParseCpuStatBufferMarker("\nBuffer: foo\n\n", &name));
  EXPECT_EQ(name, "foo");
  EXPECT_EQ(ParseTraceClock("local global [mono] boot\n"), "mono");
  EXPECT_EQ(ParseTraceClock("boot"), "boot");
}

}  // namespace
}  // namespace cstool
