// The pictures of a real recording: `report --timeline` gives trace-event JSON with
// slices for every workload thread and every CPU, and `report --html` gives a page
// that headless Chromium renders with both barscopes and one row per workload thread;
// a screenshot of the bursty workload shows every thread's short bursts on a page
// that fits a 1400-px window.
#include <gtest/gtest.h>
#include <png.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "tests/support/files.h"
#include "tests/support/run_command.h"

namespace cstool::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int64_t kCpuPid = 1'000'000'000;  // TimelineObserver::kCpuPid

// A CPU track's run slice is named "comm tid".
int64_t RunTid(const json& slice) {
  const std::string name = slice.at("name");
  return std::stoll(name.substr(name.rfind(' ') + 1));
}

std::string FindChromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    CommandResult r = RunCommand({"sh", "-c", std::string("command -v ") + name});
    if (r.status == 0 && !r.out.empty()) return r.out.substr(0, r.out.find('\n'));
  }
  return {};
}

// Headless Chromium on a page with a fresh profile in `dir`.
CommandResult RunChromium(const std::string& chromium, const fs::path& dir, const fs::path& html,
                          const std::string& window, const std::vector<std::string>& extra) {
  fs::path profile = dir / "profile";
  fs::remove_all(profile);
  fs::create_directories(profile);
  std::vector<std::string> argv = {chromium,
                                   "--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--disable-quic",
                                   "--no-first-run",
                                   "--disable-background-networking",
                                   "--disable-component-update",
                                   "--disable-sync",
                                   "--enable-logging=stderr",
                                   "--v=0",
                                   "--force-device-scale-factor=1",
                                   "--user-data-dir=" + profile.string(),
                                   "--window-size=" + window};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back("file://" + html.string());
  return RunCommand(argv);
}

// One recording of the demo workload shared by the tests of this file.
class VizTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!TracefsUnavailableReason().empty()) return;
    dir_ = fs::temp_directory_path() / ("cstool_viz_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    CommandResult rec = RunCommand({CSTOOL_BINARY, "record", "-o", (dir_ / "r.dat").string(), "--",
                                    std::string(CSTOOL_WORKLOAD_DIR) + "/cstool_workload", "demo"});
    ASSERT_EQ(rec.status, 0) << rec.err;
    CommandResult rep = RunCommand({CSTOOL_BINARY, "report", (dir_ / "r.dat").string(), "--format",
                                    "json", "--timeline", (dir_ / "t.json").string(), "--html",
                                    (dir_ / "r.html").string()});
    ASSERT_EQ(rep.status, 0) << rep.err;
    report_ = json::parse(rep.out);
    report_err_ = rep.err;
  }
  static void TearDownTestSuite() {
    if (!dir_.empty() && !getenv("CSTOOL_KEEP_VIZ")) fs::remove_all(dir_);
  }
  void SetUp() override {
    std::string why = TracefsUnavailableReason();
    if (!why.empty()) GTEST_SKIP() << "skipping tracefs test: " << why;
    ASSERT_TRUE(report_.is_object()) << "recording failed";
  }
  static std::set<int64_t> WorkloadTids() {
    std::set<int64_t> tids;
    for (const json& t : report_.at("threads")) tids.insert(t.at("tid").get<int64_t>());
    return tids;
  }

  static inline fs::path dir_;
  static inline json report_;
  static inline std::string report_err_;
};

// Each file written beside the report is named on stderr with its size, as record's.
TEST_F(VizTest, TheReportSaysWhereItsFilesWent) {
  for (const char* name : {"t.json", "r.html"}) {
    const fs::path file = dir_ / name;
    EXPECT_NE(report_err_.find("cstool report: wrote " + file.string() + " ("), std::string::npos)
        << report_err_;
  }
}

