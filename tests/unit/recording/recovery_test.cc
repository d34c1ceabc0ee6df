#include "recording/recovery.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/errors.h"
#include "format/trace_file_reader.h"
#include "tests/support/tracefs_fixture.h"

namespace cstool {
namespace {

namespace fs = std::filesystem;

class Recovery : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("cstool-recovery-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    out_ = dir_ / "t.dat";
  }
  void TearDown() override { fs::remove_all(dir_); }
  void WriteFile(const fs::path& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary) << bytes;
  }
  fs::path dir_, out_;
  NullMessages messages_;
};

TEST_F(Recovery, LeftoversAreTheNoteAndThePageFilesOfThatOutputOnly) {
  EXPECT_TRUE(LeftoversOf(out_).empty());
  WriteFile(PagesFileFor(out_, 1), "x");
  WriteFile(dir_ / "t.dat.cpuX.tmp", "x");      // not a CPU number
  WriteFile(dir_ / "other.dat.cpu0.tmp", "x");  // another output's
  EXPECT_EQ(LeftoversOf(out_), std::vector<fs::path>{PagesFileFor(out_, 1)});
  WriteRecoveryNote(out_, {}, {}, 2);
  EXPECT_EQ(LeftoversOf(out_).size(), 2u);
}

// Whole pages only: the tail a kill cut short is dropped; the note and page files go.
TEST_F(Recovery, AssemblesTheFileFromWholePagesAndRemovesTheLeftovers) {
  TraceFileContents contents;
  contents.trace_clock = "local [mono]";
  RecordingInfo info;
  info.command = {"sleep", "1"};
  WriteRecoveryNote(out_, contents, info, 2);
  WriteFile(PagesFileFor(out_, 0), std::string(4096 + 100, '\0'));
  RecoveryResult r = RecoverRecording(out_, messages_);
  EXPECT_EQ(r.cpus, 1);
  EXPECT_EQ(r.bytes, 4096u);
  EXPECT_TRUE(fs::exists(out_));
  EXPECT_TRUE(LeftoversOf(out_).empty());
}

// A note rewritten at the stop holds the recording's end (each CPU's stats, the kernel's
// counters): the file made of it is the one the recording would have written. A note of
// a recording cut short gets the "recovered" mark and loses the counters.
TEST_F(Recovery, AnEndedRecordingsNoteKeepsItsEnd) {
  TraceFileContents contents;
  contents.header_page = testing::TracefsFixture("header_page");
  contents.header_event = testing::TracefsFixture("header_event");
  contents.systems = {{"sched", {testing::TracefsFixture("sched_switch.format")}}};
  contents.trace_clock = "local [mono]";
  contents.cpus.resize(2);
  contents.cpus[1].stats = "entries: 0\noverrun: 7\n";
  RecordingInfo info;
  info.command = {"sleep", "1"};
  info.kernel_counters = nlohmann::json{{"marker", 1}};
  for (RecoveryNoteStage stage : {RecoveryNoteStage::kEnded, RecoveryNoteStage::kRecording}) {
    WriteRecoveryNote(out_, contents, info, 2, stage);
    WriteFile(PagesFileFor(out_, 1), std::string(4096, '\0'));
    const RecoveryResult r = RecoverRecording(out_, messages_);
    const bool ended = stage == RecoveryNoteStage::kEnded;
    EXPECT_EQ(r.ended, ended);
    std::unique_ptr<TraceFileReader> file = OpenTraceFile(out_.string());
    const std::optional<RecordingInfo> read = file->recording_info();
    ASSERT_TRUE(read.has_value());
    EXPECT_EQ(read->recovered, !ended);
    EXPECT_EQ(read->kernel_counters.is_null(), !ended);
    const auto stats = file->cpu_stats().find(1);
    EXPECT_EQ(stats != file->cpu_stats().end() && stats->second.overrun == 7, ended);
    fs::remove(out_);
  }
}

TEST_F(Recovery, NothingToRecoverAndADamagedNoteAreClearErrors) {
  try {
    RecoverRecording(out_, messages_);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nothing to recover"), std::string::npos) << e.what();
  }
  WriteFile(RecoveryNoteFor(out_), "{\"version\": 1, \"contents\": ");
  WriteFile(PagesFileFor(out_, 0), std::string(4096, '\0'));
  try {
    RecoverRecording(out_, messages_);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is damaged"), std::string::npos) << e.what();
  }
  EXPECT_EQ(fs::file_size(PagesFileFor(out_, 0)), 4096u) << "the pages are left as they were";
}

}  // namespace
}  // namespace cstool
