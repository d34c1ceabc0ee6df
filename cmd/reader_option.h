// --reader and -j, shared by the commands that read trace files (report, diff).
#pragma once

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <string>
#include <utility>

#include "format/trace_file_reader.h"
#include "pipeline/job_plan.h"

namespace cstool::cmd {

inline CLI::Option* AddReaderOption(CLI::App& sub, ReaderBackend& reader) {
  // By name only (CLI11's enum map would print "{auto->0,...} OR {0,1,2}" to the user).
  CLI::Validator names(
      [](std::string& value) -> std::string {
        static constexpr std::pair<const char*, ReaderBackend> kReaders[] = {
            {"auto", ReaderBackend::kAuto},
            {"fast", ReaderBackend::kFast},
            {"libtracecmd", ReaderBackend::kLibTracecmd}};
        for (const auto& [name, backend] : kReaders)
          if (CLI::detail::to_lower(value) == name) {
            value = std::to_string(static_cast<int>(backend));
            return "";
          }
        return "'" + value + "' is not a reader (auto, fast or libtracecmd)";
      },
      "{auto,fast,libtracecmd}");
  return sub
      .add_option("--reader", reader,
                  "Trace file reader: auto (cstool's own for v6/v7, else libtracecmd), fast "
                  "(cstool's own only), libtracecmd")
      ->transform(names)
      ->type_name("TEXT")
      ->default_str("auto");
}

inline CLI::Option* AddBufferOption(CLI::App& sub, std::string& buffer) {
  return sub.add_option("--buffer", buffer,
                        "The file's buffer (instance) to read, by name (trace-cmd record -B "
                        "NAME); default: the top-level buffer, or the first instance if the "
                        "top-level one holds no data");
}

inline CLI::Option* AddJobsOption(CLI::App& sub, int& jobs) {
  return sub
      .add_option("-j,--jobs", jobs,
                  fmt::format("Threads for the file: from 2 on, one decodes while another "
                              "analyses (with compressed data and 2, one decompresses instead), "
                              "and the others read and decompress the CPUs' pages ahead "
                              "(default: the CPUs this process may run on, and 1 for a file with "
                              "under {} MiB of pages or {} KiB of compressed data); the output "
                              "does not depend on N",
                              kOneThreadPagesBytes >> 20, kOneThreadCompressedBytes >> 10))
      ->check(CLI::Range(1, 1024));
}

}  // namespace cstool::cmd
