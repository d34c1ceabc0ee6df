#include <cstring>

#include "output/irq_output.h"
#include "output/noise_output.h"

namespace cstool {
namespace {

nlohmann::json CountJson(const IrqCount& c) { return {{"count", c.count}, {"time_ns", c.time_ns}}; }

class IrqJsonOutput : public IrqOutput {
 public:
  explicit IrqJsonOutput(std::ostream& os) : os_(os) {}
  void RenderSummary(const IrqReport& r) override { os_ << IrqReportToJson(r).dump(2) << "\n"; }
  void RenderNoise(const IrqReport& r) override { os_ << IrqNoiseToJson(r).dump(2) << "\n"; }
  void RenderAffinity(const std::vector<int>& cpus, const std::vector<IrqAffinity>& irqs) override {
    os_ << IrqAffinityToJson(cpus, irqs).dump(2) << "\n";
  }
  void RenderAffinityChange(const AffinityChangeResult& result) override {
    os_ << AffinityChangeToJson(result).dump(2) << "\n";
  }

 private:
  std::ostream& os_;
};

}  // namespace

std::unique_ptr<IrqOutput> MakeIrqJsonOutput(std::ostream& os) {
  return std::make_unique<IrqJsonOutput>(os);
}

namespace {

nlohmann::json TraceJson(const IrqReport& r) {
  nlohmann::json lost = nlohmann::json::object();
  for (auto [cpu, n] : r.lost_events) lost[std::to_string(cpu)] = n;
  return {{"file", r.file}, {"events", r.events},  {"duration_ns", r.duration_ns},
          {"cpus", r.cpus}, {"lost_events", lost}, {"notes", r.notes}};
}

}  // namespace

nlohmann::json IrqNoiseToJson(const IrqReport& r) {
  return {{"trace", TraceJson(r)},
          {"noise", r.noise ? NoiseReportToJson(*r.noise) : nlohmann::json(nullptr)}};
}

nlohmann::json IrqReportToJson(const IrqReport& r) {
  nlohmann::json trace = TraceJson(r);
  nlohmann::json sources = nlohmann::json::array();
  for (const IrqSourceSummary& s : r.sources) {
    nlohmann::json per_cpu = nlohmann::json::object();
    for (auto& [cpu, c] : s.per_cpu) per_cpu[std::to_string(cpu)] = CountJson(c);
    nlohmann::json j = {{"name", s.name},       {"kind", IrqKindName(s.kind)}, {"count", s.count},
                        {"time_ns", s.time_ns}, {"mean_ns", s.MeanNs()},       {"max_ns", s.max_ns},
                        {"per_cpu", per_cpu}};
    if (s.kind == IrqKind::kHardirq && s.name.rfind("irq:", 0) == 0)
      j["irq"] = std::atoi(s.name.c_str() + 4);
    sources.push_back(std::move(j));
  }
  nlohmann::json tasks = nlohmann::json::array();
  for (const IrqTaskSummary& t : r.tasks) {
    nlohmann::json src = nlohmann::json::object();
    for (auto& [name, c] : t.sources) src[name] = CountJson(c);
    tasks.push_back({{"tid", t.tid},
                     {"pid", t.pid},
                     {"comm", t.comm},
                     {"lost_ns", t.LostNs()},
                     {"irq_ns", t.irq_ns},
                     {"softirq_ns", t.softirq_ns},
                     {"count", t.count},
                     {"sources", src}});
  }
  return {{"trace", trace},
          {"sources", sources},
          {"tasks", tasks},
          {"idle", CountJson(r.idle)},
          {"idle_softirq", CountJson(r.idle_softirq)},
          {"recorder",
           {{"count", r.recorder.count},
            {"irq_ns", r.recorder.irq_ns},
            {"softirq_ns", r.recorder.softirq_ns}}}};
}

nlohmann::json IrqAffinityToJson(const std::vector<int>& cpus,
                                 const std::vector<IrqAffinity>& irqs) {
  nlohmann::json list = nlohmann::json::array();
  for (const IrqAffinity& a : irqs) {
    nlohmann::json counts = nlohmann::json::object();
    for (size_t i = 0; i < a.counts.size() && i < cpus.size(); ++i)
      counts[std::to_string(cpus[i])] = a.counts[i];
    list.push_back({{"irq", a.irq},
                    {"chip", a.chip},
                    {"name", a.name},
                    {"counts", counts},
                    {"affinity", a.affinity},
                    {"effective", a.effective}});
  }
  return {{"irqs", list}};
}

nlohmann::json AffinityChangeToJson(const AffinityChangeResult& result) {
  nlohmann::json list = nlohmann::json::array();
  for (const AffinityChange& c : result.changes) {
    nlohmann::json j = {{"irq", c.irq},
                        {"name", c.name},
                        {"outcome", AffinityOutcomeName(c.outcome)},
                        {"before", c.before},
                        {"requested", c.requested},
                        {"after", c.after},
                        {"effective", c.effective}};
    if (c.error != 0) j["error"] = std::strerror(c.error);
    list.push_back(std::move(j));
  }
  return {{"changes", list}, {"restore_command", result.restore_command}};
}

}  // namespace cstool
