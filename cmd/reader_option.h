// --reader and -j, shared by the commands that read trace files (report, diff).
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>

#include "format/trace_file_reader.h"

namespace cstool::cmd {

inline CLI::Option* AddReaderOption(CLI::App& sub, ReaderBackend& reader) {
  return sub
      .add_option("--reader", reader,
                  "Trace file reader: auto (cstool's own for v6/v7, else libtracecmd), fast "
                  "(cstool's own only), libtracecmd")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, ReaderBackend>{{"auto", ReaderBackend::kAuto},
                                               {"fast", ReaderBackend::kFast},
                                               {"libtracecmd", ReaderBackend::kLibTracecmd}},
          CLI::ignore_case))
      ->capture_default_str();
}

inline CLI::Option* AddJobsOption(CLI::App& sub, int& jobs) {
  return sub
      .add_option("-j,--jobs", jobs,
                  "Threads for the file: from 2 on, one decodes while another analyses (with "
                  "compressed data and 2, one decompresses instead), and the others read and "
                  "decompress the CPUs' pages ahead (default: the CPUs this process may run "
                  "on); the output does not depend on N")
      ->check(CLI::Range(1, 1024));
}

}  // namespace cstool::cmd
