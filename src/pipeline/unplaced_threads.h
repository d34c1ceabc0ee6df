// A recording of some processes without fork events: the threads they started cannot be
// told from the others that met them in the trace (a switch partner, a waker), so the
// report shows the named processes only. The note says how many threads that leaves out.
#pragma once

#include <optional>
#include <string>

#include "decode/event_decoder.h"
#include "model/recording_info.h"
#include "sched/state_machine.h"

namespace cstool {

// Empty unless the recording followed processes (not the whole system) and has no
// sched_process_fork, and some thread of the trace is outside them.
std::string UnplacedThreadsNote(const StateMachine& machine, const EventDecoder& decoder,
                                const std::optional<RecordingInfo>& info);

}  // namespace cstool
