#include "sched/trace_capabilities.h"

#include <algorithm>
#include <string_view>

namespace cstool {

std::span<const EventFamily> EventFamilies() {
  static const std::vector<EventFamily> kFamilies = {
      {&TraceCapabilities::syscalls,
       {"raw_syscalls:sys_enter", "raw_syscalls:sys_exit"},
       false,
       {EventKind::kSysEnter, EventKind::kSysExit}},
      {&TraceCapabilities::waking, {"sched:sched_waking"}, false, {EventKind::kSchedWaking}},
      {&TraceCapabilities::wakeup, {"sched:sched_wakeup"}, false, {EventKind::kSchedWakeup}},
      {&TraceCapabilities::irqs, {"irq:irq_handler_entry", "irq_vectors:*"}, true, {}},
      {&TraceCapabilities::page_faults, {"exceptions:page_fault_user"}, false, {}},
  };
  return kFamilies;
}

TraceCapabilities CapabilitiesOf(const EventDecoder& decoder) {
  const std::vector<std::string>& missing = decoder.missing_events();
  auto has = [&missing](std::string_view event) {
    return std::find(missing.begin(), missing.end(), event) == missing.end();
  };
  TraceCapabilities caps;
  caps.stat_runtime = decoder.Knows(EventKind::kSchedStatRuntime);
  caps.renames = decoder.Knows(EventKind::kTaskRename);
  for (const EventFamily& f : EventFamilies())
    caps.*f.capability = f.any_event_suffices ? std::any_of(f.events.begin(), f.events.end(), has)
                                              : std::all_of(f.events.begin(), f.events.end(), has);
  return caps;
}

}  // namespace cstool
