// Small file helpers shared by the tests: fixtures, scratch paths, a file's whole
// contents, and the tracefs instances cstool creates (cstool-<pid>).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "base/read_file.h"
#include "kernel/proc_threads.h"

namespace cstool::testing {

// A file of tests/fixtures.
inline std::string Fixture(const std::string& name) {
  return std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/" + name;
}

// A path in the temporary directory, PID-NAME, for a file the test writes.
inline std::filesystem::path ScratchPath(const std::string& name) {
  return std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "-" + name);
}

// The whole file ("" if it cannot be read).
inline std::string ReadWholeFile(const std::filesystem::path& path) {
  return ::cstool::ReadWholeFile(path.string()).value_or("");
}

// A scratch directory name for the running test: PREFIX-PID-TESTNAME. A parameterized
// test's name is "Name/0"; its '/' would nest the directory under one nobody removes.
inline std::string ScratchDirName(const std::string& prefix) {
  std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::replace(test.begin(), test.end(), '/', '_');
  return prefix + "-" + std::to_string(::getpid()) + "-" + test;
}

inline const std::filesystem::path kTracefsInstances = "/sys/kernel/tracing/instances";

// Waits up to a minute until the instance of the recorder `recorder_pid` traces `target`:
// tracing on and the target in its pid filter (the recorder makes the instance with
// tracing off before the pids go in). Whether it came to that. (A recorder starts in
// well under a second; a loaded shared host has taken over 10 s.)
inline bool WaitUntilFollowing(int recorder_pid, int target) {
  const std::filesystem::path instance =
      kTracefsInstances / ("cstool-" + std::to_string(recorder_pid));
  for (int i = 0; i < 12000; ++i) {
    if (ReadWholeFile(instance / "tracing_on") == "1\n" &&
        ReadWholeFile(instance / "set_event_pid").find(std::to_string(target)) != std::string::npos)
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// Names of the cstool-<pid> tracefs instances present now.
inline std::vector<std::string> CstoolInstances() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(kTracefsInstances, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("cstool-", 0) == 0) out.push_back(std::move(name));
  }
  return out;
}

// Instances left behind: cstool-<pid> whose owner is gone. (Other cstool runs on a
// shared machine may own live instances meanwhile; those are not leftovers.)
inline std::vector<std::string> OrphanedCstoolInstances() {
  std::vector<std::string> out;
  for (const std::string& name : CstoolInstances()) {
    const int owner = std::atoi(name.c_str() + 7);
    if (owner <= 0 || !ProcessExists(owner)) out.push_back(name);
  }
  return out;
}

}  // namespace cstool::testing
