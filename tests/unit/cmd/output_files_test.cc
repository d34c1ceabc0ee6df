// The files a command writes besides its standard output (report -o, --timeline, --html,
// diff --html) are written whole or not at all: a failed run leaves the files of an
// earlier run under those names as they were, and no partial file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
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

// An output option given a recording's name (its own name forgotten: `report --timeline
// run.dat` reads ./cstool.dat and writes over run.dat) is refused before anything is
// written, whichever option and command.
TEST(OutputFiles, ARecordingIsNeverOverwritten) {
  const fs::path recording = ScratchPath("victim.dat");
  fs::copy_file(Fixture("small_v6.dat"), recording, fs::copy_options::overwrite_existing);
  const std::string before = ReadWholeFile(recording);
  const std::string r = recording.string();
  const std::string file = Fixture("golden_mutex.dat");
  for (const std::vector<std::string>& argv : std::vector<std::vector<std::string>>{
           {CSTOOL_BINARY, "report", file, "--timeline", r},
           {CSTOOL_BINARY, "report", file, "--html", r},
           {CSTOOL_BINARY, "report", file, "--format", "json", "-o", r},
           {CSTOOL_BINARY, "diff", "--html", r, file, "--", file}}) {
    CommandResult result = RunCommand(argv);
    SCOPED_TRACE(argv[1] + " " + argv[3]);
    EXPECT_EQ(result.status, 2) << result.err;
    EXPECT_NE(result.err.find(r + ": that is a recording (a trace.dat file), and an output "
                                  "never replaces one: give the output a name of its own after"),
              std::string::npos)
        << result.err;
    EXPECT_EQ(ReadWholeFile(recording), before);
    EXPECT_FALSE(fs::exists(r + ".partial"));
  }
  fs::remove(recording);
}

}  // namespace
}  // namespace cstool::testing
