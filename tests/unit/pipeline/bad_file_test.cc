// Damaged files beyond trace_file_corruption_test.cc (truncation steps, byte flips,
// bad magic): every byte of the header truncated, absurd sizes, CPU data past the end,
// a page whose commit exceeds the page, a v7 file with a broken compression block, and
// `report --salvage` (and `diff --salvage`) reporting what is readable before the damage.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "base/errors.h"
#include "decode/decode_trace.h"
#include "format/trace_file_reader.h"
#include "format/v6_trace_file.h"
#include "pipeline/analyze_trace.h"
#include "tests/support/files.h"
#include "tests/support/run_command.h"
#include "tests/support/sweep.h"

namespace cstool::testing {
namespace {

const std::string kFixtures = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/";

template <typename T>
void Poke(std::string& img, size_t at, T v) {
  ASSERT_LE(at + sizeof(T), img.size());
  std::memcpy(img.data() + at, &v, sizeof(T));
}

class BadFile : public ::testing::Test {
 protected:
  void SetUp() override {
    original_ = ReadWholeFile(kFixtures + "small_v6.dat");
    ASSERT_GT(original_.size(), 100000u);
    path_ = (std::filesystem::temp_directory_path() /
             ("cstool_bad_" + std::to_string(::getpid()) + ".dat"))
                .string();
    V6TraceFile f(kFixtures + "small_v6.dat", {});
    for (const auto& d : f.cpu_data()) data_.push_back(d);
  }
  void TearDown() override { std::filesystem::remove(path_); }

  void Write(const std::string& image) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(image.data(), static_cast<std::streamsize>(image.size()));
  }

  // The error of analysing `image` strictly ("" if it was read), checked to name the
  // file and an offset.
  std::string StrictError(const std::string& image) {
    Write(image);
    try {
      SyscallTable syscalls;
      AnalyzeTrace(path_, syscalls);
      return "";
    } catch (const Error& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find(path_), std::string::npos) << msg;
      EXPECT_NE(msg.find("offset"), std::string::npos) << msg;
      return msg;
    }
  }

  // Byte position of the 16-byte (offset, size) entry of `d` in the CPU tables.
  size_t TableEntryOf(const V6TraceFile::CpuData& d) const {
    char entry[16];
    std::memcpy(entry, &d.offset, 8);
    std::memcpy(entry + 8, &d.size, 8);
    const size_t at = original_.find(std::string_view(entry, 16));
    EXPECT_NE(at, std::string::npos);
    return at;
  }

  std::string original_;
  std::string path_;
  std::vector<V6TraceFile::CpuData> data_;
};

// trace_file_corruption_test.cc cuts the file every 97 bytes; here every single byte of
// the fixed header, header_page/header_event and the first formats, and of the options
// and CPU tables at the header's end (the parse of the formats between makes every
// byte of the ~58 KB header too slow for a unit test).
TEST_F(BadFile, TruncatedAtEveryByteOfTheHeaderEnds) {
  size_t header_end = original_.size();
  for (const auto& d : data_)
    if (d.size) header_end = std::min<size_t>(header_end, d.offset);
  ASSERT_LT(header_end, original_.size());
  const size_t options = original_.rfind(std::string_view("options  \0", 10), header_end);
  ASSERT_NE(options, std::string::npos);
  std::vector<size_t> cuts;
  for (size_t len = 0; len < 1024; ++len) cuts.push_back(len);
  for (size_t len = options; len < header_end; len += len < options + 1024 ? 1 : 509)
    cuts.push_back(len);
  const size_t stride = SweepStride();
  for (size_t i = 0; i < cuts.size(); i += stride) {
    const size_t len = cuts[i];
    Write(original_.substr(0, len));
    try {
      auto reader = OpenTraceFile(path_);
      ADD_FAILURE() << "a file cut at " << len << " was accepted";
    } catch (const Error& e) {
      const std::string msg = e.what();
      ASSERT_NE(msg.find(path_), std::string::npos) << len << ": " << msg;
      if (len == 0) {
        EXPECT_EQ(msg, path_ + ": empty file (0 bytes): no trace.dat header at offset 0");
      }
      ASSERT_NE(msg.find("offset"), std::string::npos) << len << ": " << msg;
    }
  }
}

