// How the report names the steal time a recording met: an amount at its readings'
// resolution, and where it was read (RecordingInfo::steal_source).
#pragma once

#include <cstdint>
#include <string>

#include "model/recording_info.h"

namespace cstool {

// "20 ms" from /proc/stat's ticks, "0.412 ms" from the runqueue clocks.
std::string StealMsText(const RecordingInfo& info, int64_t ns);

// "steal time, /proc/stat, in 10 ms steps, each CPU's within a step", or "steal time, the
// runqueue clocks, to the ns".
std::string StealSourceText(const RecordingInfo& info);

}  // namespace cstool
