// A damaged file read with --salvage: damage that ends one CPU's data early leaves the
// other CPUs' later events one-sided (a wakeup onto that CPU and never the switch-in, a
// parent's wait for a child whose exit is not there). The report then ends where every
// CPU's events are in the file, as for a recording cut short (--max-size, a full disk).
#pragma once

#include <string>

#include "format/trace_file_reader.h"

namespace cstool {

// Reads the CPUs once (records only) to find where the earliest cut CPU's data ends,
// and bounds `reader` there (TraceFileReader::EndAt). Returns the note that says so, and
// names the CPUs cut with no record left (their events are missing from the start); empty
// when no CPU's data was cut short.
std::string EndAtTheFirstCutCpu(TraceFileReader& reader);

}  // namespace cstool