TEST_F(BadFile, HeaderSectionOfTwoToTheSixtyBytes) {
  std::string img = original_;
  const size_t at = img.find(std::string_view("header_page\0", 12));
  ASSERT_NE(at, std::string::npos);
  Poke<uint64_t>(img, at + 12, uint64_t{1} << 60);
  const std::string msg = StrictError(img);
  EXPECT_NE(msg.find("implausible header_page size 1152921504606846976"), std::string::npos) << msg;
  EXPECT_NE(msg.find(fmt::format("offset {}", at + 20)), std::string::npos) << msg;
}

// A cut inside a header section names the file's end first, as the other truncations do,
// and where the section began: two cuts in one section say different things.
TEST_F(BadFile, ACutInsideASectionNamesWhereTheFileEnds) {
  for (const size_t keep : {data_.front().offset / 2, data_.front().offset / 2 + 100}) {
    const std::string msg = StrictError(original_.substr(0, keep));
    EXPECT_NE(msg.find(fmt::format(": truncated at offset {} (", keep)), std::string::npos) << msg;
    EXPECT_NE(msg.find("file ends)"), std::string::npos) << msg;
  }
}

// A file cut anywhere in its first bytes says so, for v6 and v7 alike: not "bad magic",
// "bad endianness byte" or a libtracecmd failure with no offset.
TEST_F(BadFile, CutInTheFileHeaderIsTruncated) {
  for (const char* fixture : {"small_v6.dat", "small_v7_zstd.dat"}) {
    const std::string whole = ReadWholeFile(kFixtures + fixture);
    for (size_t n = 1; n <= 64; ++n) {
      const std::string msg = StrictError(whole.substr(0, n));
      EXPECT_NE(msg.find("truncated at offset"), std::string::npos)
          << fixture << " " << n << ": " << msg;
    }
  }
}

TEST_F(BadFile, CpuDataOffsetPastTheEnd) {
  for (const auto& d : data_) {
    if (d.size == 0) continue;
    std::string img = original_;
    Poke<uint64_t>(img, TableEntryOf(d), uint64_t{img.size()} + 4096 * 10);
    const std::string msg = StrictError(img);
    EXPECT_NE(msg.find("file ends"), std::string::npos) << msg;
  }
}

TEST_F(BadFile, AbsurdCpuDataSize) {
  for (const auto& d : data_) {
    if (d.size == 0) continue;
    std::string img = original_;
    Poke<uint64_t>(img, TableEntryOf(d) + 8, uint64_t{1} << 60);
    const std::string msg = StrictError(img);
    EXPECT_NE(msg.find("truncated at offset"), std::string::npos) << msg;
  }
}

TEST_F(BadFile, PageCommitBeyondThePageSize) {
  const auto& d = data_.back();
  ASSERT_GT(d.size, 0u);
  std::string img = original_;
  Poke<uint64_t>(img, d.offset + 8, 4096 + 100);  // the first page's commit
  const std::string msg = StrictError(img);
  EXPECT_NE(msg.find(fmt::format("corrupt ring-buffer page at offset {}", d.offset + 8)),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("commit 4196 exceeds"), std::string::npos) << msg;
}

