// Writes a trace-cmd trace.dat file from texts captured from tracefs and per-CPU files of
// raw ring-buffer pages: v6 (layout: format/trace_file_format.h) with the pages as they
// are, or v7 (man 5 trace-cmd.dat.v7) with compressed sections and per-CPU data in
// compressed chunks, as trace-cmd writes it. It does not touch tracefs itself, so it can
// be tested with canned inputs.
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
  std::string stats;  // per_cpu/cpuN/stats (without the "CPU: N" line)
  // Raw sub-buffer pages, or with TraceFileContents::compression their compressed
  // chunks, each "u32 compressed size, u32 size, compressed bytes" (AppendChunk); empty
  // path = no data.
  std::filesystem::path pages_file;
};

// A ring buffer of another tracefs instance stored beside the top one, laid out as
// trace-cmd stores `record -B NAME` instances (its own CPU data table), but under
// cstool's option id (tracefile::kOptionCstoolBuffer), which trace-cmd skips; its CPUs are
// numbered like the top buffer's.
struct InstanceTraceData {
  std::string name;
  std::vector<CpuTraceData> cpus;  // index = CPU number
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
  std::vector<InstanceTraceData> instances;
  std::string cstool_info_json;  // RecordingInfo JSON; not written when empty
  // "" writes v6 with pages in place; "zstd" or "zlib" writes v7 with compressed chunks.
  std::string compression;
};

// Appends one compressed chunk of whole pages to `out` in the layout of a v7 file's CPU
// data (u32 compressed size, u32 uncompressed size, the compressed bytes).
class Compressor;
void AppendChunk(Compressor& compressor, std::string_view pages, std::string& out);

// The whole chunks at the start of a chunk file: their number and their bytes (a chunk
// cut short, e.g. by a kill while it was written, is not counted). Throws cstool::Error
// if the file cannot be read.
struct ChunkExtent {
  uint32_t chunks = 0;
  uint64_t bytes = 0;
};
ChunkExtent ScanChunks(const std::filesystem::path& file);

// Writes `path` atomically: everything goes to "<path>.tmp", which is renamed over
// `path` only when complete. On any error the temporary file is removed and
// cstool::Error names the path that failed.
void WriteTraceFile(const std::filesystem::path& path, const TraceFileContents& contents);

}  // namespace cstool