TEST_F(VizTest, TimelineHasSlicesForEveryWorkloadThreadAndCpu) {
  json doc = json::parse(ReadWholeFile(dir_ / "t.json"));
  ASSERT_TRUE(doc.at("traceEvents").is_array());
  std::set<int64_t> thread_tids, cpu_tids, named_cpus;
  size_t flows_s = 0, flows_f = 0;
  for (const json& e : doc.at("traceEvents")) {
    const std::string ph = e.at("ph");
    ASSERT_TRUE(e.contains("pid") && e.contains("tid")) << e.dump();
    if (ph == "X") {
      ASSERT_TRUE(e.at("ts").is_number() && e.at("dur").is_number()) << e.dump();
      (e.at("pid") == kCpuPid ? cpu_tids : thread_tids).insert(e.at("tid").get<int64_t>());
    } else if (ph == "M" && e.at("name") == "thread_name" && e.at("pid") == kCpuPid) {
      named_cpus.insert(e.at("tid").get<int64_t>());
    } else if (ph == "s") {
      ++flows_s;
    } else if (ph == "f") {
      ++flows_f;
    }
  }
  std::set<int64_t> workload = WorkloadTids();
  ASSERT_FALSE(workload.empty());
  EXPECT_EQ(thread_tids, workload) << "one track per workload thread, and only those";
  const int cpus = report_.at("trace").at("cpus");
  for (int cpu = 0; cpu < cpus; ++cpu)
    EXPECT_TRUE(cpu_tids.count(kCpuPid + 1 + cpu)) << "no slices on CPU " << cpu;
  EXPECT_GT(flows_s, 0u);
  EXPECT_EQ(flows_s, flows_f);
}

// The CPU tracks and the thread rows tell the same story: per workload thread, its
// slices on the CPU tracks, moved by its switch placement, add up to its on-CPU
// microstates in the report (both come
// from the state machine's current task per CPU). JSON times are microseconds with
// three decimals, so each slice may be off by rounding: allow 1 ns per slice.
TEST_F(VizTest, CpuTracksMatchEachThreadsOnCpuTime) {
  json doc = json::parse(ReadWholeFile(dir_ / "t.json"));
  std::map<int64_t, double> run_ns;
  std::map<int64_t, int64_t> slices;
  const std::set<int64_t> workload = WorkloadTids();
  for (const json& e : doc.at("traceEvents")) {
    // Runs, not the IRQ slices nested in them ("irq:...", "softirq:...", "nmi").
    if (e.at("ph") != "X" || e.at("pid") != kCpuPid ||
        std::string(e.at("name")).find(':') != std::string::npos || e.at("name") == "nmi")
      continue;
    const int64_t tid = RunTid(e);
    if (!workload.count(tid)) continue;
    run_ns[tid] += e.at("dur").get<double>() * 1000.0;
    ++slices[tid];
  }
  for (const json& t : report_.at("threads")) {
    const int64_t tid = t.at("tid");
    const json& m = t.at("microstates_ns");
    const int64_t on_cpu = m.at("user").get<int64_t>() + m.at("sys").get<int64_t>() +
                           m.at("irq").get<int64_t>() + m.at("softirq").get<int64_t>() +
                           m.at("unknown").get<int64_t>();
    // The CPU tracks show the traced switches, the thread's times the kernel's instants;
    // switch_placement is exactly the difference.
    const json& p = t.at("switch_placement");
    const int64_t shift = p.at("wakeup_to_switch_in_ns").get<int64_t>() -
                          p.at("wakeup_to_switch_out_ns").get<int64_t>();
    EXPECT_NEAR(run_ns[tid] + static_cast<double>(shift), static_cast<double>(on_cpu),
                1.0 + static_cast<double>(slices[tid]))
        << "tid " << tid;
  }
}

// Every switch-out of a workload thread is on its own track too: the slice it ends
// carries the same cause as the CPU track's run it ends (the thread's times put the
// switch at the kernel's instant, which may come before the traced sched_switch).
TEST_F(VizTest, ThreadTracksCarryEverySwitchOutCause) {
  json doc = json::parse(ReadWholeFile(dir_ / "t.json"));
  std::map<int64_t, std::map<std::string, int>> on_thread, on_cpu;
  for (const json& e : doc.at("traceEvents")) {
    if (e.at("ph") != "X" || !e.contains("args") || !e.at("args").contains("cause")) continue;
    const std::string cause = e.at("args").at("cause");
    if (e.at("pid") == kCpuPid)
      ++on_cpu[RunTid(e)][cause];
    else
      ++on_thread[e.at("tid").get<int64_t>()][cause];
  }
  for (int64_t tid : WorkloadTids()) {
    EXPECT_FALSE(on_cpu[tid].empty()) << tid;
    EXPECT_EQ(on_thread[tid], on_cpu[tid]) << "tid " << tid;
  }
}

// The timeline is compact: about one record per traced event, each with only the keys
// the importers use. Measured at about 110 B per traced event on the demo (thread
// slices ~80 B, CPU runs with their cause ~150 B, flow records ~70 B); before, 206.
TEST_F(VizTest, TimelineBytesPerTracedEvent) {
  const double bytes = static_cast<double>(fs::file_size(dir_ / "t.json"));
  const double events = report_.at("trace").at("events").get<double>();
  ASSERT_GT(events, 0);
  RecordProperty("timeline_bytes_per_event", std::to_string(bytes / events));
  EXPECT_LE(bytes / events, 130.0);
}