// v7: sections and CPU data are zstd-compressed. cstool's own reader notices damage to
// any block and names its offset; libtracecmd (--reader libtracecmd) must give an error
// naming the file (it knows no offset) or read the file, never crash.
TEST_F(BadFile, V7WithBrokenCompressionBlock) {
  const std::string v7 = ReadWholeFile(kFixtures + "small_v7_zstd.dat");
  ASSERT_GT(v7.size(), 20000u);
  // zstd frames start with the magic 28 b5 2f fd; damage the data after each of them.
  size_t frames = 0, rejected_own = 0, rejected_lib = 0;
  for (size_t at = v7.find("\x28\xb5\x2f\xfd"); at != std::string::npos;
       at = v7.find("\x28\xb5\x2f\xfd", at + 4)) {
    ++frames;
    std::string img = v7;
    for (size_t i = at + 8; i < std::min(img.size(), at + 40); ++i)
      img[i] = static_cast<char>(~img[i]);
    Write(img);
    for (const char* reader : {"fast", "libtracecmd"}) {
      CommandResult r = RunCommand({CSTOOL_BINARY, "report", path_, "--reader", reader});
      SCOPED_TRACE(fmt::format("{} reader, frame at {}: {}", reader, at, r.err));
      EXPECT_LT(r.status, 128) << "crashed";
      if (r.status == 0) continue;
      ++(std::string(reader) == "fast" ? rejected_own : rejected_lib);
      EXPECT_EQ(r.status, 1);
      // libtracecmd may print its own lines first; cstool's is the last one (a sanitizer
      // build may add notes of its own, "==PID==..." lines, after it).
      EXPECT_EQ(LastOwnLine(r.err).find("cstool report: " + path_), 0u);
      if (std::string(reader) == "fast") {
        EXPECT_NE(LastOwnLine(r.err).find("corrupt file at offset"), std::string::npos);
      }
    }
  }
  EXPECT_GT(frames, 5u);
  // All but the frames of the four sections cstool does not need: kallsyms (it only
  // names kernel stacks: damage leaves their addresses unnamed), printk formats, saved
  // cmdlines (names come from the events) and the section descriptions (strings).
  EXPECT_EQ(rejected_own, frames - 4);
  // libtracecmd: damage to a block it needs at open time is always noticed; damage to CPU
  // data it decompresses later can end that CPU's stream early without an error.
  EXPECT_GE(rejected_lib, frames / 2);
}

// A format that passes cstool's own checks but crashes libtraceevent's parser (a fuzzer
// finding): `report` exits 1 naming the file, the event system and the format's offset.
TEST_F(BadFile, FormatThatCrashesLibtraceeventIsAnError) {
  const std::string input = std::string(CSTOOL_SOURCE_DIR) +
                            "/tests/fuzz/regressions/segv-tep-parse-event-damaged-sched-format";
  CommandResult r = RunCommand({CSTOOL_BINARY, "report", input});
  EXPECT_EQ(r.status, 1) << r.err;
  // Killed by SIGSEGV; under ASan the child reports the crash and exits 1 instead.
  const std::string expected =
      "cstool report: " + input +
      ": damaged sched event format at offset 495: libtraceevent's parser ";
  EXPECT_EQ(r.err.substr(0, expected.size()), expected);
}

TEST_F(BadFile, SalvageReadsCpuDataUpToTheCut) {
  const auto& last = data_.back();
  ASSERT_GT(last.size, 3 * 4096u);
  // Cut the last CPU's data in the middle of its third page.
  const size_t cut = last.offset + 2 * 4096 + 1000;
  ASSERT_EQ(last.offset + last.size, original_.size()) << "fixture layout changed";
  const std::string img = original_.substr(0, cut);
  EXPECT_NE(StrictError(img).find("truncated at offset"), std::string::npos);

  SyscallTable syscalls;
  auto full = AnalyzeTrace(kFixtures + "small_v6.dat", syscalls);
  auto part = AnalyzeTrace(path_, syscalls, {.salvage = true});
  const TraceSummary& t = part->model.trace;
  ASSERT_EQ(t.damage.size(), 2u);
  EXPECT_NE(t.damage[0].find(path_), std::string::npos) << t.damage[0];
  EXPECT_NE(t.damage[0].find(fmt::format("up to offset {} (2 of", last.offset + 2 * 4096)),
            std::string::npos)
      << t.damage[0];
  EXPECT_GT(t.events, 0u);
  EXPECT_LT(t.events, full->model.trace.events);
  EXPECT_FALSE(part->model.threads.empty());
  // Every CPU is read up to the cut CPU's last record, no further: exactly the intact
  // file's records up to that time.
  const int cut_cpu = static_cast<int>(data_.size()) - 1;
  EXPECT_NE(t.damage[1].find(fmt::format("CPU {}'s data ends", cut_cpu)), std::string::npos)
      << t.damage[1];
  int64_t cut_last = -1;
  {
    ReaderOptions salvage;
    salvage.salvage = true;
    auto cut_reader = OpenTraceFile(path_, salvage);
    auto stream = cut_reader->OpenCpu(cut_cpu);
    for (auto batch = stream->NextBatch(); !batch.empty(); batch = stream->NextBatch())
      for (const RawRecord& r : batch)
        if (!r.is_loss()) cut_last = r.ts;
  }
  ASSERT_GT(cut_last, 0);
  uint64_t up_to_cut = 0;
  auto intact = OpenTraceFile(kFixtures + "small_v6.dat");
  for (int cpu = 0; cpu < intact->cpus(); ++cpu) {
    auto stream = intact->OpenCpu(cpu);
    for (auto batch = stream->NextBatch(); !batch.empty(); batch = stream->NextBatch())
      for (const RawRecord& r : batch)
        if (!r.is_loss() && r.ts <= cut_last) ++up_to_cut;
  }
  EXPECT_EQ(t.events, up_to_cut);
  EXPECT_EQ(t.last_ts, cut_last);
  // An intact file salvaged is the same as read strictly.
  auto same = AnalyzeTrace(kFixtures + "small_v6.dat", syscalls, {.salvage = true});
  EXPECT_TRUE(same->model.trace.damage.empty());
  EXPECT_EQ(same->model.trace.events, full->model.trace.events);
}

