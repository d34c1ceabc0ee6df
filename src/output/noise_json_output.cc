#include "output/noise_output.h"

namespace cstool {

nlohmann::json NoiseReportToJson(const NoiseReport& r) {
  nlohmann::json cpus = nlohmann::json::array();
  for (const CpuNoise& c : r.cpus) {
    nlohmann::json j = {{"cpu", c.cpu},
                        {"periods", c.periods},
                        {"runtime_ns", c.runtime_ns},
                        {"noise_ns", c.noise_ns},
                        {"cpu_available_percent", c.AvailablePercent()},
                        {"max_noise_ns", c.max_noise_ns},
                        {"max_single_ns", c.max_single_ns},
                        {"unknown_ns", c.unknown_ns},
                        {"hw", nullptr}};  // not measured: see analysis/irq_noise.h
    for (size_t i = 0; i < kNoiseSources; ++i) {
      const NoiseStats& s = c.sources[i];
      j[std::string(NoiseSourceName(static_cast<NoiseSource>(i)))] = {
          {"count", s.count}, {"time_ns", s.time_ns}, {"max_single_ns", s.max_single_ns}};
    }
    nlohmann::json names = nlohmann::json::object();
    for (const auto& [name, s] : c.names)
      names[name] = {
          {"source", NoiseSourceName(s.source)}, {"count", s.count}, {"time_ns", s.time_ns}};
    j["by_name"] = std::move(names);
    cpus.push_back(std::move(j));
  }
  return {
      {"window",
       {{"start_ns", r.window.start}, {"end_ns", r.window.end}, {"period_ns", r.window.period_ns}}},
      {"cpus", cpus}};
}

}  // namespace cstool