TEST_F(VizTest, HtmlRendersInHeadlessChromium) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh)";
  const fs::path html = dir_ / "r.html";
  const std::string page = ReadWholeFile(html);
  ASSERT_NE(page.find("id=\"thread-barscope\""), std::string::npos);

  auto run = [&](const std::vector<std::string>& extra) {
    return RunChromium(chromium, dir_, html, "1600,1200", extra);
  };
  CommandResult dom = run({"--dump-dom"});
  ASSERT_EQ(dom.status, 0) << dom.err;
  EXPECT_EQ(dom.err.find("Uncaught"), std::string::npos) << dom.err;
  EXPECT_EQ(dom.err.find("ERROR:CONSOLE"), std::string::npos) << dom.err;
  // The page's script ran to its end.
  EXPECT_NE(dom.out.find("data-rendered=\"ok\""), std::string::npos);

  auto rows_in = [&](const std::string& svg_id) {
    size_t begin = dom.out.find("id=\"" + svg_id + "\"");
    if (begin == std::string::npos) return std::set<int64_t>{};
    size_t end = dom.out.find("</svg>", begin);
    std::string svg = dom.out.substr(begin, end - begin);
    std::set<int64_t> ids;
    std::regex row("class=\"bs-row\" data-id=\"([0-9]+)\"");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), row); it != std::sregex_iterator();
         ++it)
      ids.insert(std::stoll((*it)[1]));
    return ids;
  };
  EXPECT_EQ(rows_in("thread-barscope"), WorkloadTids()) << "one row per workload thread";
  const int cpus = report_.at("trace").at("cpus");
  EXPECT_EQ(rows_in("cpu-barscope").size(), static_cast<size_t>(cpus));
  EXPECT_NE(dom.out.find("<rect class=\"s\""), std::string::npos) << "no bars drawn";

  const fs::path png = dir_ / "r.png";
  CommandResult shot = run({"--screenshot=" + png.string(), "--hide-scrollbars"});
  ASSERT_EQ(shot.status, 0) << shot.err;
  ASSERT_TRUE(fs::exists(png)) << shot.err;
  EXPECT_GT(fs::file_size(png), 10'000u);
  // PNG signature.
  EXPECT_EQ(ReadWholeFile(png).substr(1, 3), "PNG");
}

// An RGB image decoded from a PNG file.
struct Image {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgb;
  std::array<int, 3> At(uint32_t x, uint32_t y) const {
    const size_t i = (static_cast<size_t>(y) * width + x) * 3;
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
};

Image ReadPng(const fs::path& path) {
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  Image img;
  if (!png_image_begin_read_from_file(&png, path.c_str())) return img;
  png.format = PNG_FORMAT_RGB;
  img.rgb.resize(PNG_IMAGE_SIZE(png));
  if (!png_image_finish_read(&png, nullptr, img.rgb.data(), 0, nullptr)) return {};
  img.width = png.width;
  img.height = png.height;
  return img;
}

std::array<int, 3> Rgb(uint32_t hex) {
  return {static_cast<int>(hex >> 16), static_cast<int>((hex >> 8) & 0xff),
          static_cast<int>(hex & 0xff)};
}

bool Near(std::array<int, 3> a, std::array<int, 3> b, int tolerance) {
  return std::abs(a[0] - b[0]) + std::abs(a[1] - b[1]) + std::abs(a[2] - b[2]) <= tolerance;
}

// The case: 8 threads at about 5 % on CPU in 1 ms bursts over 3 s, drawn in a
// 1400x900 window. Every burst thread's row shows on-CPU colour (the dominant state of
// every column is Sleeping), and the plot, its last column and the axis end inside the
// window.
TEST(BurstyViz, ScreenshotShowsEveryThreadsBurstsInsideTheWindow) {
  const std::string why = TracefsUnavailableReason();
  if (!why.empty()) GTEST_SKIP() << "skipping tracefs test: " << why;
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh)";
  const fs::path dir = fs::temp_directory_path() / ("cstool_bursty_" + std::to_string(getpid()));
  fs::create_directories(dir);
  CommandResult rec =
      RunCommand({CSTOOL_BINARY, "record", "-o", (dir / "b.dat").string(), "--",
                  std::string(CSTOOL_WORKLOAD_DIR) + "/cstool_workload", "bursty", "8", "3000"});
  ASSERT_EQ(rec.status, 0) << rec.err;
  const fs::path html = dir / "b.html";
  CommandResult rep = RunCommand({CSTOOL_BINARY, "report", (dir / "b.dat").string(), "--format",
                                  "json", "--html", html.string()});
  ASSERT_EQ(rep.status, 0) << rep.err;
  const json report = json::parse(rep.out);
  std::set<int64_t> bursty;  // the 8 burst threads: every workload thread but the main one
  for (const json& t : report.at("threads"))
    if (t.at("tid") != t.at("pid")) bursty.insert(t.at("tid").get<int64_t>());
  ASSERT_EQ(bursty.size(), 8u);

