// Events a file not written by cstool has formats for but no record of. trace-cmd extract
// stores the format of every event the kernel has, enabled or not, so there a format does
// not say the event was recorded; its records do. (cstool's own files store the formats of
// what they recorded only.) Each event family found unrecorded has its capability turned
// off, and its events are returned to be listed as missing.
#pragma once

#include <string>
#include <vector>

#include "decode/decode_trace.h"
#include "decode/event_decoder.h"
#include "format/trace_file_reader.h"
#include "sched/state_machine.h"

namespace cstool {

// Syscalls, sched_waking and sched_wakeup, which the state machine's model depends on:
// found before the analysis by reading record types, up to the first record of each
// family (in the first pages of a file that has them all; a file without one is read
// through).
std::vector<std::string> UnrecordedModelEvents(TraceFileReader& reader, const EventDecoder& decoder,
                                               TraceCapabilities& caps);

// Interrupts and page faults, which only decide notes: from what the decoding counted.
std::vector<std::string> UnrecordedNotedEvents(const DecodeStats& stats, TraceCapabilities& caps);

}  // namespace cstool
