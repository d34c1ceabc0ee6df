// The synthetic benchmark file of decode_bench and report_bench: 4M events of
// WriteSyntheticWorkload (tests/support/synthetic_workload.h) over 2 or 64 CPUs, and its
// v7 conversion with zstd chunks (none without trace-cmd).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "tests/support/synthetic_trace.h"
#include "tests/support/synthetic_workload.h"

namespace cstool::bench {

// The benchmark file of `cpus` CPUs and its v7 conversion, built on construction and
// removed by the destructor.
class SyntheticFile {
 public:
  static constexpr uint64_t kEvents = 4'000'000;

  // With `with_v7`, also the v7 conversion.
  explicit SyntheticFile(int cpus, bool with_v7 = true) {
    const std::string stem =
        (std::filesystem::temp_directory_path() /
         ("cstool_synthetic_bench_" + std::to_string(::getpid()) + "_" + std::to_string(cpus)))
            .string();
    path_ = stem + ".dat";
    v7_path_ = stem + ".v7.dat";
    // Built in a child: the benchmark's own memory stays as it was. A child it forks later
    // starts from a copy of it, and Linux counts that copy in the child's peak RSS
    // (ru_maxrss keeps the high-water mark of the image exec replaced), so a benchmark
    // process left larger by building 165 MB of records would raise every peak RSS
    // measured after it to its own size.
    if (!with_v7) v7_path_.clear();
    const pid_t pid = ::fork();
    if (pid == 0) {
      // Never returns: the child is a copy of the benchmark, whose exit would run its
      // destructors (and remove the parent's files).
      try {
        Build(cpus, path_, v7_path_);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "synthetic benchmark file %s: %s\n", path_.c_str(), e.what());
        ::_exit(1);
      }
      ::_exit(0);
    }
    int status = 0;
    if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0 || !std::filesystem::exists(path_)) {
      std::fprintf(stderr, "synthetic benchmark file %s could not be built\n", path_.c_str());
      std::error_code ec;
      std::filesystem::remove(path_, ec);
      if (!v7_path_.empty()) std::filesystem::remove(v7_path_, ec);
      std::exit(1);
    }
    if (!v7_path_.empty() && !std::filesystem::exists(v7_path_)) v7_path_.clear();
    ::sync();  // written back before the timed runs, not half a minute into them
  }
  ~SyntheticFile() {
    std::filesystem::remove(path_);
    if (!v7_path_.empty()) std::filesystem::remove(v7_path_);
  }
  const std::string& path() const { return path_; }
  // Empty without trace-cmd (or without `with_v7`).
  const std::string& v7_path() const { return v7_path_; }

 private:
  static void Build(int cpus, const std::string& path, const std::string& v7_path) {
    WriteSyntheticWorkload(cpus, kEvents, path);
    if (!v7_path.empty()) ConvertToV7Zstd(path, v7_path);
  }

  std::string path_;
  std::string v7_path_;
};

}  // namespace cstool::bench