  // Both runs hide the scrollbars, so that the page is laid out the same in each.
  CommandResult dom =
      RunChromium(chromium, dir, html, "1400,900", {"--dump-dom", "--hide-scrollbars"});
  ASSERT_EQ(dom.status, 0) << dom.err;
  ASSERT_NE(dom.out.find("data-rendered=\"ok\""), std::string::npos);
  // The thread barscope's rows, each with the box of its plot in CSS px (the page
  // script writes it).
  const size_t svg_at = dom.out.find("id=\"thread-barscope\"");
  ASSERT_NE(svg_at, std::string::npos);
  const std::string svg = dom.out.substr(svg_at, dom.out.find("</svg>", svg_at) - svg_at);
  struct Row {
    int64_t tid;
    double left, top, width, height;
  };
  std::vector<Row> rows;
  std::regex row_re(
      "class=\"bs-row\" data-id=\"([0-9]+)\" data-box=\"([0-9.]+),([0-9.]+),([0-9.]+),([0-9.]+)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), row_re); it != std::sregex_iterator();
       ++it)
    rows.push_back({std::stoll((*it)[1]), std::stod((*it)[2]), std::stod((*it)[3]),
                    std::stod((*it)[4]), std::stod((*it)[5])});
  ASSERT_EQ(rows.size(), 9u);
  for (const Row& r : rows) {
    EXPECT_GT(r.left, 0);
    EXPECT_LE(r.left + r.width, 1400) << "the plot passes the window's right edge";
    EXPECT_GT(r.width, 1000) << "the plot does not fill the window";
  }
  // The axis ends at the trace end.
  std::smatch end_label;
  ASSERT_TRUE(
      std::regex_search(svg, end_label, std::regex("<text class=\"end\"[^>]*>([0-9.]+) s<")));
  const double trace_s = report.at("trace").at("duration_ns").get<double>() / 1e9;
  EXPECT_NEAR(std::stod(end_label[1]), trace_s, 0.0005);

  const fs::path png = dir / "b.png";
  CommandResult shot = RunChromium(chromium, dir, html, "1400,900",
                                   {"--screenshot=" + png.string(), "--hide-scrollbars"});
  ASSERT_EQ(shot.status, 0) << shot.err;
  const Image img = ReadPng(png);
  ASSERT_EQ(img.width, 1400u);
  ASSERT_EQ(img.height, 900u);
  const std::array<int, 3> user = Rgb(0x2e9e44), sys = Rgb(0x1f6fd1), background = Rgb(0xfafafa),
                           white = Rgb(0xffffff);
  size_t checked = 0, drawn_at_end = 0;
  for (const Row& r : rows) {
    ASSERT_LT(r.top + r.height, 900) << "row of tid " << r.tid << " is below the window";
    const auto right = static_cast<uint32_t>(r.left + r.width);
    // The last column is drawn, just inside the plot's right edge (in the rows of the
    // threads that live to the end of the trace).
    for (auto y = static_cast<uint32_t>(r.top); y < r.top + r.height; ++y)
      if (!Near(img.At(right - 2, y), background, 12) && !Near(img.At(right - 2, y), white, 12))
        ++drawn_at_end;
    if (!bursty.count(r.tid)) continue;
    size_t on_cpu = 0;
    for (auto y = static_cast<uint32_t>(r.top); y < r.top + r.height; ++y)
      for (auto x = static_cast<uint32_t>(r.left); x < right; ++x)
        if (Near(img.At(x, y), user, 40) || Near(img.At(x, y), sys, 40)) ++on_cpu;
    // About 150 bursts in 3 s, each at least one row unit high in its column.
    EXPECT_GE(on_cpu, 100u) << "no on-CPU colour in the row of tid " << r.tid;
    ++checked;
  }
  EXPECT_GT(drawn_at_end, 0u) << "the last column is not drawn inside the window";
  EXPECT_EQ(checked, 8u);
  if (!getenv("CSTOOL_KEEP_VIZ")) fs::remove_all(dir);
}

}  // namespace
}  // namespace cstool::testing