// A cut in the first CPU's data leaves the later CPUs nothing: the note bounds the report
// at the first CPU's last record and says those CPUs have no data at all (it said "every
// CPU is reported up to there", of CPUs with no event in the report).
TEST_F(BadFile, SalvageNamesTheCpusWithNoDataLeft) {
  ASSERT_GE(data_.size(), 2u);
  const auto& first = data_.front();
  ASSERT_GT(first.size, 3 * 4096u);
  for (size_t i = 1; i < data_.size(); ++i)
    ASSERT_GE(data_[i].offset, first.offset + first.size) << "fixture layout changed";
  Write(original_.substr(0, first.offset + 2 * 4096 + 1000));
  SyscallTable syscalls;
  auto part = AnalyzeTrace(path_, syscalls, {.salvage = true});
  const TraceSummary& t = part->model.trace;
  const std::string all = fmt::format("{}", fmt::join(t.damage, "\n"));
  std::vector<int> rest;
  for (int cpu = 1; cpu < static_cast<int>(data_.size()); ++cpu) rest.push_back(cpu);
  EXPECT_NE(all.find("CPU 0's data ends "), std::string::npos) << all;
  EXPECT_NE(all.find("every CPU with data left is reported up to there"), std::string::npos) << all;
  EXPECT_NE(
      all.find(fmt::format("; {} {} {} no data left at all: ", rest.size() == 1 ? "CPU" : "CPUs",
                           fmt::join(rest, ", "), rest.size() == 1 ? "has" : "have")),
      std::string::npos)
      << all;
  // A cut with every CPU's data left in part keeps the plain note.
  const auto& last = data_.back();
  Write(original_.substr(0, last.offset + 2 * 4096 + 1000));
  auto later = AnalyzeTrace(path_, syscalls, {.salvage = true});
  const std::string plain = fmt::format("{}", fmt::join(later->model.trace.damage, "\n"));
  EXPECT_NE(plain.find("every CPU is reported up to there"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("no data left at all"), std::string::npos) << plain;
}

// A CPU none of whose data is left is a gap of unknown size from the start: counted as
// one in the lost events (as ANOMALIES counts a gap), but shown as not read, not as one
// lost event (0.0 % of those written, as the report said).
TEST_F(BadFile, ACpuNoneOfWhoseDataIsLeftIsNotReadNotOneLostEvent) {
  const auto& last = data_.back();
  ASSERT_EQ(last.offset + last.size, original_.size()) << "fixture layout changed";
  Write(original_.substr(0, last.offset + 1000));
  SyscallTable syscalls;
  auto part = AnalyzeTrace(path_, syscalls, {.salvage = true});
  const TraceSummary& t = part->model.trace;
  const int cut_cpu = static_cast<int>(data_.size()) - 1;
  EXPECT_EQ(t.unread_cpus, std::vector<int32_t>{cut_cpu});
  EXPECT_GT(t.events, 0u);
  const auto noted = [&](std::string_view text) {
    return std::any_of(t.notes.begin(), t.notes.end(),
                       [&](const std::string& n) { return n.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(noted(fmt::format("the data of CPU {} could not be read at all", cut_cpu)))
      << fmt::format("{}", fmt::join(t.notes, "\n"));
  // The other CPUs are whole: no bound, but the salvage says what the empty CPU means.
  const std::string damage = fmt::format("{}", fmt::join(t.damage, "\n"));
  EXPECT_NE(damage.find(fmt::format("CPU {} has no data left at all: its events are missing "
                                    "from the start",
                                    cut_cpu)),
            std::string::npos)
      << damage;
  EXPECT_EQ(damage.find("reported up to there"), std::string::npos) << damage;
  // The fixture's other CPUs lost events of their own: those are what the share counts.
  uint64_t read_lost = 0;
  for (auto [cpu, n] : t.lost_events)
    if (cpu != cut_cpu) read_lost += n;
  ASSERT_GT(read_lost, 1u);
  EXPECT_TRUE(noted(fmt::format("{} events were lost (", read_lost)))
      << fmt::format("{}", fmt::join(t.notes, "\n"));
  CommandResult table = RunCommand({CSTOOL_BINARY, "report", path_, "--salvage"});
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find(fmt::format("cpu{} not read", cut_cpu)), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(fmt::format("LOST EVENTS: {} total", read_lost)), std::string::npos)
      << table.out;
  // A CPU whose data was read in part is no unread CPU.
  Write(original_.substr(0, last.offset + 2 * 4096 + 1000));
  EXPECT_TRUE(AnalyzeTrace(path_, syscalls, {.salvage = true})->model.trace.unread_cpus.empty());
}

TEST_F(BadFile, SalvageSkipsACorruptPageAsALoss) {
  const auto& d = data_.back();
  ASSERT_GT(d.size, 3 * 4096u);
  std::string img = original_;
  const size_t page = d.offset + 4096;  // the second page of the last CPU
  Poke<uint64_t>(img, page + 8, 4096 + 100);
  Write(img);
  SyscallTable syscalls;
  auto full = AnalyzeTrace(kFixtures + "small_v6.dat", syscalls);
  auto part = AnalyzeTrace(path_, syscalls, {.salvage = true});
  const TraceSummary& t = part->model.trace;
  ASSERT_EQ(t.damage.size(), 1u);
  EXPECT_NE(t.damage[0].find(fmt::format("page at offset {}", page + 8)), std::string::npos)
      << t.damage[0];
  EXPECT_NE(t.damage[0].find("skipped"), std::string::npos) << t.damage[0];
  EXPECT_LT(t.events, full->model.trace.events);
  EXPECT_GT(t.events, full->model.trace.events / 2);
  // The skipped page is a gap: the CPU's lost count is at least one gap.
  const int cpu = static_cast<int>(data_.size()) - 1;
  EXPECT_GE(t.lost_events.at(cpu), 1u);
}

// A page whose header time jumps (one flipped high bit: up to centuries) would put its
// records after every other CPU's and give negative and over-100 % times: it is named as
// corrupt at its offset, and --salvage skips it, leaving every thread's microstates
// adding up to its lifetime.
TEST_F(BadFile, APageWhoseTimeJumpsIsCorrupt) {
  const auto& d = data_.front();
  ASSERT_GT(d.size, 4 * 4096u);
  const size_t page = d.offset + 2 * 4096;  // the third page of the first CPU
  for (const size_t byte : {7, 5, 4}) {     // bits 62, 46 and 38: 146 years, 19 hours, 4.6 min
    SCOPED_TRACE(byte);
    std::string img = original_;
    img[page + byte] = static_cast<char>(img[page + byte] ^ 0x40);
    const std::string msg = StrictError(img);
    EXPECT_NE(msg.find(fmt::format("corrupt ring-buffer page at offset {} (CPU 0): its time "
                                   "stamp",
                                   page)),
              std::string::npos)
        << msg;
    SyscallTable syscalls;
    auto part = AnalyzeTrace(path_, syscalls, {.salvage = true});
    ASSERT_EQ(part->model.trace.damage.size(), 1u);
    EXPECT_NE(part->model.trace.damage[0].find("skipped"), std::string::npos);
    EXPECT_GE(part->model.trace.lost_events.at(0), 1u);
    size_t threads = 0;
    for (const ThreadReport& r : part->model.threads) {
      if (r.thread == nullptr) continue;
      ++threads;
      int64_t sum = 0;
      for (const int64_t t : r.microstates) {
        EXPECT_GE(t, 0) << r.thread->tid;
        sum += t;
      }
      EXPECT_EQ(sum, r.Lifetime()) << r.thread->tid;
    }
    EXPECT_GT(threads, 5u);
  }
}

TEST_F(BadFile, ReportCommandSalvagesAndSaysSo) {
  const auto& last = data_.back();
  Write(original_.substr(0, last.offset + 2 * 4096 + 1000));
  CommandResult strict = RunCommand({CSTOOL_BINARY, "report", path_});
  EXPECT_EQ(strict.status, 1);
  EXPECT_NE(strict.err.find(path_ + ": truncated at offset"), std::string::npos) << strict.err;
  CommandResult table = RunCommand({CSTOOL_BINARY, "report", path_, "--salvage"});
  EXPECT_EQ(table.status, 0) << table.err;
  EXPECT_NE(table.out.find("SALVAGED: "), std::string::npos) << table.out;
  EXPECT_NE(table.err.find("warning: salvaged: "), std::string::npos) << table.err;
  CommandResult json =
      RunCommand({CSTOOL_BINARY, "report", path_, "--salvage", "--format", "json"});
  EXPECT_EQ(json.status, 0) << json.err;
  EXPECT_NE(json.out.find("\"salvaged\": true"), std::string::npos);
  EXPECT_NE(json.out.find("\"damage\": ["), std::string::npos);
  // Header damage cannot be salvaged: still an error.
  Write(original_.substr(0, 3000));
  CommandResult header = RunCommand({CSTOOL_BINARY, "report", path_, "--salvage"});
  EXPECT_EQ(header.status, 1);
  EXPECT_NE(header.err.find("offset"), std::string::npos) << header.err;
}

// diff reads its recordings as report does: a damaged one fails with the hint, and with
// --salvage is compared for what it still holds, with a warning naming it (in the JSON
// too).
TEST_F(BadFile, DiffSalvagesAndSaysSo) {
  const auto& last = data_.back();
  Write(original_.substr(0, last.offset + 2 * 4096 + 1000));
  const std::string good = kFixtures + "small_v6.dat";
  CommandResult strict = RunCommand({CSTOOL_BINARY, "diff", good, "--", path_});
  EXPECT_EQ(strict.status, 1);
  EXPECT_NE(strict.err.find(path_ + ": truncated at offset"), std::string::npos) << strict.err;
  EXPECT_NE(strict.err.find("--salvage compares what the file still holds"), std::string::npos)
      << strict.err;
  CommandResult salvaged =
      RunCommand({CSTOOL_BINARY, "diff", "--salvage", "--format", "json", good, "--", path_});
  ASSERT_EQ(salvaged.status, 0) << salvaged.err;
  EXPECT_NE(salvaged.err.find(path_ + ": salvaged: "), std::string::npos) << salvaged.err;
  const nlohmann::json j = nlohmann::json::parse(salvaged.out);
  EXPECT_TRUE(std::any_of(j.at("warnings").begin(), j.at("warnings").end(),
                          [](const nlohmann::json& w) {
                            return w.get<std::string>().find(": salvaged: ") != std::string::npos;
                          }))
      << j.at("warnings").dump();
}

}  // namespace
}  // namespace cstool::testing
