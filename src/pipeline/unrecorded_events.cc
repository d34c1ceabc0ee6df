#include "pipeline/unrecorded_events.h"

#include <algorithm>
#include <memory>
#include <string_view>

#include "sched/trace_capabilities.h"

namespace cstool {
namespace {

// The family's capability is turned off and its events listed as unrecorded.
void MarkUnrecorded(const EventFamily& f, TraceCapabilities& caps,
                    std::vector<std::string>& unrecorded) {
  caps.*f.capability = false;
  unrecorded.insert(unrecorded.end(), f.events.begin(), f.events.end());
}

}  // namespace

std::vector<std::string> UnrecordedModelEvents(TraceFileReader& reader, const EventDecoder& decoder,
                                               TraceCapabilities& caps) {
  struct Scanned {
    const EventFamily* family;
    bool seen = false;
  };
  std::vector<Scanned> families;
  for (const EventFamily& f : EventFamilies())
    if (!f.kinds.empty() && caps.*f.capability) families.push_back({&f});
  size_t unseen = families.size();
  const size_t salvage_notes = reader.salvage_log().entries().size();
  for (int cpu = 0; cpu < reader.cpus() && unseen > 0; ++cpu) {
    std::unique_ptr<CpuRecordStream> stream = reader.OpenCpu(cpu);
    for (auto batch = stream->NextBatch(); !batch.empty() && unseen > 0;
         batch = stream->NextBatch())
      for (const RawRecord& r : batch) {
        if (r.is_loss()) continue;
        const EventKind kind = decoder.KindOf(decoder.TypeOf(r));
        for (Scanned& s : families) {
          const std::vector<EventKind>& kinds = s.family->kinds;
          if (!s.seen && std::find(kinds.begin(), kinds.end(), kind) != kinds.end()) {
            s.seen = true;
            --unseen;
          }
        }
      }
  }
  reader.ForgetSalvageNotesFrom(salvage_notes);  // the decoding meets the damage again
  std::vector<std::string> unrecorded;
  for (const Scanned& s : families)
    if (!s.seen) MarkUnrecorded(*s.family, caps, unrecorded);
  return unrecorded;
}

std::vector<std::string> UnrecordedNotedEvents(const DecodeStats& stats, TraceCapabilities& caps) {
  // An event counts as recorded when the decoding counted a record of it ("irq_vectors:*":
  // of any event of the system).
  auto recorded = [&stats](std::string_view event) {
    if (event.ends_with('*')) event.remove_suffix(1);
    return std::any_of(stats.events_per_type.begin(), stats.events_per_type.end(),
                       [event](const auto& kv) { return kv.first.starts_with(event); });
  };
  std::vector<std::string> unrecorded;
  for (const EventFamily& f : EventFamilies()) {
    if (!f.kinds.empty() || !(caps.*f.capability)) continue;
    const bool there = f.any_event_suffices
                           ? std::any_of(f.events.begin(), f.events.end(), recorded)
                           : std::all_of(f.events.begin(), f.events.end(), recorded);
    if (!there) MarkUnrecorded(f, caps, unrecorded);
  }
  return unrecorded;
}

}  // namespace cstool
