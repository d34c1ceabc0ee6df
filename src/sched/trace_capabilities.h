// Which event families a trace has, from the events its decoder found no format for
// (shared by `report`, which reads files, and `msa`, which reads a live session).
#pragma once

#include <string>
#include <vector>

#include "decode/event_decoder.h"
#include "sched/state_machine.h"

namespace cstool {

TraceCapabilities CapabilitiesOf(const EventDecoder& decoder);

}  // namespace cstool
