// What a new user trips over (issue 20): a selection that matches nothing, -N 0, and
// errors without their reason or next step. Each is one clear line and an exit status.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <ostream>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "base/cpu_list.h"
#include "tests/support/files.h"
#include "tests/support/run_command.h"

namespace cstool::testing {
namespace {

// A fresh empty directory, removed at the end of the test.
class EmptyDir {
 public:
  EmptyDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "cstool-empty-XXXXXX").string();
    path_ = ::mkdtemp(templ.data());
  }
  ~EmptyDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Item 2: -p/-t that select nothing are an error naming the selection and the file's
// processes (or threads), not empty tables with exit status 0.
TEST(SelectionMatchesNothing, PidNamesTheFilesProcesses) {
  const std::string file = Fixture("golden_mutex.dat");
  CommandResult r = RunCommand({CSTOOL_BINARY, "report", file, "-p", "12345"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(LastOwnLine(r.err),
            "cstool report: no thread matches -p 12345; the file's processes: "
            "16694 cstool_workload (cstool report " +
                file + " lists them)");
}

// --critical-path of a tid the file does not have names the threads it has, as -t does.
TEST(SelectionMatchesNothing, CriticalPathOfAnotherTidNamesTheFilesThreads) {
  const std::string file = Fixture("golden_mutex.dat");
  CommandResult r = RunCommand({CSTOOL_BINARY, "report", file, "--critical-path", "1"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(LastOwnLine(r.err),
            "cstool report: --critical-path 1: no thread with that tid in " + file +
                "; the file's threads: 16694 cstool_workload, 16697 cstool_workload, 16698 "
                "cstool_workload (cstool report " +
                file + " lists them)");
}

TEST(SelectionMatchesNothing, TidNamesTheFilesThreads) {
  const std::string file = Fixture("golden_mutex.dat");
  CommandResult r = RunCommand({CSTOOL_BINARY, "report", file, "-t", "7", "--format", "json"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  const std::string line = LastOwnLine(r.err);
  EXPECT_TRUE(
      line.starts_with("cstool report: no thread matches -t 7; the file's threads: "
                       "16694 cstool_workload, 16697 cstool_workload, 16698 "
                       "cstool_workload (cstool report " +
                       file + " --format table lists them"))
      << line;
}

TEST(SelectionMatchesNothing, PidAndTidNameTheThreadsOfThePid) {
  const std::string file = Fixture("golden_mutex.dat");
  CommandResult r = RunCommand({CSTOOL_BINARY, "report", file, "-p", "16694", "-t", "1"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(LastOwnLine(r.err),
            "cstool report: no thread matches -p 16694 -t 1; the threads of -p 16694: 16694 "
            "cstool_workload, 16697 cstool_workload, 16698 cstool_workload (cstool report " +
                file + " -p 16694 lists them)");
}

TEST(SelectionMatchesNothing, LeavesNoPictureFiles) {
  EmptyDir dir;
  const std::string json = dir.path() + "/t.json", html = dir.path() + "/t.html";
  CommandResult r = RunCommand({CSTOOL_BINARY, "report", Fixture("golden_mutex.dat"), "-p", "1",
                                "--timeline", json, "--html", html});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(json));
  EXPECT_FALSE(std::filesystem::exists(html));
}

TEST(SelectionMatchesNothing, AMatchingSelectionStillSucceeds) {
  CommandResult r =
      RunCommand({CSTOOL_BINARY, "report", Fixture("golden_mutex.dat"), "-t", "16697"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("16697"), std::string::npos);
}

// Item 3: -N 0 no longer means "forever"; leaving -N out does. `timeout` keeps a
// regression from hanging the suite (irq -N 0 used to record until killed).
struct DurationCase {
  std::string name;
  std::vector<std::string> args;
  std::string expected;
};

void PrintTo(const DurationCase& c, std::ostream* os) {
  for (const std::string& a : c.args) *os << a << ' ';
}

class DurationIsPositive : public ::testing::TestWithParam<DurationCase> {};

TEST_P(DurationIsPositive, ZeroAndNegativeAreUsageErrors) {
  std::vector<std::string> argv = {"timeout", "20", CSTOOL_BINARY};
  argv.insert(argv.end(), GetParam().args.begin(), GetParam().args.end());
  CommandResult r = RunCommand(argv);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(LastOwnLine(r.err), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    RecordAndIrq, DurationIsPositive,
    ::testing::Values(
        DurationCase{"IrqZero",
                     {"irq", "-N", "0"},
                     "cstool irq: -N 0: the duration must be a positive number of seconds; omit "
                     "-N to record until Ctrl-C"},
        DurationCase{"IrqNegative",
                     {"irq", "--duration=-1"},
                     "cstool irq: -N -1: the duration must be a positive number of seconds; omit "
                     "-N to record until Ctrl-C"},
        DurationCase{"RecordZero",
                     {"record", "-N", "0", "--", "true"},
                     "cstool record: -N 0: the duration must be a positive number of seconds; "
                     "omit -N to record until the command exits (or, with -p or -a, until "
                     "Ctrl-C)"},
        DurationCase{"RecordNegative",
                     {"record", "-N", "-0.5", "-a"},
                     "cstool record: -N -0.5: the duration must be a positive number of seconds; "
                     "omit -N to record until the command exits (or, with -p or -a, until "
                     "Ctrl-C)"},
        DurationCase{"RecordZeroWithAUnit",
                     {"record", "-N", "0ms", "--", "true"},
                     "cstool record: -N 0: the duration must be a positive number of seconds; "
                     "omit -N to record until the command exits (or, with -p or -a, until "
                     "Ctrl-C)"},
        DurationCase{"RecordNan",
                     {"record", "-N", "nan", "-a"},
                     "cstool record: -N nan: the duration must be a positive number of seconds; "
                     "omit -N to record until the command exits (or, with -p or -a, until "
                     "Ctrl-C)"}),
    [](const auto& info) { return info.param.name; });

// Issue #20 item 9: --period goes with --noise and is positive; --noise is no --affinity.
// Each fails before anything is recorded (`timeout` keeps a regression from hanging).
TEST(IrqNoiseOptions, PeriodNeedsNoiseAndIsPositiveAndNoiseIsNoAffinity) {
  CommandResult r = RunCommand({"timeout", "20", CSTOOL_BINARY, "irq", "--period", "1", "-N", "1"});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--period requires --noise"), std::string::npos) << r.err;
  r = RunCommand({"timeout", "20", CSTOOL_BINARY, "irq", "--noise", "--period", "0", "-N", "1"});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(LastOwnLine(r.err), "cstool irq: --period must be a positive number of seconds");
  r = RunCommand({"timeout", "20", CSTOOL_BINARY, "irq", "--noise", "--affinity"});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--noise excludes --affinity"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

// An IRQ that does not exist is refused with the reason alone (no ": " before it for the
// name it does not have), and changes nothing.
TEST(IrqAffinity, ANonexistentIrqIsRefusedWithItsReason) {
  CommandResult r = RunCommand({"timeout", "20", CSTOOL_BINARY, "irq", "--affinity", "999999=0"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("no-such-irq"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  ENOENT (No such file or directory)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(": ENOENT"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 moved, 1 refused"), std::string::npos) << r.out;
}

// A CPU the machine cannot have is refused once, before any IRQ is tried (every IRQ was,
// each refused with ERANGE).
TEST(IrqAffinity, ACpuTheMachineLacksIsRefusedBeforeAnyIrqIsTried) {
  const std::vector<int> online = OnlineCpus();
  const std::vector<int> possible = PossibleCpus();
  ASSERT_FALSE(possible.empty());
  const std::string cpu = std::to_string(possible.back() + 1);
  CommandResult r =
      RunCommand({"timeout", "20", CSTOOL_BINARY, "irq", "--affinity", "all=0," + cpu});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "cstool irq: there is no CPU " + cpu + " (this machine's CPUs: " +
                       FormatCpuList(possible) + "; online: " + FormatCpuList(online) + ")\n");
}

// Item 7: errors say why, and what to do next.
// A command that is not one names the one that does it, where the manual pages suggest
// a word (cstool-export(5)); any other is only named.
TEST(TerseErrors, AnUnknownCommandNamesTheOneThatDoesIt) {
  CommandResult exp = RunCommand({CSTOOL_BINARY, "export", "x.dat"});
  EXPECT_EQ(exp.status, 2);
  EXPECT_EQ(exp.err,
            "cstool: 'export' is not a cstool command; that is cstool report FILE --format "
            "sqlite|jsonl -o OUT (man 5 cstool-export). See 'cstool --help'.\n");
  CommandResult other = RunCommand({CSTOOL_BINARY, "frob"});
  EXPECT_EQ(other.status, 2);
  EXPECT_EQ(other.err, "cstool: 'frob' is not a cstool command. See 'cstool --help'.\n");
  // `cstool help WORD` says the same.
  for (const CommandResult* alone : {&exp, &other}) {
    const std::string word = alone == &exp ? "export" : "frob";
    CommandResult help = RunCommand({CSTOOL_BINARY, "help", word});
    EXPECT_EQ(help.status, 2);
    EXPECT_EQ(help.err, alone->err) << word;
  }
  // A recording first (`cstool run.dat report`): the command goes before it.
  const std::string file = Fixture("small_v6.dat");
  CommandResult swapped = RunCommand({CSTOOL_BINARY, file, "report"});
  EXPECT_EQ(swapped.status, 2);
  EXPECT_EQ(swapped.err, "cstool: '" + file +
                             "' is not a cstool command. A file goes after the command: cstool "
                             "report " +
                             file + ". See 'cstool --help'.\n");
  CommandResult alone = RunCommand({CSTOOL_BINARY, file, "--check"});
  EXPECT_NE(alone.err.find("A file goes after the command: cstool report " + file + "."),
            std::string::npos)
      << alone.err;
}

// Every command's help ends with examples (report's had none, the others had).
TEST(Help, EveryCommandShowsExamples) {
  for (const char* command : {"record", "report", "diff", "msa", "irq", "nmi-inject"}) {
    CommandResult r = RunCommand({CSTOOL_BINARY, command, "--help"});
    EXPECT_EQ(r.status, 0) << command << ": " << r.err;
    EXPECT_NE(r.out.find("\nExamples:\n  cstool " + std::string(command)), std::string::npos)
        << command << ":\n"
        << r.out;
  }
}

// --version names the commit the binary was built from (git describe; "unknown" outside a
// checkout), so that a stale binary, or a benchmark's, can be told apart.
TEST(Help, VersionNamesTheCommit) {
  CommandResult r = RunCommand({CSTOOL_BINARY, "--version"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(std::regex_match(
      r.out, std::regex(R"(cstool \d+\.\d+\.\d+ \(commit ([0-9a-f]{7,}(-dirty)?|unknown)\)\n)")))
      << r.out;
}

// No command at all shows the commands there are (on stderr: still a usage error).
TEST(TerseErrors, NoCommandListsTheCommands) {
  CommandResult none = RunCommand({CSTOOL_BINARY});
  CommandResult help = RunCommand({CSTOOL_BINARY, "--help"});
  EXPECT_EQ(none.status, 2);
  EXPECT_EQ(none.out, "");
  EXPECT_EQ(none.err, help.out);
}

TEST(TerseErrors, MissingFileSaysWhy) {
  CommandResult r = RunCommand({CSTOOL_BINARY, "report", "/nonexistent/cstool-test.dat"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(LastOwnLine(r.err),
            "cstool report: /nonexistent/cstool-test.dat: cannot open: No such file or directory");
}

// `record --flight -o run.dat` leaves run.dat.1, run.dat.2, ... and no run.dat.
TEST(TerseErrors, AMissingFileBesideFlightDumpsNamesThem) {
  EmptyDir dir;
  const std::string file = dir.path() + "/run.dat";
  std::filesystem::copy_file(Fixture("golden_mutex.dat"), file + ".1");
  CommandResult r = RunCommand({CSTOOL_BINARY, "report", file});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(LastOwnLine(r.err), "cstool report: " + file +
                                    ": cannot open: No such file or directory; a flight "
                                    "recording's dumps are beside it: " +
                                    file + ".1 (report one of them)");
  std::filesystem::copy_file(Fixture("golden_mutex.dat"), file + ".2");
  std::filesystem::copy_file(Fixture("golden_mutex.dat"), file + ".3");
  r = RunCommand({CSTOOL_BINARY, "report", file});
  EXPECT_NE(LastOwnLine(r.err).find("dumps are beside it: " + file + ".1 to " + file + ".3 ("),
            std::string::npos)
      << r.err;
  // The dump itself is a report like any other.
  EXPECT_EQ(RunCommand({CSTOOL_BINARY, "report", file + ".1"}).status, 0);
}

TEST(TerseErrors, DirectorySaysWhy) {
  EmptyDir dir;
  CommandResult r = RunCommand({CSTOOL_BINARY, "report", dir.path()});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(LastOwnLine(r.err), "cstool report: " + dir.path() + ": cannot open: Is a directory");
}

// A FIFO is refused before it is opened: opening it waited for a writer forever.
TEST(TerseErrors, FifoIsNotARegularFile) {
  EmptyDir dir;
  const std::string fifo = dir.path() + "/ff.dat";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Under timeout(1): a regression waits for a writer forever (status 124).
  CommandResult r = RunCommand({"timeout", "20", CSTOOL_BINARY, "report", fifo});
  EXPECT_EQ(r.status, 1);
  // The SQLite export reads the file's identity first: the same.
  CommandResult sqlite = RunCommand({"timeout", "20", CSTOOL_BINARY, "report", fifo, "--format",
                                     "sqlite", "-o", dir.path() + "/x.db"});
  EXPECT_EQ(sqlite.status, 1);
  EXPECT_EQ(LastOwnLine(sqlite.err), "cstool report: " + fifo + ": not a regular file");
  EXPECT_EQ(LastOwnLine(r.err), "cstool report: " + fifo + ": not a regular file");
}

// diff names a directory as report does (it printed the C++ library's "filesystem
// error: cannot get file size").
TEST(TerseErrors, DiffOfADirectorySaysWhy) {
  EmptyDir dir;
  const std::string f = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/golden_mutex.dat";
  CommandResult r = RunCommand({CSTOOL_BINARY, "diff", f, dir.path()});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(LastOwnLine(r.err), "cstool diff: " + dir.path() + ": cannot open: Is a directory");
}

// An empty value is no value: -p '' read as pid 0, -o '' as no -o, -C '' as every CPU.
TEST(TerseErrors, AnEmptyOptionValueIsAUsageError) {
  const std::string f = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/golden_mutex.dat";
  for (const auto& [args, option] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"report", f, "-p", ""}, "--pid"},
           {{"report", f, "-t", ""}, "--tid"},
           {{"report", f, "-o", ""}, "--output"},
           {{"record", "-C", "", "-o", "/nonexistent/x.dat", "--", "true"}, "--cpus"},
           {{"record", "--max-size", "", "-o", "/nonexistent/x.dat", "--", "true"},
            "--max-size"}}) {
    std::vector<std::string> argv = {CSTOOL_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandResult r = RunCommand(argv);
    EXPECT_EQ(r.status, 2) << args[0] << " " << option;
    EXPECT_EQ(r.err, "cstool " + args[0] + ": " + option +
                         ": an empty value (give one, or leave the option out)\nSee 'cstool " +
                         args[0] + " --help'.\n");
  }
  // An option whose value may be left out takes none: --compress alone is zstd (the run
  // then fails for its own reason, the output's folder).
  CommandResult compress =
      RunCommand({CSTOOL_BINARY, "record", "--compress", "-o", "/nonexistent/x.dat", "--", "true"});
  EXPECT_EQ(compress.err.find("an empty value"), std::string::npos) << compress.err;
  EXPECT_NE(compress.err.find("/nonexistent/x.dat"), std::string::npos) << compress.err;
}

TEST(TerseErrors, NoRecordingHereSaysToRecordFirst) {
  EmptyDir dir;
  CommandResult r = RunCommand(
      {"sh", "-c", "cd \"$0\" && exec \"$1\" report", dir.path(), std::string(CSTOOL_BINARY)});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(LastOwnLine(r.err),
            "cstool report: no recording here (cstool.dat does not exist): run `cstool record -- "
            "CMD` first, or name a file: cstool report FILE");
}

// `report --timeline run.dat` where no cstool.dat is: the recording was named as the
// picture's output, and the message says how to read it instead. Nothing is written.
TEST(TerseErrors, NoRecordingHereNamesTheRecordingTakenAsAnOutput) {
  EmptyDir dir;
  const std::string run = dir.path() + "/run.dat";
  std::filesystem::copy_file(Fixture("small_v6.dat"), run);
  const std::string before = ReadWholeFile(run);
  for (const char* option : {"--timeline", "--html"}) {
    CommandResult r = RunCommand({"sh", "-c", "cd \"$0\" && exec \"$1\" report \"$2\" run.dat",
                                  dir.path(), std::string(CSTOOL_BINARY), option});
    EXPECT_EQ(r.status, 2) << option;
    EXPECT_EQ(LastOwnLine(r.err), std::string("cstool report: no recording here (cstool.dat does "
                                              "not exist), and ") +
                                      option +
                                      " run.dat names a recording as the output: to read it, "
                                      "put it first: cstool report run.dat " +
                                      option + " OUT")
        << r.err;
    EXPECT_EQ(ReadWholeFile(run), before) << option;
  }
}

// `--timeline run.html`: the timeline is Perfetto's trace, not a page; the page is
// --html's. Nothing is written over what is there.
TEST(TerseErrors, ATimelineNamedAsAPageIsRefused) {
  EmptyDir dir;
  const std::string page = dir.path() + "/run.html";
  { std::ofstream(page) << "<html>mine</html>"; }
  CommandResult r =
      RunCommand({CSTOOL_BINARY, "report", Fixture("small_v6.dat"), "--timeline", page});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(LastOwnLine(r.err), "cstool report: --timeline " + page +
                                    " names a page, and the timeline is Perfetto's trace (JSON, "
                                    "or protobuf for .pftrace): --html " +
                                    page +
                                    " writes the page; give the timeline a .json or .pftrace name")
      << r.err;
  EXPECT_EQ(ReadWholeFile(page), "<html>mine</html>");
}

TEST(TerseErrors, ExplainAnomaliesNeverPrintsTidMinusOne) {
  for (const char* fixture : {"golden_mutex.dat", "small_v6.dat", "small_v7_zstd.dat"}) {
    CommandResult r =
        RunCommand({CSTOOL_BINARY, "report", Fixture(fixture), "--explain-anomalies"});
    EXPECT_EQ(r.status, 0) << fixture << ": " << r.err;
    EXPECT_EQ(r.out.find("tid -1"), std::string::npos) << fixture;
    EXPECT_EQ(r.out.find(" -1 "), std::string::npos) << fixture;
  }
}

// `cstool help` lists the subcommands (as `cstool --help`), and `cstool help NAME` is
// NAME's --help, usage line included.
TEST(Help, HelpIsTheSameAsDashDashHelp) {
  CommandResult help = RunCommand({CSTOOL_BINARY, "help"});
  CommandResult dash = RunCommand({CSTOOL_BINARY, "--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_EQ(help.out, dash.out);
  EXPECT_NE(help.out.find("Subcommands:"), std::string::npos) << help.out;
  CommandResult report = RunCommand({CSTOOL_BINARY, "help", "report"});
  CommandResult report_dash = RunCommand({CSTOOL_BINARY, "report", "--help"});
  EXPECT_EQ(report.status, 0);
  EXPECT_EQ(report.out, report_dash.out);
  EXPECT_NE(report.out.find("Usage: cstool report"), std::string::npos) << report.out;
}

// An option a subcommand does not have, spelled like one it has (trace-cmd's
// --compression for record's --compress), is named with the nearest one; nothing is
// suggested for what resembles no option.
TEST(Help, AMisspelledOptionSuggestsTheNearest) {
  CommandResult r = RunCommand({CSTOOL_BINARY, "record", "--compression=zstd", "--", "true"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("cstool record: --compression=zstd is not an option of record; did you "
                       "mean --compress?"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("-- is not an option"), std::string::npos) << r.err;
  CommandResult format = RunCommand({CSTOOL_BINARY, "report", "--formt", "json", "x.dat"});
  EXPECT_NE(format.err.find("did you mean --format?"), std::string::npos) << format.err;
  // Two letters swapped are one slip, nearer than an option that starts the word (--from).
  CommandResult swapped = RunCommand({CSTOOL_BINARY, "report", "--fromat", "json", "x.dat"});
  EXPECT_NE(swapped.err.find("did you mean --format?"), std::string::npos) << swapped.err;
  CommandResult nothing = RunCommand({CSTOOL_BINARY, "report", "--zzzzzz", "x.dat"});
  EXPECT_EQ(nothing.status, 2);
  EXPECT_EQ(nothing.err.find("did you mean"), std::string::npos) << nothing.err;
  EXPECT_NE(nothing.err.find("cstool report: The following argument was not expected: --zzzzzz"),
            std::string::npos)
      << nothing.err;
}

// The line that names a typo's nearest option is the whole message (the value after it is
// that option's): CLI11's "not expected" line came first and said the same less well. A
// word no line explains keeps it.
TEST(Help, ATypoWithItsValueGetsOneLine) {
  const std::string file = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/golden_mutex.dat";
  CommandResult r = RunCommand({CSTOOL_BINARY, "report", file, "--fromat", "json"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "cstool report: --fromat is not an option of report; did you mean --format?\n"
            "See 'cstool report --help'.\n");
  CommandResult extra = RunCommand({CSTOOL_BINARY, "report", file, "--fromat", "json", "extra"});
  EXPECT_EQ(extra.status, 2);
  EXPECT_NE(extra.err.find("cstool report: The following arguments were not expected: --fromat "
                           "json extra\n"),
            std::string::npos)
      << extra.err;
  EXPECT_NE(extra.err.find("did you mean --format?"), std::string::npos) << extra.err;
  // The word after is the option's value only when that option takes one and did not get
  // it after "=": a stray word after a typo'd flag, or after --fromat=json, keeps the line;
  // a negative number is a value, another option is not.
  for (const std::vector<std::string>& words :
       std::vector<std::vector<std::string>>{{"--tre", "extra"},
                                             {"--fromat=json", "extra"},
                                             {"--stacks", "extra"},
                                             {"--fromat", "--zzzz"}}) {
    std::vector<std::string> argv = {CSTOOL_BINARY, "report", file};
    argv.insert(argv.end(), words.begin(), words.end());
    CommandResult stray = RunCommand(argv);
    EXPECT_EQ(stray.status, 2);
    EXPECT_NE(stray.err.find("cstool report: The following arguments were not expected: " +
                             words[0] + " " + words[1] + "\n"),
              std::string::npos)
        << stray.err;
  }
  CommandResult negative = RunCommand({CSTOOL_BINARY, "report", file, "--limt", "-5"});
  EXPECT_EQ(negative.err,
            "cstool report: --limt is not an option of report; did you mean --limit?\n"
            "See 'cstool report --help'.\n");
}

// A mistyped command is named with the nearest one, and another command's option with its
// command (--stacks is record's: a reader of its section tries it on report).
TEST(Help, AMistypedCommandAndAnotherCommandsOptionAreNamed) {
  CommandResult typo = RunCommand({CSTOOL_BINARY, "reprot", "x.dat"});
  EXPECT_EQ(typo.status, 2);
  EXPECT_NE(typo.err.find("'reprot' is not a cstool command. Did you mean 'report'? See"),
            std::string::npos)
      << typo.err;
  CommandResult other = RunCommand({CSTOOL_BINARY, "report", "--stacks", "x.dat"});
  EXPECT_EQ(other.status, 2);
  EXPECT_NE(other.err.find("--stacks is an option of 'cstool record', not of report"),
            std::string::npos)
      << other.err;
  CommandResult far = RunCommand({CSTOOL_BINARY, "zzzzzz"});
  EXPECT_EQ(far.err.find("Did you mean"), std::string::npos) << far.err;
}

// msa's pid is its argument, where record and report take -p PID: the habit is named.
TEST(Help, APidGivenWithDashPToMsaSaysItIsTheArgument) {
  for (const char* option : {"-p", "--pid"}) {
    CommandResult r = RunCommand({CSTOOL_BINARY, "msa", option, "1"});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find(std::string("cstool msa: the pid is msa's argument, without ") + option +
                         ": cstool msa PID\n"),
              std::string::npos)
        << r.err;
  }
}

// `record CMD ... -o FILE`: the -o is the command's (perf's rule below), and the note says
// so, with where the recording goes; not with -o before the command, nor after "--".
// (-N 0 ends each run before it records.)
TEST(Help, AnOutputOptionAfterTheCommandIsNoted) {
  const std::string note =
      "cstool record: note: '-o' after the command is the command's (cstool record's options "
      "go before it: cstool record -o FILE CMD ...); recording into cstool.dat\n";
  CommandResult after = RunCommand({CSTOOL_BINARY, "record", "-N", "0", "true", "-o", "x.dat"});
  EXPECT_EQ(after.status, 2);
  EXPECT_NE(after.err.find(note), std::string::npos) << after.err;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"-o", "y.dat", "true", "-o", "x.dat"},
        std::vector<std::string>{"-oy.dat", "true", "-o", "x.dat"},
        std::vector<std::string>{"--output=y.dat", "true", "-o", "x.dat"},
        std::vector<std::string>{"-ao", "y.dat", "true", "-o", "x.dat"},
        std::vector<std::string>{"--", "true", "-o", "x.dat"}}) {
    std::vector<std::string> argv = {CSTOOL_BINARY, "record", "-N", "0"};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandResult r = RunCommand(argv);
    EXPECT_EQ(r.err.find("note:"), std::string::npos) << r.err;
  }
}

// Two recordings given to report: comparing them is diff's, and the error says how.
TEST(Help, TwoRecordingsToReportPointToDiff) {
  const std::string file = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/golden_mutex.dat";
  CommandResult r = RunCommand({CSTOOL_BINARY, "report", file, file});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("cstool report: report reads one recording; to compare two: cstool diff " +
                       file + " -- " + file + "\n"),
            std::string::npos)
      << r.err;
}

// An unknown option's value is taken for the file: the file after it is no second
// recording, and no diff is suggested ("cstool diff max -- FILE" was).
TEST(Help, AnUnknownOptionsValueIsNoSecondRecording) {
  const std::string file = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/golden_mutex.dat";
  for (const char* option : {"-x", "-S", "-C"}) {
    CommandResult r = RunCommand({CSTOOL_BINARY, "report", option, "max", file});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err.find("cstool diff"), std::string::npos) << r.err;
  }
}

// trace-cmd report -i FILE and perf sched -i FILE: the habit is named.
TEST(Help, AnInputOptionSaysTheFileIsTheArgument) {
  const std::string file = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/golden_mutex.dat";
  for (const char* option : {"-i", "--input"}) {
    CommandResult r = RunCommand({CSTOOL_BINARY, "report", option, file});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find(std::string("cstool report: the recording is report's argument, "
                                     "without ") +
                         option + ": cstool report FILE\n"),
              std::string::npos)
        << r.err;
  }
}

// perf sched latency's -s KEY is report's --sort KEY.
TEST(Help, PerfSchedsShortSortOptionSorts) {
  const std::string file = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/golden_mutex.dat";
  CommandResult by_default = RunCommand({CSTOOL_BINARY, "report", file});
  CommandResult short_option = RunCommand({CSTOOL_BINARY, "report", file, "-s", "sys"});
  CommandResult long_option = RunCommand({CSTOOL_BINARY, "report", file, "--sort", "sys"});
  ASSERT_EQ(short_option.status, 0) << short_option.err;
  EXPECT_EQ(short_option.out, long_option.out);
  EXPECT_NE(short_option.out, by_default.out) << "sys time orders this file's threads otherwise";
}

// perf sched's subcommands, typed as cstool's, name where their answers are.
TEST(Help, PerfSchedsCommandsNameWhereTheirAnswersAre) {
  for (const auto& [word, answer] : std::vector<std::pair<std::string, std::string>>{
           {"sched", "; that is cstool report FILE (perf sched latency's numbers"},
           {"latency", "; that is cstool report FILE --sort longest_wait"},
           {"timehist", "; that is cstool report FILE --timeline OUT.pftrace"},
           {"map", "; that is cstool report FILE --html OUT.html"}}) {
    CommandResult r = RunCommand({CSTOOL_BINARY, word, "x.dat"});
    EXPECT_EQ(r.status, 2);
    std::string expected = "cstool: '";
    expected += word;
    expected += "' is not a cstool command";
    expected += answer;
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("Did you mean"), std::string::npos) << r.err;
  }
}

// Record's options end at the command's first word (perf's rule: the command's own
// options stay its own); one that is not record's before it is still a typo to name.
TEST(Help, ATypoBeforeTheCommandIsNamedNotTheCommandsOptions) {
  CommandResult r = RunCommand({CSTOOL_BINARY, "record", "--stak", "ls", "-la"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("cstool record: --stak is not an option of record; did you mean "
                       "--stacks?\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("-la is not"), std::string::npos) << r.err;
}

// A value that is not a number says what the option takes ("Could not convert: pid =
// abc" was CLI11's), and the "--" that ends record's options is not an unexpected
// argument ("-- --bogus").
TEST(Help, AWrongValueSaysWhatTheOptionTakes) {
  for (const auto& [args, expected] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"msa", "abc"}, "cstool msa: pid takes a whole number, not 'abc'"},
           {{"report", "x.dat", "-t", "abc"},
            "cstool report: --tid takes a whole number, not 'abc'"},
           {{"record", "-N", "abc", "--", "true"},
            "cstool record: --duration takes a number of seconds or a duration with its unit "
            "(300ms, 2s, 500us), not 'abc'"},
           {{"irq", "-N", "2h"},
            "cstool irq: --duration takes a number of seconds or a duration with its unit "
            "(300ms, 2s, 500us), not '2h'"},
           {{"msa", "1", "-T", "2h"},
            "cstool msa: --interval takes a number of seconds or a duration with its unit "
            "(300ms, 2s, 500us), not '2h'"},
           {{"record", "-T", "abc", "-c", "task-clock", "--", "true"},
            "cstool record: --counter-interval takes a number of seconds or a duration with its "
            "unit (300ms, 2s, 500us), not 'abc'"},
           {{"record", "--max-dumps", "abc", "--", "true"},
            "cstool record: --max-dumps takes a whole number, not 'abc'"},
           {{"record", "--bogus", "--", "true"},
            "cstool record: The following argument was not expected: --bogus"}}) {
    std::vector<std::string> argv = {CSTOOL_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandResult r = RunCommand(argv);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.err.substr(0, r.err.find('\n')), expected) << r.err;
  }
}

// CLI11's own errors come in cstool's form: "cstool NAME: ...", then where help is; an
// option of names lists the names (not CLI11's enum map).
TEST(Help, OptionErrorsNameTheCommandAndTheValidValues) {
  CommandResult r = RunCommand({CSTOOL_BINARY, "report", "--reader", "bogus", "x.dat"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "cstool report: --reader: 'bogus' is not a reader (auto, fast or libtracecmd)\n"
            "See 'cstool report --help'.\n");
  CommandResult jobs = RunCommand({CSTOOL_BINARY, "report", "-j", "0", "x.dat"});
  EXPECT_EQ(jobs.status, 2);
  EXPECT_TRUE(jobs.err.starts_with("cstool report: --jobs: ")) << jobs.err;
  // --flight 0 made a normal recording into cstool.dat, silently.
  CommandResult flight = RunCommand({CSTOOL_BINARY, "record", "--flight", "0", "--", "true"});
  EXPECT_EQ(flight.status, 2);
  EXPECT_TRUE(
      flight.err.starts_with("cstool record: --flight: takes a positive number of "
                             "seconds (or a duration with its unit: 500ms)\n"))
      << flight.err;
  // Units as -N takes them: "0ms" is refused as 0 is, not as text.
  flight = RunCommand({CSTOOL_BINARY, "record", "--flight", "0ms", "--", "true"});
  EXPECT_EQ(flight.status, 2);
  EXPECT_TRUE(flight.err.starts_with("cstool record: --flight: takes a positive number"))
      << flight.err;
  // CLI11's own number checks printed their range: up to DBL_MAX, in 310 digits.
  for (const auto& [args, expected] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--critical-path", "abc"},
            "cstool report: --critical-path: takes a thread id (a positive integer), not 'abc'"},
           {{"--critical-path", "0"},
            "cstool report: --critical-path: takes a thread id (a positive integer), not '0'"},
           {{"--critical-path", "12", "--from", "-1"},
            "cstool report: --from: takes seconds from the trace start (0 or more), not '-1'"},
           {{"--critical-path", "12", "--limit", "x"},
            "cstool report: --limit: takes a number of rows (0: all), not 'x'"},
           {{"--limit", "3"}, "cstool report: --limit requires --critical-path"}}) {
    std::vector<std::string> argv = {CSTOOL_BINARY, "report", "x.dat"};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandResult path = RunCommand(argv);
    EXPECT_EQ(path.status, 2);
    EXPECT_EQ(path.err, expected + "\nSee 'cstool report --help'.\n");
  }
  CommandResult help = RunCommand({CSTOOL_BINARY, "report", "--help"});
  EXPECT_NE(help.out.find("--reader TEXT:{auto,fast,libtracecmd}=auto"), std::string::npos)
      << help.out;
  const std::string fixture = Fixture("small_v6.dat");
  CommandResult upper = RunCommand({CSTOOL_BINARY, "report", fixture, "--reader", "LIBTRACECMD"});
  CommandResult fast = RunCommand({CSTOOL_BINARY, "report", fixture, "--reader", "fast"});
  EXPECT_EQ(upper.status, 0) << upper.err;
  EXPECT_EQ(upper.out, fast.out);
}

// A report written to a full disk is lost: every command that writes to standard output
// fails and says why, as `-o` does (before, each exited 0 with nothing written).
TEST(FullDisk, StandardOutputOnAFullDiskIsAnError) {
  const std::string file = std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/golden_mutex.dat";
  for (const std::string& args :
       {"report " + file, "report " + file + " --format json", "report " + file + " --format csv",
        "diff " + file + " -- " + file}) {
    SCOPED_TRACE(args);
    std::string command = std::string("exec ") + CSTOOL_BINARY;
    command += " ";
    command += args;
    command += " >/dev/full";
    const CommandResult r = RunCommand({"/bin/sh", "-c", command});
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find(": cannot write to standard output: No space left on device\n"),
              std::string::npos)
        << r.err;
  }
}

}  // namespace
}  // namespace cstool::testing
