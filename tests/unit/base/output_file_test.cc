#include "base/output_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/errors.h"

namespace cstool {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Whether `dir`'s file system makes files without a name (O_TMPFILE); where it does not,
// OutputFile writes PATH.partial as it always did.
bool UnnamedFilesIn(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() / ("cstool_output_file_" + std::to_string(::getpid()));
    partial_ = path_.string() + ".partial";
    std::ofstream(path_) << "earlier";
  }
  void TearDown() override {
    fs::remove(path_);
    fs::remove(partial_);
  }
  fs::path path_;
  fs::path partial_;
};

TEST_F(OutputFileTest, CommitReplacesTheFileWhole) {
  OutputFile f(path_.string(), 4096);
  f.stream() << "new report";
  f.stream().flush();
  EXPECT_EQ(Read(path_), "earlier");  // untouched until the commit
  // The new bytes have no name yet (PATH.partial where O_TMPFILE is not supported).
  EXPECT_EQ(fs::exists(partial_), !UnnamedFilesIn(path_.parent_path()));
  f.Commit();
  EXPECT_EQ(Read(path_), "new report");
  EXPECT_FALSE(fs::exists(partial_));
}

TEST_F(OutputFileTest, WithoutCommitTheEarlierFileStaysAndThePartialGoes) {
  {
    OutputFile f(path_.string());
    f.stream() << "half a report";
  }
  EXPECT_EQ(Read(path_), "earlier");
  EXPECT_FALSE(fs::exists(partial_));
}

// A process killed while it writes (Ctrl-C, SIGKILL) leaves the earlier file and nothing
// else: the file being written has no name until Commit().
TEST_F(OutputFileTest, AKilledWriterLeavesNoFileBehind) {
  const fs::path dir =
      fs::temp_directory_path() / ("cstool_output_kill_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path out = dir / "report.json";
  std::ofstream(out) << "earlier";
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      OutputFile f(out.string());
      f.stream() << std::string(1 << 20, 'x');
      f.stream().flush();
      (void)!::write(ready[1], "x", 1);
      ::pause();
    } catch (...) {
    }
    ::_exit(1);
  }
  ::close(ready[1]);
  char c = 0;
  const ssize_t got = ::read(ready[0], &c, 1);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::close(ready[0]);
  ASSERT_EQ(got, 1) << "the writer failed";
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  // Where O_TMPFILE is not supported, the named partial file stays (as documented).
  std::vector<std::string> expected{"report.json"};
  if (!UnnamedFilesIn(dir)) expected.push_back("report.json.partial");
  EXPECT_EQ(names, expected);
  EXPECT_EQ(Read(out), "earlier");
  fs::remove_all(dir);
}

// A PATH.partial left behind (by an older version, or another user's) does not stop
// the commit.
TEST_F(OutputFileTest, AnOldPartialFileDoesNotStopTheCommit) {
  std::ofstream(partial_) << "stale";
  OutputFile f(path_.string());
  f.stream() << "new report";
  f.Commit();
  EXPECT_EQ(Read(path_), "new report");
}

TEST_F(OutputFileTest, AnUncreatableFileFailsAtOnceNamingIt) {
  try {
    OutputFile f("/nonexistent-dir/out.html");
    ADD_FAILURE() << "created a file in a missing directory";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "/nonexistent-dir/out.html: cannot write: No such file or directory");
  }
}

// A pipe or a device has no file to replace: written in place (/dev/stdout is a link that
// a rename would have replaced); a directory fails at once.
TEST_F(OutputFileTest, ADeviceIsWrittenInPlaceAndADirectoryRefused) {
  {
    OutputFile null("/dev/null");
    null.stream() << "discarded";
    null.Commit();
  }
  EXPECT_FALSE(fs::exists("/dev/null.partial"));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  try {
    OutputFile dir(fs::temp_directory_path().string());
    ADD_FAILURE() << "wrote into a directory";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Is a directory"), std::string::npos) << e.what();
  }
}

// A link is not replaced by a file: one under /dev or /proc (/dev/stdout redirected to a
// file) is written through in place, another has the file it names replaced.
TEST_F(OutputFileTest, ALinkStaysALink) {
  const fs::path link = path_.string() + ".link";
  fs::remove(link);
  fs::create_symlink(path_, link);
  OutputFile f(link.string());
  f.stream() << "through the link";
  f.Commit();
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(Read(path_), "through the link");
  EXPECT_FALSE(fs::exists(link.string() + ".partial"));
  EXPECT_FALSE(fs::exists(partial_));
  fs::remove(link);
  // /proc/self/fd/N of a file open here: written in place, the file's inode kept.
  std::FILE* held = std::fopen(path_.c_str(), "r+");
  ASSERT_NE(held, nullptr);
  struct stat before {};
  ASSERT_EQ(::fstat(::fileno(held), &before), 0);
  const std::string fd_link = "/proc/self/fd/" + std::to_string(::fileno(held));
  OutputFile g(fd_link);
  g.stream() << "in place";
  g.Commit();
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(fd_link)));
  EXPECT_EQ(Read(path_), "in place");
  struct stat after {};
  ASSERT_EQ(::stat(path_.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);  // the same file, not one renamed over it
  std::fclose(held);
}

}  // namespace
}  // namespace cstool
