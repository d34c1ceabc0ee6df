#include "base/output_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

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
  EXPECT_EQ(Read(partial_), "new report");
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

}  // namespace
}  // namespace cstool
