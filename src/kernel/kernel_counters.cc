#include "kernel/kernel_counters.h"

#include <time.h>

#include "base/enum_names.h"
#include "base/errors.h"

namespace cstool {

constexpr EnumNames<KernelTaskCounters::Source, 2> kSourceNames{
    {"taskstats_exit", "proc_snapshot"}};
static_assert(static_cast<size_t>(KernelTaskCounters::Source::kProcSnapshot) + 1 ==
              kSourceNames.size());

std::string_view SourceName(KernelTaskCounters::Source s) { return kSourceNames(s); }

std::optional<KernelTaskCounters::Source> ParseSourceName(const std::string& name) {
  return kSourceNames.Parse(name);
}

nlohmann::json CounterValuesJson(const KernelTaskCounters& c) {
  nlohmann::json j = {{"source", SourceName(c.source)},
                      {"nvcsw", c.nvcsw},
                      {"nivcsw", c.nivcsw},
                      {"exec_runtime_ns", c.exec_runtime_ns},
                      {"run_delay_ns", c.run_delay_ns},
                      {"run_delay_count", c.run_delay_count},
                      {"taken_at_ns", c.taken_at_ns}};
  if (c.blkio_delay_ns) j["blkio_delay_ns"] = *c.blkio_delay_ns;
  if (c.swapin_delay_ns) j["swapin_delay_ns"] = *c.swapin_delay_ns;
  if (c.switches_read_to_ns > 0) {
    j["switches_read_from_ns"] = c.switches_read_from_ns;
    j["switches_read_to_ns"] = c.switches_read_to_ns;
  }
  return j;
}

void to_json(nlohmann::json& j, const KernelTaskCounters& c) {
  j = CounterValuesJson(c);
  j["tid"] = c.tid;
  j["tgid"] = c.tgid;
  j["ppid"] = c.ppid;
  j["comm"] = c.comm;
}

void from_json(const nlohmann::json& j, KernelTaskCounters& c) {
  if (!j.is_object()) throw Error("kernel counters: record is not a JSON object");
  c = KernelTaskCounters{};
  c.tid = j.value("tid", 0);
  c.tgid = j.value("tgid", 0);
  c.ppid = j.value("ppid", 0);
  c.comm = j.value("comm", std::string{});
  const std::string source = j.value("source", std::string{"proc_snapshot"});
  auto parsed = ParseSourceName(source);
  if (!parsed) throw Error("kernel counters: unknown source \"" + source + "\"");
  c.source = *parsed;
  c.nvcsw = j.value("nvcsw", uint64_t{0});
  c.nivcsw = j.value("nivcsw", uint64_t{0});
  c.exec_runtime_ns = j.value("exec_runtime_ns", int64_t{0});
  c.run_delay_ns = j.value("run_delay_ns", int64_t{0});
  c.run_delay_count = j.value("run_delay_count", uint64_t{0});
  c.taken_at_ns = j.value("taken_at_ns", int64_t{0});
  c.switches_read_from_ns = j.value("switches_read_from_ns", int64_t{0});
  c.switches_read_to_ns = j.value("switches_read_to_ns", int64_t{0});
  if (c.switches_read_to_ns != 0 &&
      (c.switches_read_from_ns <= 0 || c.switches_read_from_ns > c.switches_read_to_ns ||
       c.switches_read_to_ns > c.taken_at_ns))
    throw Error("kernel counters: switches_read_from_ns/to_ns not inside the read of tid " +
                std::to_string(c.tid));
  if (j.contains("blkio_delay_ns") && !j["blkio_delay_ns"].is_null())
    c.blkio_delay_ns = j["blkio_delay_ns"].get<int64_t>();
  if (j.contains("swapin_delay_ns") && !j["swapin_delay_ns"].is_null())
    c.swapin_delay_ns = j["swapin_delay_ns"].get<int64_t>();
}

void KernelCounterSet::Add(KernelTaskCounters c) {
  by_tid_.emplace(c.tid, records_.size());
  records_.push_back(std::move(c));
}

void KernelCounterSet::AddAll(const std::vector<KernelTaskCounters>& cs) {
  for (const auto& c : cs) Add(c);
}

const KernelTaskCounters* KernelCounterSet::Find(int32_t tid) const {
  const KernelTaskCounters* exit = Find(tid, KernelTaskCounters::Source::kTaskstatsExit);
  return exit ? exit : Find(tid, KernelTaskCounters::Source::kProcSnapshot);
}

const KernelTaskCounters* KernelCounterSet::Find(int32_t tid,
                                                 KernelTaskCounters::Source source) const {
  const KernelTaskCounters* best = nullptr;
  auto [lo, hi] = by_tid_.equal_range(tid);
  for (auto it = lo; it != hi; ++it) {  // equal keys keep insertion order
    const KernelTaskCounters& c = records_[it->second];
    if (c.source == source) best = &c;
  }
  return best;
}

std::vector<const KernelTaskCounters*> KernelCounterSet::FindAll(int32_t tid) const {
  std::vector<const KernelTaskCounters*> out;
  auto [lo, hi] = by_tid_.equal_range(tid);
  for (auto it = lo; it != hi; ++it) out.push_back(&records_[it->second]);
  return out;
}

nlohmann::json KernelCounterSet::ToJson() const {
  return {{"version", 1}, {"records", records_}, {"counters", counters_}, {"notes", notes_}};
}

KernelCounterSet KernelCounterSet::FromJson(const nlohmann::json& j) {
  KernelCounterSet set;
  if (j.is_null()) return set;
  if (!j.is_object()) throw Error("kernel counters: not a JSON object");
  try {
    if (j.contains("records")) {
      for (const auto& r : j.at("records")) set.Add(r.get<KernelTaskCounters>());
    }
    if (j.contains("counters")) {
      for (const auto& [name, n] : j.at("counters").items())
        set.counters_[name] = n.get<uint64_t>();
    }
    if (j.contains("notes")) set.notes_ = j.at("notes").get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("kernel counters: malformed JSON: ") + e.what());
  }
  return set;
}

int64_t MonotonicNowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace cstool
