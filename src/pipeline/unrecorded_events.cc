#include "pipeline/unrecorded_events.h"

#include <algorithm>
#include <memory>
#include <string_view>

namespace cstool {

std::vector<std::string> UnrecordedModelEvents(TraceFileReader& reader, const EventDecoder& decoder,
                                               TraceCapabilities& caps) {
  struct Family {
    bool* capability;
    std::vector<EventKind> kinds;
    std::vector<std::string> names;
    bool seen = false;
  };
  std::vector<Family> families;
  if (caps.syscalls)
    families.push_back({&caps.syscalls,
                        {EventKind::kSysEnter, EventKind::kSysExit},
                        {"raw_syscalls:sys_enter", "raw_syscalls:sys_exit"}});
  if (caps.waking)
    families.push_back({&caps.waking, {EventKind::kSchedWaking}, {"sched:sched_waking"}});
  if (caps.wakeup)
    families.push_back({&caps.wakeup, {EventKind::kSchedWakeup}, {"sched:sched_wakeup"}});
  size_t unseen = families.size();
  const size_t salvage_notes = reader.salvage_log().entries().size();
  for (int cpu = 0; cpu < reader.cpus() && unseen > 0; ++cpu) {
    std::unique_ptr<CpuRecordStream> stream = reader.OpenCpu(cpu);
    for (auto batch = stream->NextBatch(); !batch.empty() && unseen > 0;
         batch = stream->NextBatch())
      for (const RawRecord& r : batch) {
        if (r.is_loss()) continue;
        const EventKind kind = decoder.KindOf(decoder.TypeOf(r));
        for (Family& f : families)
          if (!f.seen && std::find(f.kinds.begin(), f.kinds.end(), kind) != f.kinds.end()) {
            f.seen = true;
            --unseen;
          }
      }
  }
  reader.ForgetSalvageNotesFrom(salvage_notes);  // the decoding meets the damage again
  std::vector<std::string> unrecorded;
  for (Family& f : families) {
    if (f.seen) continue;
    *f.capability = false;
    unrecorded.insert(unrecorded.end(), f.names.begin(), f.names.end());
  }
  return unrecorded;
}

std::vector<std::string> UnrecordedNotedEvents(const DecodeStats& stats, TraceCapabilities& caps) {
  std::vector<std::string> unrecorded;
  auto recorded = [&stats](std::string_view prefix) {
    return std::any_of(stats.events_per_type.begin(), stats.events_per_type.end(),
                       [prefix](const auto& kv) { return kv.first.starts_with(prefix); });
  };
  if (caps.irqs && !recorded("irq:irq_handler_entry") && !recorded("irq_vectors:")) {
    caps.irqs = false;
    unrecorded.insert(unrecorded.end(), {"irq:irq_handler_entry", "irq_vectors:*"});
  }
  if (caps.page_faults && !recorded("exceptions:page_fault_user")) {
    caps.page_faults = false;
    unrecorded.emplace_back("exceptions:page_fault_user");
  }
  return unrecorded;
}

}  // namespace cstool
