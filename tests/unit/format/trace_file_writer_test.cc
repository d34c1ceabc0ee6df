// The writer is tested without tracefs: real format texts captured from a 6.18
// kernel (tests/fixtures/tracefs-6.18) and a hand-built ring-buffer page.
#include "format/trace_file_writer.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "base/errors.h"
#include "format/compression.h"
#include "format/trace_file_format.h"
#include "format/trace_file_reader.h"
#include "model/recording_info.h"
#include "tests/support/tracefs_fixture.h"

namespace cstool {
namespace {

namespace fs = std::filesystem;

using ::cstool::testing::PutAt;
using ::cstool::testing::TracefsFixture;

// One 4 KiB sub-buffer with two sched_switch events (id 372 in the fixture format).
std::string SchedSwitchPage() {
  std::string page(4096, '\0');
  PutAt<uint64_t>(page, 0, 1'000'000'000);  // page timestamp: 1 s
  size_t off = 16;
  auto event = [&](uint32_t delta, const char* prev, int prev_pid, long state, const char* next,
                   int next_pid) {
    constexpr uint32_t kPayload = 64;
    PutAt<uint32_t>(page, off, (delta << 5) | (kPayload / 4));  // type_len = words
    size_t p = off + 4;
    PutAt<uint16_t>(page, p + 0, 372);  // common_type
    PutAt<int32_t>(page, p + 4, prev_pid);
    std::strncpy(page.data() + p + 8, prev, 15);
    PutAt<int32_t>(page, p + 24, prev_pid);
    PutAt<int32_t>(page, p + 28, 120);
    PutAt<int64_t>(page, p + 32, state);
    std::strncpy(page.data() + p + 40, next, 15);
    PutAt<int32_t>(page, p + 56, next_pid);
    PutAt<int32_t>(page, p + 60, 120);
    off += 4 + kPayload;
  };
  event(0, "alpha", 101, 1, "beta", 102);
  event(2000, "beta", 102, 0, "alpha", 101);
  PutAt<uint64_t>(page, 8, off - 16);  // commit: bytes of event data
  return page;
}

class TraceFileWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("cstool-writer-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    pages_ = dir_ / "cpu0.pages";
    std::ofstream(pages_, std::ios::binary) << SchedSwitchPage();
  }
  void TearDown() override { fs::remove_all(dir_); }

  TraceFileContents Contents() {
    TraceFileContents c;
    c.header_page = TracefsFixture("header_page");
    c.header_event = TracefsFixture("header_event");
    c.systems = {{"sched", {TracefsFixture("sched_switch.format")}}};
    c.saved_cmdlines = "101 alpha\n102 beta\n";
    c.trace_clock = "local global [mono] mono_raw\n";
    c.cpus.resize(2);
    c.cpus[0].stats = "entries: 0\noverrun: 0\n";
    c.cpus[0].pages_file = pages_;
    c.cpus[1].stats = "entries: 0\noverrun: 0\n";
    RecordingInfo info;
    info.tool_version = "test";
    info.trace_clock = "mono";
    info.cpus = {{0, 2, 1, 136, 0, 0, 0, 0}};
    c.cstool_info_json = nlohmann::json(info).dump();
    return c;
  }

  // The fixture's page as one zstd chunk of a v7 file's CPU data, in a file.
  fs::path ZstdChunkFile() {
    const fs::path chunk = dir_ / "cpu0.chunk";
    std::unique_ptr<Compressor> zstd = MakeCompressor("zstd");
    std::string out;
    AppendChunk(*zstd, SchedSwitchPage(), out);
    std::ofstream(chunk, std::ios::binary) << out;
    return chunk;
  }

  fs::path dir_;
  fs::path pages_;
};

TEST_F(TraceFileWriterTest, OptionsCarryCpuStatsClockAndRecordingInfo) {
  fs::path out = dir_ / "out.dat";
  WriteTraceFile(out, Contents());
  EXPECT_FALSE(fs::exists(out.string() + ".tmp"));
  EXPECT_EQ(fs::file_size(out) % 4096, 0u);

  // Read back through the report's reader: CPUSTAT per CPU, the clock, the metadata.
  auto reader = OpenTraceFile(out.string());
  ASSERT_EQ(reader->cpu_stats().size(), 2u);
  EXPECT_EQ(reader->cpu_stats().at(0).entries, 0u);
  EXPECT_EQ(reader->cpu_stats().count(1), 1u);
  EXPECT_EQ(reader->trace_clock(), "mono");
  ASSERT_TRUE(reader->recording_info().has_value());
  const RecordingInfo& info = *reader->recording_info();
  EXPECT_EQ(info.tool_version, "test");
  ASSERT_EQ(info.cpus.size(), 1u);
  EXPECT_EQ(info.cpus[0].events, 2u);
}

// The saved cmdlines name a pid no event named, in v6 and v7 and through libtracecmd;
// a pid's first line counts. Asked many times over: the first lookups search the text,
// the later ones an index of it, with the same answers.
TEST_F(TraceFileWriterTest, SavedCmdlinesNameAPid) {
  const fs::path chunk = ZstdChunkFile();
  for (const char* compression : {"", "zstd"}) {
    SCOPED_TRACE(*compression ? compression : "v6");
    TraceFileContents c = Contents();
    c.saved_cmdlines = "101 alpha\n102 beta\n1010 delta\n-1 minus\n101 gamma\n7 last";
    c.compression = compression;
    c.cpus[0].pages_file = c.compression.empty() ? pages_ : chunk;
    const fs::path out = dir_ / "cmdlines.dat";
    WriteTraceFile(out, c);
    auto reader = OpenTraceFile(out.string());
    for (int round = 0; round < 20; ++round) {
      SCOPED_TRACE(round);
      EXPECT_EQ(reader->SavedComm(101), "alpha");
      EXPECT_EQ(reader->SavedComm(102), "beta");
      EXPECT_EQ(reader->SavedComm(1010), "delta");
      EXPECT_EQ(reader->SavedComm(-1), "minus");
      EXPECT_EQ(reader->SavedComm(7), "last");  // no newline after the last line
      EXPECT_EQ(reader->SavedComm(10), "");     // no prefix match
      EXPECT_EQ(reader->SavedComm(103), "");
    }
    auto library = OpenTraceFile(out.string(), {.backend = ReaderBackend::kLibTracecmd});
    EXPECT_EQ(library->SavedComm(102), "beta");
    EXPECT_EQ(library->SavedComm(10), "");
  }
}

TEST_F(TraceFileWriterTest, TraceCmdReportReadsTheFileWithoutComplaints) {
  if (::system("command -v trace-cmd >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "trace-cmd is not installed";
  fs::path out = dir_ / "report.dat";
  WriteTraceFile(out, Contents());
  fs::path err = dir_ / "report.err";
  std::string cmd = "trace-cmd report -i '" + out.string() + "' 2>'" + err.string() + "'";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string text;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) text.append(buf, n);
  int status = ::pclose(p);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << text;
  std::ifstream e(err);
  std::string errors((std::istreambuf_iterator<char>(e)), std::istreambuf_iterator<char>());
  EXPECT_EQ(errors, "") << "trace-cmd complained";

  int switches = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.find("sched_switch:") != std::string::npos) ++switches;
  EXPECT_EQ(switches, 2) << text;
  EXPECT_NE(text.find("alpha:101"), std::string::npos) << text;
  EXPECT_NE(text.find("beta:102"), std::string::npos) << text;
  EXPECT_NE(text.find("1.000002"), std::string::npos) << text;  // second event: +2 us
}

// The records of `cpu` in `reader`, counted (loss markers aside).
int CountRecords(TraceFileReader& reader, int cpu) {
  int n = 0;
  auto stream = reader.OpenCpu(cpu);
  for (auto batch = stream->NextBatch(); !batch.empty(); batch = stream->NextBatch())
    for (const RawRecord& r : batch) n += r.is_loss() ? 0 : 1;
  return n;
}

TEST_F(TraceFileWriterTest, AnInstanceIsStoredBesideTheTopBufferForCstoolsReadersOnly) {
  // The top buffer holds the page on CPU 0, the instance "runtime" on CPU 1; v6 with the
  // pages in place, v7 with them in a zstd chunk.
  const fs::path chunk = ZstdChunkFile();
  for (const char* compression : {"", "zstd"}) {
    SCOPED_TRACE(*compression ? compression : "v6");
    TraceFileContents c = Contents();
    c.compression = compression;
    const fs::path pages = c.compression.empty() ? pages_ : chunk;
    c.cpus[0].pages_file = pages;
    c.instances.push_back({"runtime", std::vector<CpuTraceData>(2)});
    c.instances[0].cpus[1].pages_file = pages;
    const fs::path out = dir_ / "instance.dat";
    WriteTraceFile(out, c);

    auto top = OpenTraceFile(out.string(), {.backend = ReaderBackend::kFast});
    EXPECT_EQ(top->buffer_name(), "");
    EXPECT_EQ(top->instance_names(), std::vector<std::string>{"runtime"});
    EXPECT_EQ(CountRecords(*top, 0), 2);
    EXPECT_EQ(CountRecords(*top, 1), 0);
    auto instance =
        OpenTraceFile(out.string(), {.backend = ReaderBackend::kFast, .buffer = "runtime"});
    EXPECT_EQ(instance->buffer_name(), "runtime");
    ASSERT_EQ(instance->cpus(), 2);
    EXPECT_EQ(CountRecords(*instance, 0), 0);
    EXPECT_EQ(CountRecords(*instance, 1), 2);
    EXPECT_EQ(instance->trace_clock(), "mono");

    // trace-cmd's library sees the top buffer alone, and trace-cmd reads it, filters too.
    auto lib = OpenTraceFile(out.string(), {.backend = ReaderBackend::kLibTracecmd});
    EXPECT_TRUE(lib->instance_names().empty());
    EXPECT_EQ(CountRecords(*lib, 0), 2);
    if (::system("command -v trace-cmd >/dev/null 2>&1") == 0) {
      const std::string cmd = "trace-cmd report -F sched/sched_switch -i '" + out.string() +
                              "' 2>&1 | grep -c sched_switch:";
      FILE* p = ::popen(cmd.c_str(), "r");
      ASSERT_NE(p, nullptr);
      char buf[256] = {};
      const size_t n = std::fread(buf, 1, sizeof buf - 1, p);
      const int status = ::pclose(p);
      EXPECT_EQ(std::string(buf, n), "2\n");
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
  }
}

TEST_F(TraceFileWriterTest, FailureLeavesNothingAndNamesThePath) {
  fs::path out = dir_ / "no-such-dir" / "out.dat";
  try {
    WriteTraceFile(out, Contents());
    FAIL() << "no error";
  } catch (const Error& e) {
    // The name given, not the temporary file's.
    EXPECT_NE(std::string(e.what()).find("cannot create '" + out.string() + "': No such file"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(TraceFileWriterTest, DiskFullIsAClearErrorAndRemovesTheTempFile) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "/dev/full is not available";
  // A symlink named like the temp file makes the writer write into /dev/full.
  fs::path out = dir_ / "full.dat";
  fs::create_symlink("/dev/full", out.string() + ".tmp");
  try {
    WriteTraceFile(out, Contents());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("No space left"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(fs::symlink_status(out.string() + ".tmp")));
}

}  // namespace
}  // namespace cstool
