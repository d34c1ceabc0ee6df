// Writes a trace-cmd trace.dat v6 file (layout: format/trace_file_format.h) from texts
// captured from tracefs and per-CPU files of raw ring-buffer pages. It does not touch
// tracefs itself, so it can be tested with canned inputs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace cstool {

struct EventSystemFormats {
  std::string system;
  std::vector<std::string> formats;  // contents of events/<system>/<event>/format
};

struct CpuTraceData {
  std::string stats;                 // per_cpu/cpuN/stats (without the "CPU: N" line)
  std::filesystem::path pages_file;  // raw sub-buffer pages; empty path = no data
};

struct TraceFileContents {
  uint32_t page_size = 4096;
  std::string header_page;   // events/header_page
  std::string header_event;  // events/header_event
  std::vector<std::string> ftrace_formats;
  std::vector<EventSystemFormats> systems;
  std::string kallsyms;
  std::string printk_formats;
  std::string saved_cmdlines;
  std::string trace_clock;         // contents of trace_clock, e.g. "local [mono] ..."
  std::vector<CpuTraceData> cpus;  // index = CPU number
  std::string cstool_info_json;    // RecordingInfo JSON; not written when empty
};

// Writes `path` atomically: everything goes to "<path>.tmp", which is renamed over
// `path` only when complete. On any error the temporary file is removed and
// cstool::Error names the path that failed.
void WriteTraceFile(const std::filesystem::path& path, const TraceFileContents& contents);

}  // namespace cstool
