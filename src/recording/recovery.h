// What a killed recording leaves, and making a trace.dat of it. While recording, the
// per-CPU pages go to OUT.cpuN.tmp as they are read, and OUT.recovery.json holds what the
// file needs besides them (the event formats, the recording info known at the start),
// written before tracing starts. A recording that ends normally (a signal included)
// writes OUT and removes both; after kill -9 or an OOM kill they remain, and so they do
// when writing OUT itself fails (a full disk), the note then rewritten with the
// recording's end; `cstool record --recover OUT` assembles them into OUT.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "base/messages.h"
#include "format/trace_file_writer.h"
#include "model/recording_info.h"

namespace cstool {

// The suffix of the recorder's instance for the unfiltered run-time buffer (the file's
// tracefile::kUnfilteredRuntimeBuffer): --recover reads what a killed one still held.
inline constexpr std::string_view kUnfilteredInstanceSuffix = "runtime";

std::filesystem::path RecoveryNoteFor(const std::filesystem::path& out);
// A CPU's page file: of the top buffer, or of the buffer instance `buffer`.
std::filesystem::path PagesFileFor(const std::filesystem::path& out, int cpu,
                                   std::string_view buffer = {});

// What the recorder knew when it wrote the note. While recording: what the file needs
// besides the pages as known at the start; what the end brings (the kernel's counters,
// the loss statistics, the pages still in the ring buffers) is then missing from a
// recovery. Ended: rewritten when writing the file failed, with everything the file
// would have held (each CPU's stats from `contents` too) and the sizes of its page files,
// so that the recovered file loses nothing while those are as they were.
enum class RecoveryNoteStage { kRecording, kEnded };

// Written atomically (a temporary file renamed over it). Throws cstool::Error.
void WriteRecoveryNote(const std::filesystem::path& out, const TraceFileContents& contents,
                       const RecordingInfo& info, int file_cpus,
                       RecoveryNoteStage stage = RecoveryNoteStage::kRecording);

// The pid of a recorder still writing into `out` (its note names it and it lives), or 0.
int LiveRecorderOf(const std::filesystem::path& out);

// The leftovers of an interrupted recording into `out`: its recovery note and page
// files that exist, empty when there are none. Empty page files without a note (killed
// before tracing began: nothing to keep) are removed instead.
std::vector<std::filesystem::path> LeftoversOf(const std::filesystem::path& out);

struct RecoveryResult {
  uint64_t bytes = 0;          // of event pages recovered from the page files
  uint64_t drained_bytes = 0;  // and from the killed recorder's instance (unread there)
  bool drained = false;        // its instance was read (else what it held is missing)
  int cpus = 0;                // CPUs with pages
  bool ended = false;          // the recording had ended: nothing is missing
};

// Assembles `out` from its leftovers and removes them, and the killed recorder's tracefs
// instance when this process may. Throws cstool::Error when there is no recovery note or
// it is unreadable (the page files are left as they are).
RecoveryResult RecoverRecording(const std::filesystem::path& out, Messages& messages);

}  // namespace cstool
