#include "kernel/kernel_recording.h"

#include "base/errors.h"

namespace cstool {
namespace {

nlohmann::json PhaseJson(const SnapshotPhase& p) {
  return {{"begin_ns", p.begin_ns}, {"end_ns", p.end_ns}};
}

SnapshotPhase PhaseFrom(const nlohmann::json& j, const char* key) {
  SnapshotPhase p;
  if (!j.contains(key) || j[key].is_null()) return p;
  const nlohmann::json& v = j[key];
  if (!v.is_object()) throw Error(std::string("kernel counters: ") + key + " is not an object");
  p.begin_ns = v.value("begin_ns", int64_t{-1});
  p.end_ns = v.value("end_ns", int64_t{-1});
  return p;
}

}  // namespace

bool KernelRecording::IsStartSample(const KernelTaskCounters& c) const {
  return c.source == KernelTaskCounters::Source::kProcSnapshot && start_snapshot.taken() &&
         c.taken_at_ns <= start_snapshot.end_ns;
}

bool KernelRecording::IsEndSample(const KernelTaskCounters& c) const {
  return c.source == KernelTaskCounters::Source::kProcSnapshot && end_snapshot.taken() &&
         c.taken_at_ns >= end_snapshot.begin_ns;
}

nlohmann::json KernelRecording::ToJson() const {
  nlohmann::json j = counters.ToJson();
  j["start_snapshot"] = PhaseJson(start_snapshot);
  j["end_snapshot"] = PhaseJson(end_snapshot);
  j["taskstats"] = taskstats;
  j["delay_accounting"] = delay_accounting;
  return j;
}

KernelRecording KernelRecording::FromJson(const nlohmann::json& j) {
  KernelRecording r;
  r.counters = KernelCounterSet::FromJson(j);
  if (j.is_null()) return r;
  try {
    r.start_snapshot = PhaseFrom(j, "start_snapshot");
    r.end_snapshot = PhaseFrom(j, "end_snapshot");
    r.taskstats = j.value("taskstats", std::string{});
    r.delay_accounting = j.value("delay_accounting", std::string{});
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("kernel counters: malformed JSON: ") + e.what());
  }
  return r;
}

}  // namespace cstool
