// The v7 writer (record --compress): a cstool recording rewritten as v7 with zstd or
// zlib chunks gives the byte-identical report of the original, through cstool's reader
// and (zstd, which Debian's libtracecmd supports) through libtracecmd and trace-cmd.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "base/byte_cursor.h"
#include "base/errors.h"
#include "format/compression.h"
#include "format/trace_file_format.h"
#include "format/trace_file_reader.h"
#include "format/trace_file_writer.h"
#include "tests/support/files.h"
#include "tests/support/run_command.h"

namespace cstool {
namespace {

using testing::CommandResult;
using testing::ReadWholeFile;
using testing::RunCommand;

const std::string kFixtures = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/";

// The writer's input, taken back out of a v6 file cstool wrote (layout:
// format/trace_file_format.h); each CPU's pages go to DIR/cpuN.pages. `data_end`, when
// given: where the trace's CPU data end in the file.
TraceFileContents ContentsOfV6(const std::string& file, const std::filesystem::path& dir,
                               uint64_t* data_end = nullptr) {
  const std::string image = ReadWholeFile(file);
  ByteCursor in({reinterpret_cast<const uint8_t*>(image.data()), image.size()}, file);
  TraceFileContents c;
  in.Bytes(tracefile::kTraceDatMagic.size(), "magic");
  in.CString(16, "version");
  in.U8("endian");
  in.U8("long size");
  c.page_size = in.U32("page size");
  in.CString(64, "header_page");
  c.header_page = std::string(in.Bytes(in.U64("size"), "header_page"));
  in.CString(64, "header_event");
  c.header_event = std::string(in.Bytes(in.U64("size"), "header_event"));
  for (uint32_t n = in.U32("ftrace formats"); n > 0; --n)
    c.ftrace_formats.emplace_back(in.Bytes(in.U64("size"), "format"));
  for (uint32_t s = in.U32("systems"); s > 0; --s) {
    EventSystemFormats sys;
    sys.system = std::string(in.CString(4096, "system"));
    for (uint32_t n = in.U32("formats"); n > 0; --n)
      sys.formats.emplace_back(in.Bytes(in.U64("size"), "format"));
    c.systems.push_back(std::move(sys));
  }
  c.kallsyms = std::string(in.Bytes(in.U32("size"), "kallsyms"));
  c.printk_formats = std::string(in.Bytes(in.U32("size"), "printk"));
  c.saved_cmdlines = std::string(in.Bytes(in.U64("size"), "cmdlines"));
  c.cpus.resize(in.U32("cpus"));
  in.Expect(tracefile::kOptionsTag, "options");
  for (int cpu = 0;;) {
    const uint16_t id = in.U16("option");
    if (id == tracefile::kOptionDone) break;
    std::string body(in.Bytes(in.U32("size"), "option"));
    if (id == tracefile::kOptionCpuStat)
      c.cpus[static_cast<size_t>(cpu++)].stats = body.substr(body.find('\n') + 1);
    if (id == tracefile::kOptionTraceClock) c.trace_clock = body;
    if (id == tracefile::kOptionCstoolInfo) c.cstool_info_json = body;
  }
  in.Expect(tracefile::kFlyrecordTag, "flyrecord");
  for (size_t cpu = 0; cpu < c.cpus.size(); ++cpu) {
    const uint64_t offset = in.U64("offset"), size = in.U64("size");
    if (size == 0) continue;
    if (data_end != nullptr) *data_end = std::max(*data_end, offset + size);
    c.cpus[cpu].pages_file = dir / fmt::format("cpu{}.pages", cpu);
    std::ofstream(c.cpus[cpu].pages_file, std::ios::binary).write(image.data() + offset, size);
  }
  return c;
}

// Each CPU's pages as compressed chunks of up to 64 pages, as the recorder writes them.
void CompressPages(TraceFileContents& c, const std::string& algorithm) {
  c.compression = algorithm;
  auto compressor = MakeCompressor(algorithm);
  auto compress = [&](std::vector<CpuTraceData>& cpus) {
    for (CpuTraceData& cpu : cpus) {
      if (cpu.pages_file.empty()) continue;
      const std::string pages = ReadWholeFile(cpu.pages_file.string());
      std::string chunks;
      const size_t step = 64 * size_t{c.page_size};
      for (size_t at = 0; at < pages.size(); at += step)
        AppendChunk(*compressor, std::string_view(pages).substr(at, step), chunks);
      cpu.pages_file += "." + algorithm;
      std::ofstream(cpu.pages_file, std::ios::binary) << chunks;
    }
  };
  compress(c.cpus);
  for (InstanceTraceData& inst : c.instances) compress(inst.cpus);
}

class V7Writer : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("cstool_v7_writer_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The JSON report of `file` with its name taken out.
  static std::string Report(const std::string& file, const char* reader = "auto") {
    CommandResult r =
        RunCommand({CSTOOL_BINARY, "report", file, "--format", "json", "--reader", reader});
    EXPECT_EQ(r.status, 0) << file << ": " << r.err;
    for (size_t at; (at = r.out.find(file)) != std::string::npos;) r.out.erase(at, file.size());
    return r.out;
  }

  std::filesystem::path dir_;
};

TEST_F(V7Writer, CompressedRecordingReportsLikeTheOriginal) {
  const std::string original = kFixtures + "golden_mutex.dat";
  const std::string expected = Report(original);
  ASSERT_GT(expected.size(), 1000u);

  TraceFileContents contents = ContentsOfV6(original, dir_);
  const std::string v6 = (dir_ / "again.v6.dat").string();
  WriteTraceFile(v6, contents);
  EXPECT_EQ(ReadWholeFile(v6), ReadWholeFile(original)) << "the v6 writer is not reproducible";

  for (const char* algorithm : {"zstd", "zlib"}) {
    SCOPED_TRACE(algorithm);
    TraceFileContents c = contents;
    CompressPages(c, algorithm);
    const std::string v7 = (dir_ / fmt::format("{}.dat", algorithm)).string();
    WriteTraceFile(v7, c);
    EXPECT_LT(std::filesystem::file_size(v7) * 4, std::filesystem::file_size(original));
    auto reader = OpenTraceFile(v7);
    EXPECT_STREQ(reader->backend_name(), "fast-v7");
    EXPECT_EQ(reader->file_version(), 7);
    EXPECT_EQ(reader->trace_clock(), OpenTraceFile(original)->trace_clock());
    EXPECT_EQ(Report(v7), expected);
  }
  // trace-cmd's own library reads the zstd file the same (Debian builds it without zlib).
  const std::string zstd = (dir_ / "zstd.dat").string();
  EXPECT_EQ(Report(zstd, "libtracecmd"), expected);
  CommandResult tc = RunCommand({"trace-cmd", "report", "-i", zstd});
  EXPECT_EQ(tc.status, 0) << tc.err;
  CommandResult tc_v6 = RunCommand({"trace-cmd", "report", "-i", original});
  EXPECT_EQ(tc.out.substr(tc.out.find('\n')), tc_v6.out.substr(tc_v6.out.find('\n')))
      << "trace-cmd shows other events in the v7 file";
}

// `trace-cmd convert` copies the options it does not know as they are and writes only the
// buffers it knows: a cstool recording's unfiltered run-time buffer is named in the copy
// (at offsets of the original) but not there. Every such copy reads as the trace without
// that buffer, and the report says so; before, each failed as truncated or corrupt.
TEST_F(V7Writer, ACopyByTraceCmdConvertReadsWithoutCstoolsBuffer) {
  const std::string runtime(tracefile::kUnfilteredRuntimeBuffer);
  TraceFileContents v6 = ContentsOfV6(kFixtures + "golden_mutex.dat", dir_);
  // The buffer's pages: any valid pages do for where the file puts them.
  v6.instances = {{runtime, v6.cpus}};
  TraceFileContents v7 = v6;
  CompressPages(v7, "zstd");
  const std::string from_v6 = (dir_ / "from.v6.dat").string();
  const std::string from_v7 = (dir_ / "from.v7.dat").string();
  WriteTraceFile(from_v6, v6);
  WriteTraceFile(from_v7, v7);
  for (const std::string& original : {from_v6, from_v7}) {
    EXPECT_EQ(OpenTraceFile(original)->instance_names(), std::vector<std::string>{runtime});
    EXPECT_TRUE(OpenTraceFile(original)->absent_instance_names().empty());
    EXPECT_NO_THROW(OpenTraceFile(original, {.buffer = runtime}));
  }
  struct Conversion {
    const char* version;
    const char* compression;
  };
  for (const std::string& original : {from_v6, from_v7}) {
    for (const Conversion& to :
         {Conversion{"6", "none"}, Conversion{"7", "none"}, Conversion{"7", "zstd"}}) {
      SCOPED_TRACE(fmt::format("{} to v{} {}", original, to.version, to.compression));
      const std::string copy = (dir_ / "copy.dat").string();
      std::filesystem::remove(copy);
      CommandResult convert =
          RunCommand({"trace-cmd", "convert", "-i", original, "-o", copy, "--file-version",
                      to.version, "--compression", to.compression});
      ASSERT_EQ(convert.status, 0) << convert.err;
      std::unique_ptr<TraceFileReader> reader = OpenTraceFile(copy);
      EXPECT_TRUE(reader->instance_names().empty());
      EXPECT_EQ(reader->absent_instance_names(), std::vector<std::string>{runtime});
      try {
        OpenTraceFile(copy, {.buffer = runtime});
        ADD_FAILURE() << "the absent buffer opened";
      } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()),
                  copy +
                      ": holds none of buffer \"cstool_runtime\"'s data: its option was "
                      "copied by a tool that rewrote the file without it (trace-cmd "
                      "convert does), or the file was cut where the trace's data end");
      }
      const std::string report = Report(copy);
      EXPECT_NE(report.find("the file names the unfiltered run-time buffer (cstool_runtime) but "
                            "holds none of its data"),
                std::string::npos)
          << report;
    }
  }
  // A cut copy is not such a copy: cut a page before the trace's data end, the buffer is
  // still the file's, and the cut is damage; cut right at that end, it is absent.
  const std::string image = ReadWholeFile(from_v6);
  uint64_t data_end = 0;
  std::filesystem::create_directories(dir_ / "cut");
  ContentsOfV6(from_v6, dir_ / "cut", &data_end);
  ASSERT_GT(data_end, 2 * v6.page_size);
  ASSERT_LT(data_end, image.size());
  const std::string cut = (dir_ / "cut.dat").string();
  std::ofstream(cut, std::ios::binary | std::ios::trunc) << image.substr(0, data_end);
  EXPECT_EQ(OpenTraceFile(cut)->absent_instance_names(), std::vector<std::string>{runtime});
  std::ofstream(cut, std::ios::binary | std::ios::trunc)
      << image.substr(0, data_end - v6.page_size);
  EXPECT_THROW(OpenTraceFile(cut), Error);
  std::unique_ptr<TraceFileReader> salvaged = OpenTraceFile(cut, {.salvage = true});
  EXPECT_EQ(salvaged->instance_names(), std::vector<std::string>{runtime});
  EXPECT_TRUE(salvaged->absent_instance_names().empty());
}

TEST_F(V7Writer, ScanChunksStopsAtAChunkCutShort) {
  TraceFileContents c = ContentsOfV6(kFixtures + "golden_mutex.dat", dir_);
  CompressPages(c, "zstd");
  const std::filesystem::path chunks = c.cpus[0].pages_file;
  const std::string whole = ReadWholeFile(chunks.string());
  const ChunkExtent all = ScanChunks(chunks);
  EXPECT_EQ(all.bytes, whole.size());
  ASSERT_GE(all.chunks, 1u);
  std::ofstream(chunks, std::ios::binary | std::ios::trunc) << whole.substr(0, whole.size() - 1);
  const ChunkExtent cut = ScanChunks(chunks);
  EXPECT_EQ(cut.chunks, all.chunks - 1);
  EXPECT_LT(cut.bytes, whole.size() - 1);
}

}  // namespace
}  // namespace cstool
