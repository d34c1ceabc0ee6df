// `record --trigger COND`: the flight recorder's live condition. The records read from
// the ring buffers go, merged in time order, through the same scheduler state machine
// `report` and `msa` use; a StateConditionObserver watches its microstate segments.
#pragma once

#include <memory>
#include <string>

#include "recording/live_trigger.h"

namespace cstool {

// Parses COND (cstool::Error, exit 2, when it is not understood).
std::unique_ptr<LiveTrigger> MakeStateTrigger(const std::string& condition);

}  // namespace cstool
