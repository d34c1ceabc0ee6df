// Which event families a trace has, from the events its decoder found no format for
// (shared by `report`, which reads files, and `msa`, which reads a live session).
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "decode/event_decoder.h"
#include "sched/state_machine.h"

namespace cstool {

// An event family the model depends on: the capability it gives, and its events as the
// decoder's missing events name them ("irq_vectors:*" for a whole system).
struct EventFamily {
  bool TraceCapabilities::*capability;
  std::vector<std::string_view> events;
  // The family is there when any one of its events is (interrupts: either kind of
  // handler), else only with all of them.
  bool any_event_suffices = false;
  // The records that show it recorded, for a type scan before the analysis; none for a
  // family that only decides notes (its records are counted by the decoding).
  std::vector<EventKind> kinds;
};

// Syscalls, sched_waking, sched_wakeup, interrupts and page faults.
std::span<const EventFamily> EventFamilies();

TraceCapabilities CapabilitiesOf(const EventDecoder& decoder);

}  // namespace cstool
