#include "sched/trace_capabilities.h"

#include <algorithm>
#include <string_view>

namespace cstool {
namespace {

bool Has(const std::vector<std::string>& missing, std::string_view event) {
  return std::find(missing.begin(), missing.end(), event) == missing.end();
}

}  // namespace

TraceCapabilities CapabilitiesOf(const EventDecoder& decoder) {
  const std::vector<std::string>& missing = decoder.missing_events();
  TraceCapabilities caps;
  caps.stat_runtime = decoder.Knows(EventKind::kSchedStatRuntime);
  caps.syscalls = Has(missing, "raw_syscalls:sys_enter") && Has(missing, "raw_syscalls:sys_exit");
  caps.waking = Has(missing, "sched:sched_waking");
  caps.wakeup = Has(missing, "sched:sched_wakeup");
  caps.irqs = Has(missing, "irq:irq_handler_entry") || Has(missing, "irq_vectors:*");
  caps.page_faults = Has(missing, "exceptions:page_fault_user");
  return caps;
}

}  // namespace cstool
