// The osnoise view's table and JSON on a synthetic model: the shape users compare with
// `rtla osnoise top`. Regenerate after an intended change with
//   CSTOOL_UPDATE_GOLDEN=1 build/cstool_unit_tests --gtest_filter='GoldenNoise*'
// and review the diff.
#include "output/noise_output.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "output/irq_output.h"
#include "tests/support/files.h"

namespace cstool {
namespace {

const std::string kTimer = "vector:local_timer";
const std::string kVirtio = "irq:24 virtio0";
const std::string kSoftTimer = "softirq:TIMER";
const std::string kRcu = "softirq:RCU";
const std::string kKworker = "thread:kworker/1:1/45";
const std::string kCstool = "thread:cstool/4242";

// Two CPUs over 2.5 s in periods of 1 s: CPU 0 busy with nested noise, CPU 1 quiet but
// unknown for its first 2 ms.
IrqReport SyntheticReport() {
  constexpr int64_t kMs = 1000000;
  std::vector<NoiseSpan> cpu0;
  for (int i = 0; i < 10; ++i) {
    int64_t t = i * 250 * kMs;
    cpu0.push_back({NoiseSource::kIrq, t + kMs, t + kMs + 4000, &kTimer});
    cpu0.push_back({NoiseSource::kSoftirq, t + kMs + 4000, t + kMs + 9000, &kSoftTimer});
  }
  cpu0.push_back({NoiseSource::kThread, 1200 * kMs, 1203 * kMs, &kKworker});
  cpu0.push_back({NoiseSource::kIrq, 1201 * kMs, 1201 * kMs + 20000, &kVirtio});
  cpu0.push_back({NoiseSource::kSoftirq, 1201 * kMs + 20000, 1201 * kMs + 50000, &kRcu});
  cpu0.push_back({NoiseSource::kThread, 2000 * kMs, 2000 * kMs + 70000, &kCstool});
  NoiseWindow window{0, 2500 * kMs, 1000 * kMs};
  IrqReport r;
  r.events = 1234;
  r.duration_ns = 2500 * kMs;
  r.cpus = {0, 1};
  r.lost_events = {{0, 0}, {1, 0}};
  NoiseReport noise;
  noise.window = window;
  noise.cpus.push_back(MeasureCpuNoise(0, cpu0, window));
  noise.cpus.push_back(MeasureCpuNoise(1, {}, window));
  noise.cpus.back().unknown_ns = 2 * kMs;
  r.noise = noise;
  return r;
}

void CheckGolden(const std::string& actual, const std::string& name) {
  std::string path = std::string(CSTOOL_SOURCE_DIR) + "/tests/golden/" + name;
  if (std::getenv("CSTOOL_UPDATE_GOLDEN")) {
    std::ofstream(path) << actual;
    GTEST_SKIP() << "updated " << path;
  }
  std::string expected = testing::ReadWholeFile(path);
  ASSERT_FALSE(expected.empty()) << path << " is missing";
  EXPECT_EQ(actual, expected) << name << " changed; see the header comment to regenerate";
}

TEST(GoldenNoise, IrqNoiseTable) {
  std::ostringstream out;
  MakeIrqOutput("table", out)->RenderNoise(SyntheticReport());
  CheckGolden(out.str(), "irq_noise.table");
}

TEST(GoldenNoise, IrqNoiseJson) {
  std::ostringstream out;
  MakeIrqOutput("json", out)->RenderNoise(SyntheticReport());
  CheckGolden(out.str(), "irq_noise.json");
}

TEST(NoiseOutput, JsonSourcesSumToNoiseAndHwIsNull) {
  nlohmann::json j = NoiseReportToJson(*SyntheticReport().noise);
  ASSERT_EQ(j["cpus"].size(), 2u);
  const nlohmann::json& c0 = j["cpus"][0];
  EXPECT_TRUE(c0["hw"].is_null());
  int64_t sum = 0;
  for (const char* s : {"nmi", "irq", "softirq", "thread"}) sum += c0[s]["time_ns"].get<int64_t>();
  EXPECT_EQ(sum, c0["noise_ns"].get<int64_t>());
  EXPECT_EQ(c0["irq"]["count"], 11);
  EXPECT_EQ(c0["softirq"]["count"], 11);
  EXPECT_EQ(c0["thread"]["count"], 2);
  EXPECT_EQ(c0["by_name"]["vector:local_timer"]["count"], 10);
  EXPECT_EQ(c0["periods"], 3);
  EXPECT_EQ(j["window"]["period_ns"], 1000000000);
}

}  // namespace
}  // namespace cstool
