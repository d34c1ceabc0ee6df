// The event formats of a live tracefs session, in the two shapes cstool consumes them:
// a tep_handle for decoding the ring buffer as it is read (`cstool msa`), and the
// format part of a trace.dat file (TraceFileContents) for saving what was read.
#pragma once

#include "format/trace_file_writer.h"
#include "format/trace_handles.h"
#include "tracefs/tracefs_session.h"

namespace cstool {

// header_page and every enabled event's format parsed into a new tep_handle.
// Throws cstool::Error if the header page cannot be parsed.
TepHandlePtr LoadSessionTep(const TracefsSession& session, int cpus);

// Everything of a trace.dat file but the per-CPU data and cstool's info: page size,
// headers, event formats, printk formats and the trace clock.
TraceFileContents SessionTraceContents(const TracefsSession& session);
// Adds the formats of `session`'s events that `contents` lacks, under their systems (also
// a second instance's events, whose records go to a buffer of their own in the file).
void AddEventFormats(const TracefsSession& session, TraceFileContents& contents);

}  // namespace cstool
