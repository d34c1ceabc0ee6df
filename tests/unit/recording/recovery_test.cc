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

// A note rewritten at the end holds the recording's end (each CPU's stats, the kernel's
// counters): the file made of it is the one the recording would have written. A note of
// a recording cut short, or an ended one whose page files changed since (one cut, one
// gone), gets the "recovered" mark and loses the counters.
class EndedRecovery : public Recovery {
 protected:
  void SetUp() override {
    Recovery::SetUp();  // (out_ is set there)
    contents_.header_page = testing::TracefsFixture("header_page");
    contents_.header_event = testing::TracefsFixture("header_event");
    contents_.systems = {{"sched", {testing::TracefsFixture("sched_switch.format")}}};
    contents_.trace_clock = "local [mono]";
    contents_.cpus.resize(2);
    contents_.cpus[1].stats = "entries: 0\noverrun: 7\n";
    contents_.cpus[1].pages_file = PagesFileFor(out_, 1);
    info_.command = {"sleep", "1"};
    info_.kernel_counters = nlohmann::json{{"marker", 1}};
  }
  // Recovers and says whether the file kept the end: not marked, counters and stats kept.
  bool RecoveredWithItsEnd() {
    const RecoveryResult r = RecoverRecording(out_, messages_);
    std::unique_ptr<TraceFileReader> file = OpenTraceFile(out_.string());
    const std::optional<RecordingInfo> read = file->recording_info();
    EXPECT_TRUE(read.has_value());
    if (!read) return false;
    const auto stats = file->cpu_stats().find(1);
    const bool kept = !read->recovered && !read->kernel_counters.is_null() &&
                      stats != file->cpu_stats().end() && stats->second.overrun == 7;
    EXPECT_EQ(r.ended, kept);
    return kept;
  }
  TraceFileContents contents_;
  RecordingInfo info_;
};

TEST_F(EndedRecovery, AnEndedRecordingsNoteKeepsItsEnd) {
  WriteFile(PagesFileFor(out_, 1), std::string(4096, '\0'));
  WriteRecoveryNote(out_, contents_, info_, 2, RecoveryNoteStage::kEnded);
  EXPECT_TRUE(RecoveredWithItsEnd());
}

TEST_F(EndedRecovery, ARecordingCutShortLosesItsEnd) {
  WriteFile(PagesFileFor(out_, 1), std::string(4096, '\0'));
  WriteRecoveryNote(out_, contents_, info_, 2, RecoveryNoteStage::kRecording);
  EXPECT_FALSE(RecoveredWithItsEnd());
}

TEST_F(EndedRecovery, PageFilesChangedSinceTheEndLoseIt) {
  WriteFile(PagesFileFor(out_, 1), std::string(8192, '\0'));
  WriteRecoveryNote(out_, contents_, info_, 2, RecoveryNoteStage::kEnded);
  fs::resize_file(PagesFileFor(out_, 1), 4096);
  EXPECT_FALSE(RecoveredWithItsEnd());
  fs::remove(out_);
  WriteFile(PagesFileFor(out_, 1), std::string(8192, '\0'));
  WriteRecoveryNote(out_, contents_, info_, 2, RecoveryNoteStage::kEnded);
  fs::remove(PagesFileFor(out_, 1));
  EXPECT_FALSE(RecoveredWithItsEnd());
}

// The file already there (the recording before, put back when the recorder's own write
// failed) is kept as FILE.old, as record keeps it.
TEST_F(EndedRecovery, AnExistingFileIsKeptAsOld) {
  WriteFile(out_, "the recording before");
  WriteFile(PagesFileFor(out_, 1), std::string(4096, '\0'));
  WriteRecoveryNote(out_, contents_, info_, 2, RecoveryNoteStage::kEnded);
  EXPECT_TRUE(RecoveredWithItsEnd());
  std::ifstream old(out_.string() + ".old");
  std::string text((std::istreambuf_iterator<char>(old)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "the recording before");
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
