// `cstool diff` run as the binary on the fixtures: a recording against itself shows no
// change and flags nothing; a thread on one side only is listed; the table is golden.
// Regenerate the golden after an intended change with
//   CSTOOL_UPDATE_GOLDEN=1 build/cstool_unit_tests --gtest_filter='DiffCommand.*Golden*'
// and review the diff.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/files.h"
#include "tests/support/patch_recording_info.h"
#include "tests/support/run_command.h"

namespace cstool::testing {
namespace {

const std::string kSource = std::string(CSTOOL_SOURCE_DIR) + "/";
const std::string kFixtures = kSource + "tests/fixtures/";

CommandResult Diff(std::vector<std::string> args) {
  args.insert(args.begin(), {CSTOOL_BINARY, "diff"});
  return RunCommand(args);
}

nlohmann::json DiffJson(std::vector<std::string> args) {
  args.insert(args.begin(), {"--format", "json"});
  CommandResult r = Diff(args);
  EXPECT_EQ(r.status, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

// A copy of `fixture` in the temporary directory, its recording information edited by
// `edit` (nothing else in the file changes).
std::string EditedCopy(const std::string& fixture, const std::string& name,
                       const std::function<void(nlohmann::json&)>& edit) {
  const std::string copy =
      (std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "_" + name)).string();
  std::filesystem::copy_file(fixture, copy, std::filesystem::copy_options::overwrite_existing);
  EXPECT_EQ(PatchRecordingInfo(copy, edit), "");
  return copy;
}

// A second run with the same events: another byte in the recording information (the
// version that wrote it), which no number depends on.
std::string SameEventsOtherFile(const std::string& fixture, const std::string& name) {
  return EditedCopy(fixture, name, [](nlohmann::json& info) { info["tool_version"] = "x"; });
}

TEST(DiffCommand, RecordingAgainstItselfShowsNoChange) {
  const std::string f = kFixtures + "golden_mutex.dat";
  const std::string g = SameEventsOtherFile(f, "again.dat");
  const std::string h =
      EditedCopy(f, "third.dat", [](nlohmann::json& info) { info["tool_version"] = "y"; });
  const nlohmann::json j = DiffJson({f, g, h, "--", f, g, h});
  ASSERT_GT(j["changes"].size(), 10u);
  for (const auto& row : j["changes"]) {
    EXPECT_EQ(row["change"], 0.0) << row.dump();
    EXPECT_EQ(row["significant"], false) << row.dump();
    for (const auto& [field, m] : row["measures"].items()) {
      EXPECT_EQ(m["change"], 0.0) << row.dump();
      EXPECT_EQ(m["significant"], false) << row.dump();
      EXPECT_EQ(m["base"]["min"], m["base"]["max"]) << row.dump();
    }
  }
  EXPECT_EQ(j["threads"]["matched"].size(), 3u);  // main and two mutex workers
  EXPECT_TRUE(j["threads"]["base_only"].empty());
  EXPECT_TRUE(j["threads"]["new_only"].empty());

  // The table says so too, in every section.
  CommandResult table = Diff({f, g, h, "--", f, g, h});
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_EQ(table.out.find("\n* "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("MICROSTATES BY THREAD (time in ms, then its share in % of the thread's "
                           "lifetime)\nno change"),
            std::string::npos)
      << table.out;
  // Each is on both sides, and that is said.
  EXPECT_NE(table.err.find(f + " (base) and " + f + " (new) are the same recording"),
            std::string::npos)
      << table.err;
  // Two a side flag nothing: too few to tell noise by, and the table says why.
  CommandResult two = Diff({f, g, "--", f, g});
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_NE(two.out.find("Two recordings on a side have a narrow spread by chance too often to "
                         "tell noise by"),
            std::string::npos)
      << two.out;
  const nlohmann::json two_json = DiffJson({f, g, "--", f, g});
  for (const auto& row : two_json["changes"])
    EXPECT_TRUE(row["significant"].is_null()) << row.dump();
  std::filesystem::remove(g);
  std::filesystem::remove(h);
}

// Same-named threads are matched by creation order, and the table says what that means
// when a diff has such a pair; a diff without one says nothing of it.
TEST(DiffCommand, SaysHowSameNamedThreadsAreMatched) {
  const std::string f = kFixtures + "golden_mutex.dat";
  const std::string g = SameEventsOtherFile(f, "again2.dat");
  struct Removed {
    std::string path;
    ~Removed() { std::filesystem::remove(path); }
  } removed{g};
  const std::string note = "Threads that share a name in a process are matched by the order";
  CommandResult pool = Diff({f, "--", g});
  ASSERT_EQ(pool.status, 0) << pool.err;
  EXPECT_NE(pool.out.find("cstool_workload/cstool_workload#2"), std::string::npos) << pool.out;
  EXPECT_NE(pool.out.find(note), std::string::npos) << pool.out;
  CommandResult other = Diff({kFixtures + "small_v6.dat", "--", f});
  ASSERT_EQ(other.status, 0) << other.err;
  EXPECT_EQ(other.out.find(note), std::string::npos) << other.out;
}

// A run counts once in a side's spread: the same recording twice on a side, by one path
// or a copy, would flag every difference as beyond the noise.
TEST(DiffCommand, TheSameRecordingTwiceOnASideIsRefused) {
  const std::string f = kFixtures + "golden_mutex.dat";
  const std::string copy = EditedCopy(f, "copy.dat", [](nlohmann::json&) {});  // same bytes
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{f, f, "--", f}, {f, "--", f, copy}}) {
    CommandResult r = Diff(args);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("are the same recording, both on the"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("each run counts once"), std::string::npos) << r.err;
  }
  std::filesystem::remove(copy);
}

// Sides that ran different commands: the diff names them. (Sides recorded with different
// events: DiffRecordings.*, on real recordings.)
TEST(DiffCommand, SidesRecordedDifferentlyAreSaid) {
  const std::string f = kFixtures + "golden_mutex.dat";
  const std::string other = EditedCopy(f, "other.dat", [](nlohmann::json& info) {
    info["command"] = std::vector<std::string>{"./w", "b"};
  });
  CommandResult commands = Diff({f, "--", other});
  EXPECT_EQ(commands.status, 0) << commands.err;
  EXPECT_NE(commands.err.find("the sides ran different commands: base "
                              "`./build/workloads/cstool_workload mutex 2 40`, new `./w b`"),
            std::string::npos)
      << commands.err;
  // The same program from another directory (a build before the change and one after, in
  // two checkouts) is the same command.
  const std::string moved = EditedCopy(f, "moved.dat", [](nlohmann::json& info) {
    info["command"] = std::vector<std::string>{"/opt/b/cstool_workload", "mutex", "2", "40"};
  });
  CommandResult same = Diff({f, "--", moved});
  EXPECT_EQ(same.status, 0) << same.err;
  EXPECT_EQ(same.err.find("different commands"), std::string::npos) << same.err;
  std::filesystem::remove(moved);
  // The same trace in two formats: the same events, no warning.
  CommandResult foreign = Diff({kFixtures + "small_v6.dat", "--", kFixtures + "small_v7_zstd.dat"});
  EXPECT_EQ(foreign.err.find("the same events"), std::string::npos) << foreign.err;
  // A trace-cmd file of scheduler events beside a cstool recording: which side lacks
  // what is said, with what a file cstool did not record can say.
  CommandResult mixed = Diff({kFixtures + "small_v6.dat", "--", f});
  EXPECT_NE(
      mixed.err.find(kFixtures + "small_v6.dat (base) and " + f +
                     " (new) do not hold the same events (" + kFixtures + "small_v6.dat lacks "),
      std::string::npos)
      << mixed.err;
  EXPECT_NE(mixed.err.find(f + " lacks none; for a file cstool did not record: not recorded, or "
                               "none happened)"),
            std::string::npos)
      << mixed.err;
  // The JSON and the HTML page carry the warnings too: their readers may never see stderr.
  const std::string page =
      (std::filesystem::temp_directory_path() / "cstool_diff_warn.html").string();
  CommandResult json = Diff({"--format", "json", "--html", page, f, "--", other});
  ASSERT_EQ(json.status, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j.at("warnings").size(), 1u) << j.at("warnings").dump();
  EXPECT_NE(j["warnings"][0].get<std::string>().find("the sides ran different commands"),
            std::string::npos);
  std::ifstream in(page);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("<b>warning:</b> the sides ran different commands"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(Diff({"--format", "json", f, "--", f}).out).at("warnings").size(),
            1u);  // the same recording on both sides, said
  std::filesystem::remove(page);
  std::filesystem::remove(other);
}

TEST(DiffCommand, OneRecordingPerSideFlagsNothing) {
  const std::string f = kFixtures + "golden_mutex.dat";
  const nlohmann::json j = DiffJson({f, "--", f});
  for (const auto& row : j["changes"]) EXPECT_TRUE(row["significant"].is_null()) << row.dump();
}

TEST(DiffCommand, ThreadOnOneSideOnlyIsListed) {
  // small_v6.dat has two cstool_workload processes (one with two threads) and ls;
  // golden_mutex.dat one cstool_workload process with three threads.
  const nlohmann::json j =
      DiffJson({kFixtures + "small_v6.dat", "--", kFixtures + "golden_mutex.dat"});
  std::vector<std::string> base_only, new_only, matched;
  for (const auto& s : j["threads"]["base_only"]) base_only.push_back(s["key"]);
  for (const auto& s : j["threads"]["new_only"]) new_only.push_back(s["key"]);
  for (const auto& s : j["threads"]["matched"]) matched.push_back(s["key"]);
  EXPECT_NE(std::find(matched.begin(), matched.end(), "cstool_workload (main)"), matched.end());
  EXPECT_NE(std::find(base_only.begin(), base_only.end(), "ls (main)"), base_only.end());
  EXPECT_NE(std::find(base_only.begin(), base_only.end(), "cstool_workload#2 (main)"),
            base_only.end());
  EXPECT_FALSE(new_only.empty());
  // CSV lists them too, as kind `unmatched`.
  CommandResult csv =
      Diff({"--format", "csv", kFixtures + "small_v6.dat", "--", kFixtures + "golden_mutex.dat"});
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_NE(csv.out.find("thread,ls (main),unmatched,base_only,lifetime_ns,ns,1,"),
            std::string::npos)
      << csv.out;
}

TEST(DiffCommand, TableMatchesGolden) {
  CommandResult r = Diff({kFixtures + "small_v6.dat", "--", kFixtures + "golden_mutex.dat"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string out = r.out;
  for (size_t pos; (pos = out.find(kSource)) != std::string::npos;) out.erase(pos, kSource.size());
  const std::string path = kSource + "tests/golden/diff_small_v6_golden_mutex.table";
  if (std::getenv("CSTOOL_UPDATE_GOLDEN")) {
    std::ofstream(path) << out;
    GTEST_SKIP() << "updated " << path;
  }
  const std::string expected = ReadWholeFile(path);
  ASSERT_FALSE(expected.empty()) << path << " is missing";
  EXPECT_EQ(out, expected) << "see the header comment to regenerate";
}

TEST(DiffCommand, HtmlPageIsSelfContained) {
  const std::string html = (std::filesystem::temp_directory_path() /
                            ("cstool-diff-" + std::to_string(::getpid()) + ".html"))
                               .string();
  const std::string f = kFixtures + "small_v6.dat";
  CommandResult r = Diff({"--html", html, f, "--", kFixtures + "golden_mutex.dat"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string page = ReadWholeFile(html);
  std::filesystem::remove(html);
  EXPECT_NE(page.find("<svg class=\"pairs\" id=\"pairs-microstate\""), std::string::npos);
  EXPECT_NE(page.find("<rect class=\"base\""), std::string::npos);
  EXPECT_NE(page.find("<rect class=\"new\""), std::string::npos);
  EXPECT_NE(page.find("<table id=\"unmatched\">"), std::string::npos);
  // No network: the only URL is the SVG namespace.
  for (size_t at = page.find("http"); at != std::string::npos; at = page.find("http", at + 1))
    EXPECT_EQ(page.compare(at, 26, "http://www.w3.org/2000/svg"), 0) << page.substr(at, 60);
  EXPECT_EQ(page.find("<script src"), std::string::npos);
}

// Two recordings need no --: the first is BASE and the second NEW, as diff(1) takes them.
TEST(DiffCommand, TwoRecordingsWithoutDashesAreBaseAndNew) {
  const std::string f = kFixtures + "small_v6.dat", g = kFixtures + "golden_mutex.dat";
  const CommandResult plain = Diff({"--format", "json", f, g});
  const CommandResult dashed = Diff({"--format", "json", f, "--", g});
  ASSERT_EQ(plain.status, 0) << plain.err;
  ASSERT_EQ(dashed.status, 0) << dashed.err;
  EXPECT_EQ(plain.out, dashed.out);
  EXPECT_NE(plain.out, Diff({"--format", "json", g, "--", f}).out);  // the order counts
}

TEST(DiffCommand, UsageErrors) {
  const std::string f = kFixtures + "small_v6.dat";
  // Three recordings without --: the message says that more than two need it.
  CommandResult no_new = Diff({f, f, f});
  EXPECT_EQ(no_new.status, 2);
  EXPECT_NE(no_new.err.find("3 recordings and no --: more than two need -- between the ones "
                            "before the change and the ones after"),
            std::string::npos)
      << no_new.err;
  EXPECT_EQ(Diff({f, "--"}).status, 2);
  // "--" with nothing after it is no NEW side, even after two recordings.
  CommandResult dash_last = Diff({f, f, "--"});
  EXPECT_EQ(dash_last.status, 2);
  EXPECT_NE(dash_last.err.find("give at least one recording on each side"), std::string::npos)
      << dash_last.err;
  // An option after -- is a recording name: the message says where options go.
  CommandResult late_option = Diff({f, "--", f, "--html", "d.html"});
  EXPECT_EQ(late_option.status, 2);
  EXPECT_NE(late_option.err.find("--html: no such file (after --, every argument is a "
                                 "recording: options go before --)"),
            std::string::npos)
      << late_option.err;
  EXPECT_EQ(Diff({"--", f}).status, 2);  // no BASE side
  EXPECT_EQ(Diff({"--format", "xml", f, "--", f}).status, 2);
  // A negative row count is no count (it listed every row, as 0 does).
  CommandResult negative = Diff({"--limit", "-1", f, "--", f});
  EXPECT_EQ(negative.status, 2);
  EXPECT_NE(negative.err.find("--limit: takes a number of rows (0: all), not '-1'"),
            std::string::npos)
      << negative.err;
  CommandResult missing = Diff({f, "--", "/nonexistent.dat"});
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("/nonexistent.dat"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace cstool::testing
