// The unfiltered run-time buffer beside a pid-filtered trace: its increments reach the
// sink between the top buffer's records, in time order (one at a top record's time after
// it); only those done in another task's context count as such. Files are written with hand-built
// ring-buffer pages and the format texts of a 6.18 kernel (tests/fixtures/tracefs-6.18).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "decode/decode_in_groups_inl.h"
#include "decode/decode_trace.h"
#include "decode/decode_trace_inl.h"
#include "decode/event_decoder.h"
#include "format/trace_file_format.h"
#include "format/trace_file_reader.h"
#include "format/trace_file_writer.h"
#include "tests/support/synthetic_trace.h"
#include "tests/support/tracefs_fixture.h"

namespace cstool {
namespace {

namespace fs = std::filesystem;

using ::cstool::testing::PutAt;
using ::cstool::testing::TracefsFixture;

// One 4 KiB sub-buffer of events at 1 s + `at` ns each, built by `payload`.
class Page {
 public:
  Page() : page_(4096, '\0') { PutAt<uint64_t>(page_, 0, 1'000'000'000); }
  // sched_switch (id 372): `prev` to `next`.
  void Switch(uint32_t at, int prev, int next) {
    std::string p(64, '\0');
    PutAt<uint16_t>(p, 0, 372);
    PutAt<int32_t>(p, 4, prev);
    std::strncpy(p.data() + 8, "task", 15);
    PutAt<int32_t>(p, 24, prev);
    PutAt<int32_t>(p, 28, 120);
    PutAt<int64_t>(p, 32, 1);  // S
    std::strncpy(p.data() + 40, "task", 15);
    PutAt<int32_t>(p, 56, next);
    PutAt<int32_t>(p, 60, 120);
    Add(at, p);
  }
  // sched_stat_runtime (id 363) of `pid`, written while `current` ran.
  void Runtime(uint32_t at, int current, int pid, uint64_t runtime) {
    std::string p(32, '\0');
    PutAt<uint16_t>(p, 0, 363);
    PutAt<int32_t>(p, 4, current);
    PutAt<uint32_t>(p, 8, (5u << 16) | 24u);  // __data_loc comm: 5 bytes at 24
    PutAt<int32_t>(p, 12, pid);
    PutAt<uint64_t>(p, 16, runtime);
    std::memcpy(p.data() + 24, "task", 5);
    Add(at, p);
  }
  // csd_function_entry (id 528) in `current`'s context.
  void Flush(uint32_t at, int current, uint64_t func) {
    std::string p(24, '\0');
    PutAt<uint16_t>(p, 0, 528);
    PutAt<int32_t>(p, 4, current);
    PutAt<uint64_t>(p, 8, func);
    PutAt<uint64_t>(p, 16, 0xffff888102b516f8);
    Add(at, p);
  }
  const std::string& bytes() {
    PutAt<uint64_t>(page_, 8, off_ - 16);  // commit: bytes of event data
    return page_;
  }

 private:
  void Add(uint32_t at, const std::string& payload) {
    PutAt<uint32_t>(page_, off_, ((at - last_) << 5) | static_cast<uint32_t>(payload.size() / 4));
    std::memcpy(page_.data() + off_ + 4, payload.data(), payload.size());
    off_ += 4 + payload.size();
    last_ = at;
  }
  std::string page_;
  size_t off_ = 16;
  uint32_t last_ = 0;
};

// What reached the sink, in order: "switch@ns", "runtime@ns pid", "unfiltered@ns pid".
struct Sequence : EventSink {
  std::vector<std::string> seen;
  void PushSchedSwitch(const SchedSwitch& e) override {
    seen.push_back("switch@" + std::to_string(e.c.ts - 1'000'000'000));
  }
  void PushSchedStatRuntime(const SchedStatRuntime& e) override {
    seen.push_back("runtime@" + std::to_string(e.c.ts - 1'000'000'000) + " " +
                   std::to_string(e.pid));
  }
  void PushUnfilteredRuntime(const SchedStatRuntime& e) override {
    seen.push_back("unfiltered@" + std::to_string(e.c.ts - 1'000'000'000) + " " +
                   std::to_string(e.pid));
  }
  void PushUnfilteredWakelistFlush(const CsdFunctionEntry& e) override {
    seen.push_back("flush@" + std::to_string(e.c.ts - 1'000'000'000) + " cpu" +
                   std::to_string(e.c.cpu));
  }
};

// A v6 file in `dir`: switches on each CPU and an increment in the top buffer, four
// increments in the unfiltered one (two of them self-accounted: what ran, for WAITED
// BEHIND), one of which has the time of a switch on the other CPU.
fs::path WriteFileWithUnfilteredRuntime(const fs::path& dir) {
  Page top0, top1, unfiltered0, unfiltered1;
  top0.Switch(0, 0, 101);
  top0.Runtime(3'000, 101, 101, 3'000);  // 101's own: in the filtered trace
  top0.Switch(5'000, 101, 0);
  top1.Switch(2'000, 0, 102);
  top1.Switch(4'000, 102, 0);
  unfiltered0.Runtime(3'000, 101, 101, 3'000);      // the same one again (the analysis skips it)
  unfiltered0.Runtime(4'000, 500, 101, 1'000);      // by 500's wakeup on CPU 0: handed on
  unfiltered0.Flush(4'500, 0, 0xffffffff813b4440);  // CPU 0's idle task flushes its wakelist
  unfiltered1.Runtime(1'000, 500, 500, 9'000);      // 500's own: it ran on CPU 1
  unfiltered1.Runtime(5'000, 600, 102, 3'000);      // by 600 on CPU 1, at the switch's time
  const std::vector<std::pair<std::string, std::string>> pages = {{"top0", top0.bytes()},
                                                                  {"top1", top1.bytes()},
                                                                  {"unf0", unfiltered0.bytes()},
                                                                  {"unf1", unfiltered1.bytes()}};
  for (const auto& [name, bytes] : pages) std::ofstream(dir / name, std::ios::binary) << bytes;

  TraceFileContents c;
  c.header_page = TracefsFixture("header_page");
  c.header_event = TracefsFixture("header_event");
  c.systems = {
      {"sched",
       {TracefsFixture("sched_switch.format"), TracefsFixture("sched_stat_runtime.format")}},
      {"csd", {TracefsFixture("csd_function_entry.format")}}};
  c.trace_clock = "[mono]\n";
  c.cpus = {{"", dir / "top0"}, {"", dir / "top1"}};
  c.instances = {
      {std::string(tracefile::kUnfilteredRuntimeBuffer), {{"", dir / "unf0"}, {"", dir / "unf1"}}}};
  fs::path file = dir / "trace.dat";
  WriteTraceFile(file, c);
  return file;
}

TEST(UnfilteredRuntime, ItsIncrementsComeInTimeOrderBetweenTheTopBuffersRecords) {
  const fs::path dir =
      fs::temp_directory_path() / ("cstool-unfiltered-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path file = WriteFileWithUnfilteredRuntime(dir);
  auto reader = OpenTraceFile(file.string());
  auto unfiltered =
      OpenTraceFile(file.string(), {.buffer = std::string(tracefile::kUnfilteredRuntimeBuffer)});
  Sequence sink;
  const DecodeStats st = DecodeTrace(*reader, sink, {.unfiltered_runtime = unfiltered.get()});
  EXPECT_EQ(sink.seen, (std::vector<std::string>{
                           "switch@0", "unfiltered@1000 500", "switch@2000", "runtime@3000 101",
                           "unfiltered@3000 101", "switch@4000", "unfiltered@4000 101",
                           "flush@4500 cpu0", "switch@5000", "unfiltered@5000 102"}));
  EXPECT_EQ(st.events, 5u) << "the top buffer's records alone";
  EXPECT_EQ(st.unfiltered_runtime_events, 2u);
  EXPECT_EQ(st.unfiltered_other_events, 1u);  // the flush
  EXPECT_EQ(st.unfiltered_runtime_lost, 0u);

  // The same with the decoding on a thread of its own (report -j).
  EventDecoder decoder(reader->tep());
  Sequence threaded;
  const DecodeStats st_threaded =
      DecodeTraceOnThread(*reader, decoder, threaded, {.unfiltered_runtime = unfiltered.get()});
  EXPECT_EQ(threaded.seen, sink.seen);
  EXPECT_EQ(st_threaded.unfiltered_runtime_events, 2u);

  // And with each CPU decoded by a thread of its own (report -j 3): the unfiltered
  // increment at 4000 (merged with CPU 0's share) still comes after CPU 1's switch of the
  // same time.
  Sequence grouped;
  const DecodeStats st_grouped =
      DecodeTraceInGroups(*reader, decoder, grouped, {.unfiltered_runtime = unfiltered.get()}, 2);
  EXPECT_EQ(grouped.seen, sink.seen);
  EXPECT_EQ(st_grouped.unfiltered_runtime_events, 2u);
  EXPECT_EQ(st_grouped.unfiltered_other_events, 1u);
  EXPECT_EQ(st_grouped.events, 5u);
  fs::remove_all(dir);
}

// `trace-cmd convert` copies cstool's option into a v7 file whose layout its offsets do
// not describe: cstool's readers ignore it there, and read the rest.
TEST(UnfilteredRuntime, ABufferOptionCopiedIntoAnotherLayoutIsIgnored) {
  const fs::path dir =
      fs::temp_directory_path() / ("cstool-unfiltered-convert-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path v6 = WriteFileWithUnfilteredRuntime(dir);
  const fs::path v7 = dir / "trace.v7.dat";
  ASSERT_TRUE(ConvertToV7Zstd(v6.string(), v7.string())) << v6 << ": install trace-cmd (make deps)";
  auto reader = OpenTraceFile(v7.string());
  EXPECT_EQ(reader->file_version(), 7);
  EXPECT_TRUE(reader->instance_names().empty());
  Sequence sink;
  const DecodeStats st = DecodeTrace(*reader, sink);
  EXPECT_EQ(sink.seen, (std::vector<std::string>{"switch@0", "switch@2000", "runtime@3000 101",
                                                 "switch@4000", "switch@5000"}));
  EXPECT_EQ(st.events, 5u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace cstool
