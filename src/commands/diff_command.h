// `cstool diff BASE... -- NEW...`: analyse every recording as `report` does
// (pipeline/analyze_trace.h), keep what the comparison needs (analysis/diff_input.h), match
// threads and processes across them and render the changes (analysis/diff.h).
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "base/messages.h"
#include "format/trace_file_reader.h"

namespace cstool {

struct DiffOptions {
  std::vector<std::string> base_files;
  std::vector<std::string> new_files;
  std::string format = "table";
  std::string html;          // --html OUT.html ("" = none)
  size_t limit = 10;         // --limit: table rows per section (0: all)
  bool all_threads = false;  // also threads outside the recorded workloads
  bool salvage = false;      // compare what a damaged recording still holds
  ReaderBackend reader = ReaderBackend::kAuto;
  std::string buffer;  // --buffer: each file's buffer instance to read ("": the default)
  int jobs = 0;        // -j: threads reading each file (0: as many as this process may run on)
};

// Throws cstool::Error for an unreadable file (naming it) or a bad option (usage).
int RunDiff(const DiffOptions& options, std::ostream& out, Messages& messages);

}  // namespace cstool
