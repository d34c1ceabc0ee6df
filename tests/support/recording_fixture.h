// The fixture of the tests that record for real: skipped (with the reason) where tracefs
// cannot be used, a fresh scratch directory per test, and no cstool-* instance whose
// owner is gone left behind.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "base/errors.h"
#include "tests/support/files.h"
#include "tracefs/tracefs_session.h"

namespace cstool::testing {

class RecordingFixture : public ::testing::Test {
 protected:
  // The scratch directory is PARENT/PREFIX-PID-TESTNAME.
  explicit RecordingFixture(std::string prefix,
                            std::filesystem::path parent = std::filesystem::temp_directory_path())
      : prefix_(std::move(prefix)), parent_(std::move(parent)) {}

  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "recording needs root (tracefs)";
    try {
      TracefsSession::CheckAccess();
    } catch (const Error& e) {
      GTEST_SKIP() << "tracefs is not usable: " << e.what();
    }
    dir_ = parent_ / ScratchDirName(prefix_);
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
    if (!IsSkipped()) {
      EXPECT_EQ(OrphanedCstoolInstances(), std::vector<std::string>{});
    }
  }

  std::filesystem::path dir_;

 private:
  std::string prefix_;
  std::filesystem::path parent_;
};

}  // namespace cstool::testing
