// The `-c` event list: "instructions,cycles,page-faults,r01c2,instructions:ebs=100000".
// Each name maps to a perf_event_attr type and config; `:ebs=N` asks for event-based
// sampling every N events. Hardware events need a PMU; software events work on every
// kernel (a VM without a virtual PMU included).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cstool {

struct CounterEvent {
  std::string name;   // as the user wrote it, without the :ebs suffix
  uint32_t type = 0;  // PERF_TYPE_HARDWARE, PERF_TYPE_SOFTWARE or PERF_TYPE_RAW
  uint64_t config = 0;
  uint64_t ebs_period = 0;  // :ebs=N; 0 = counting only
  bool hardware() const;    // needs a PMU (hardware or raw)
};

// Parses a comma-separated list; throws cstool::Error (usage) naming the known events
// for an unknown one, a malformed raw code or :ebs value, a name given twice, or more
// than one :ebs event (the sampling event leads the group; see counters/perf_group.h).
std::vector<CounterEvent> ParseEventList(std::string_view list);

// The named events, in the order `--help` and errors list them.
std::vector<std::string> KnownHardwareEvents();
std::vector<std::string> KnownSoftwareEvents();
// Every name `-c` takes, for a command's --help: "hardware: instructions, ..., rNNNN;
// software: task-clock, ...".
std::string KnownEventsText();

// Opens every event once on the calling thread to find out whether this machine can
// count it; throws cstool::Error (usage) with what is missing and what works instead
// (no PMU: the software events). A hardware :ebs event is refused the same way.
void ProbeEvents(const std::vector<CounterEvent>& events);

}  // namespace cstool
