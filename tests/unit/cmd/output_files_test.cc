// The files a command writes besides its standard output (report -o, --timeline, --html,
// diff --html) are written whole or not at all: a failed run leaves the files of an
// earlier run under those names as they were, and no partial file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/files.h"
#include "tests/support/run_command.h"

namespace cstool::testing {
namespace {

namespace fs = std::filesystem;

TEST(OutputFiles, AFailedReportLeavesEarlierFilesAsTheyWere) {
  const std::vector<fs::path> files = {ScratchPath("earlier.json"), ScratchPath("earlier.pftrace"),
                                       ScratchPath("earlier.html")};
  for (const fs::path& f : files) std::ofstream(f) << "earlier";
  // No thread has pid 1 in the fixture: the analysis runs, then the report fails.
  CommandResult r = RunCommand({CSTOOL_BINARY, "report", Fixture("golden_mutex.dat"), "-p", "1",
                                "--format", "json", "-o", files[0].string(), "--timeline",
                                files[1].string(), "--html", files[2].string()});
  EXPECT_EQ(r.status, 1) << r.err;
  for (const fs::path& f : files) {
    EXPECT_EQ(ReadWholeFile(f), "earlier") << f;
    EXPECT_FALSE(fs::exists(f.string() + ".partial")) << f;
    fs::remove(f);
  }
}

TEST(OutputFiles, AReportThatSucceedsReplacesThem) {
  const fs::path timeline = ScratchPath("replaced.pftrace");
  const fs::path html = ScratchPath("replaced.html");
  for (const fs::path& f : {timeline, html}) std::ofstream(f) << "earlier";
  CommandResult r = RunCommand({CSTOOL_BINARY, "report", Fixture("golden_mutex.dat"), "--timeline",
                                timeline.string(), "--html", html.string()});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_GT(fs::file_size(timeline), 1000u);
  EXPECT_EQ(ReadWholeFile(html).rfind("<!DOCTYPE html>", 0), 0u);
  for (const fs::path& f : {timeline, html}) {
    EXPECT_FALSE(fs::exists(f.string() + ".partial")) << f;
    fs::remove(f);
  }
}

// Two outputs named alike would be one file, the later written replacing the other
// (`--html out.json --timeline out.json` kept only the page): refused before the analysis,
// whatever the spelling, and an earlier file there stays as it was.
TEST(OutputFiles, TwoOutputsUnderOneNameAreRefused) {
  const fs::path shared = ScratchPath("shared.json");
  std::ofstream(shared) << "earlier";
  const std::string other_spelling = (shared.parent_path() / "." / shared.filename()).string();
  struct Case {
    std::vector<std::string> outputs;
    std::string said;
  };
  const std::vector<Case> cases = {
      {{"--html", shared.string(), "--timeline", shared.string()}, "--timeline"},
      {{"-o", shared.string(), "--timeline", other_spelling}, "-o"},
      {{"--format", "json", "-o", shared.string(), "--html", shared.string()}, "--html"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {CSTOOL_BINARY, "report", Fixture("golden_mutex.dat")};
    argv.insert(argv.end(), c.outputs.begin(), c.outputs.end());
    CommandResult r = RunCommand(argv);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("are one file"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.said), std::string::npos) << r.err;
    EXPECT_EQ(ReadWholeFile(shared), "earlier");
  }
  fs::remove(shared);
}

TEST(OutputFiles, AFailedDiffLeavesAnEarlierPageAsItWas) {
  const fs::path html = ScratchPath("diff.html");
  const fs::path damaged = ScratchPath("damaged.dat");
  { std::ofstream(damaged) << "not a trace file"; }
  std::ofstream(html) << "earlier";
  CommandResult r = RunCommand({CSTOOL_BINARY, "diff", "--html", html.string(),
                                Fixture("golden_mutex.dat"), "--", damaged.string()});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(ReadWholeFile(html), "earlier");
  EXPECT_FALSE(fs::exists(html.string() + ".partial"));
  fs::remove(html);
  fs::remove(damaged);
}

// Every output option, of report and of diff, given `kept` (an existing file) is refused
// with `refusal` after its name, before anything is written: `kept` stays as it was.
void ExpectEveryOutputRefuses(const fs::path& kept, const std::string& refusal) {
  const std::string before = ReadWholeFile(kept);
  const std::string k = kept.string();
  const std::string file = Fixture("golden_mutex.dat");
  for (const std::vector<std::string>& argv : std::vector<std::vector<std::string>>{
           {CSTOOL_BINARY, "report", file, "-o", k},
           {CSTOOL_BINARY, "report", file, "--format", "json", "-o", k},
           {CSTOOL_BINARY, "report", file, "--timeline", k},
           {CSTOOL_BINARY, "report", file, "--html", k},
           {CSTOOL_BINARY, "diff", "--html", k, file, "--", file}}) {
    CommandResult result = RunCommand(argv);
    SCOPED_TRACE(argv[1] + " " + argv[3]);
    EXPECT_EQ(result.status, 2) << result.err;
    EXPECT_NE(result.err.find(k + refusal), std::string::npos) << result.err;
    EXPECT_EQ(ReadWholeFile(kept), before);
    EXPECT_FALSE(fs::exists(k + ".partial"));
  }
}

// An output option given a recording's name (its own name forgotten: `report --timeline
// run.dat` reads ./cstool.dat and writes over run.dat) is refused before anything is
// written, whichever option and command.
TEST(OutputFiles, ARecordingIsNeverOverwritten) {
  const fs::path recording = ScratchPath("victim.dat");
  fs::copy_file(Fixture("small_v6.dat"), recording, fs::copy_options::overwrite_existing);
  ExpectEveryOutputRefuses(recording,
                           ": that is a recording (a trace.dat file), and an output never "
                           "replaces one: give the output a name of its own after");
  fs::remove(recording);
}

// A fleet's database given to an output that is not `--format sqlite` (the format
// forgotten) is refused the same way, and keeps its rows; `--format sqlite` adds to it.
TEST(OutputFiles, ADatabaseIsNeverOverwrittenButAddedTo) {
  const fs::path db = ScratchPath("fleet.db");
  fs::remove(db);
  const std::string d = db.string();
  const std::string file = Fixture("golden_mutex.dat");
  CommandResult made = RunCommand({CSTOOL_BINARY, "report", file, "--format", "sqlite", "-o", d});
  ASSERT_EQ(made.status, 0) << made.err;
  ASSERT_EQ(ReadWholeFile(db).rfind(std::string("SQLite format 3\0", 16), 0), 0u);
  ExpectEveryOutputRefuses(db,
                           ": that is a SQLite database (a fleet export), and an output never "
                           "replaces one: add to it with --format sqlite");
  // --format sqlite adds to it: the same trace again is refused as exported once, and
  // --replace exports it again in place of its rows.
  CommandResult again = RunCommand({CSTOOL_BINARY, "report", file, "--format", "sqlite", "-o", d});
  EXPECT_EQ(again.status, 1) << again.err;
  EXPECT_NE(again.err.find("the same recording is exported only once"), std::string::npos)
      << again.err;
  CommandResult replaced =
      RunCommand({CSTOOL_BINARY, "report", file, "--format", "sqlite", "-o", d, "--replace"});
  EXPECT_EQ(replaced.status, 0) << replaced.err;
  fs::remove(db);
}

// Outputs that are no regular file are not read to check them: a FIFO with no reader on
// the other side (reading it would wait for ever), /dev/null.
TEST(OutputFiles, AnOutputThatIsNoFileIsNotReadToCheckIt) {
  const fs::path fifo = ScratchPath("out.fifo");
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string file = Fixture("golden_mutex.dat");
  // The report's open of the FIFO for writing waits for a reader: this one.
  std::string got;
  std::thread reader([&] { got = ReadWholeFile(fifo); });
  CommandResult r = RunCommand({CSTOOL_BINARY, "report", file, "-o", fifo.string()});
  // Had the report failed before its open, the reader would wait for ever: a writer's open
  // and close end its wait (and fail harmlessly once it read to the end).
  if (const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK); fd >= 0) ::close(fd);
  reader.join();
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(got.find("THREADS"), std::string::npos) << got;
  EXPECT_TRUE(fs::is_fifo(fifo));
  fs::remove(fifo);
  CommandResult null = RunCommand({CSTOOL_BINARY, "report", file, "-o", "/dev/null"});
  EXPECT_EQ(null.status, 0) << null.err;
}

// `--format sqlite -o` adds to a database: a recording there gets the recording's refusal,
// any other file a plain one (not SQLite's "PRAGMA ...: file is not a database").
TEST(OutputFiles, ASqliteExportRefusesFilesThatAreNotDatabases) {
  const fs::path recording = ScratchPath("victim_sqlite.dat");
  fs::copy_file(Fixture("small_v6.dat"), recording, fs::copy_options::overwrite_existing);
  const fs::path text = ScratchPath("notes.txt");
  { std::ofstream(text) << "some notes, not a database\n"; }
  const std::string rec_before = ReadWholeFile(recording);
  const std::string file = Fixture("golden_mutex.dat");
  CommandResult r =
      RunCommand({CSTOOL_BINARY, "report", file, "--format", "sqlite", "-o", recording.string()});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find(recording.string() + ": that is a recording (a trace.dat file)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(ReadWholeFile(recording), rec_before);
  r = RunCommand({CSTOOL_BINARY, "report", file, "--format", "sqlite", "-o", text.string()});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find(text.string() +
                       " is not a SQLite database: --format sqlite adds its tables to a SQLite "
                       "database"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(ReadWholeFile(text), "some notes, not a database\n");
  fs::remove(recording);
  fs::remove(text);
}

}  // namespace
}  // namespace cstool::testing
