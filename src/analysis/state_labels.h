// Human-readable names of microstates for the HTML barscopes: "Running (user)",
// "Sleeping: futex", ... (the timeline has its own short ones, analysis/timeline.cc).
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "model/microstate.h"
#include "model/switch_cause.h"
#include "model/syscall_table.h"

namespace cstool {

constexpr std::string_view MicrostateLabel(Microstate m) {
  return kMicrostateNames[static_cast<size_t>(m)].label;
}

}  // namespace cstool
