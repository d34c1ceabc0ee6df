// What the integration tests require of `report --check` on a real recording: its own
// verdict, PASS, unless the host stole CPU time meanwhile, and then no more than the steal
// explains.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>

namespace cstool::testing {

// Steal time (a VM's host running something else) is in the traced times and in neither
// of the kernel's, and nothing places it: a recording that met some may differ by up to
// what it met, measured per recording (check.host_steal_ns: to the ns from the runqueue
// clocks on these machines, where /proc/stat's 10 ms steps read 0 for a short one).
inline int64_t HostStealNs(const nlohmann::json& check) {
  const auto& steal = check.at("host_steal_ns");
  return steal.is_null() ? 0 : steal.get<int64_t>();
}

// The most steal the report's readings allow, all CPUs: the reading itself where it is to
// the ns (the runqueue clocks), one step more per CPU where it is in steps (/proc/stat).
inline int64_t MostStealNs(const nlohmann::json& report) {
  const auto& trace = report.at("trace");
  if (!trace.contains("host_steal")) return 0;
  const auto& steal = trace.at("host_steal");
  const int64_t step = steal.at("step_ns").get<int64_t>();
  const auto cpus = static_cast<int64_t>(steal.at("per_cpu_ns").size());
  return steal.at("total_ns").get<int64_t>() + (step > 1 ? step * cpus : 0);
}

// `report --check`'s verdict on a report (JSON, with --check) of a recording whose test is
// not about time fidelity: PASS; or, where the host stole CPU time while it recorded (the
// check's FAIL then names the steal), the switch counts exact and each time within the
// check's own tolerance plus what the host stole: a failure the steal explains, and no
// more. A host that stole nothing leaves no way out of the strict verdict.
//
// `times_of`, when given, names the threads whose times the test is about (a system-wide
// recording's workload): every thread's switch counts are still held exact, the others'
// times left to the check's verdict (`make fidelity`'s system-wide rows track them; a
// kernel thread's wait under load is an open residue, docs/accounting.md).
inline void ExpectCheckPasses(const nlohmann::json& report,
                              const std::function<bool(const nlohmann::json&)>& times_of = {}) {
  const nlohmann::json& check = report.at("check");
  EXPECT_GT(check.at("compared").get<uint32_t>(), 0u) << check.at("verdict").get<std::string>();
  if (check.at("passed").get<bool>()) return;
  if (!times_of) {
    ASSERT_GT(HostStealNs(check), 0) << check.at("verdict").get<std::string>();
  }
  const int64_t steal = MostStealNs(report);
  for (const auto& t : check.at("threads")) {
    const std::string status = t.at("status");
    if (status != "agree" && status != "DISAGREE") continue;
    EXPECT_TRUE(t.at("ok").at("switches").get<bool>()) << t.dump(2);
    if (times_of && !times_of(t)) continue;
    if (!t.at("times_judged").get<bool>()) continue;
    for (const auto& [q, tol] : {std::pair{"on_cpu_ns", "on_cpu"}, {"wait_cpu_ns", "wait_cpu"}}) {
      const int64_t traced = t.at("traced").at(q);
      const int64_t kernel = t.at("kernel").at(q);
      const int64_t maybe_more = std::string_view(q) == "wait_cpu_ns" && kernel > traced
                                     ? t.at("wait_maybe_more_ns").get<int64_t>()
                                     : 0;
      // (The tolerance holds the thread's unknown time already.)
      const int64_t allowed = t.at("tolerance_ns").at(tol).get<int64_t>() + maybe_more + steal;
      EXPECT_LE(std::llabs(traced - kernel), allowed)
          << q << " beyond the check's tolerance and " << steal << " ns of steal: " << t.dump(2);
    }
  }
}

}  // namespace cstool::testing
