// cstool entry point: one declarative table of subcommands, one run wrapper that turns
// errors into a single message line and an exit status (2 for usage, 1 for failures).
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "base/errors.h"
#include "build_commit.h"
#include "cmd/commands.h"
#include "output/stderr_messages.h"

namespace cstool::cmd {
namespace {

constexpr Subcommand kSubcommands[] = {
    {"record",
     "Record scheduler, IRQ and syscall events into a trace.dat file (default cstool.dat)",
     SetupRecord},
    {"report", "Per-thread microstates and cause-labelled context switches", SetupReport},
    {"diff", "Compare recordings before and after a change, thread by thread", SetupDiff},
    {"irq", "Which interrupts stole time from which tasks; IRQ affinities", SetupIrq},
    {"nmi-inject", "Generate timer/IPI/NMI interrupts on one CPU at a rate", SetupNmiInject},
    {"msa", "Live microstates of a running process, prstat -m style", SetupMsa},
};

// Edit distance between two option names: insertions, deletions, substitutions and
// transpositions of two neighbours (a typo's commonest slip: --fromat is --format).
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> before(b.size() + 1), last(b.size() + 1), row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) last[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      row[j] =
          std::min({last[j] + 1, row[j - 1] + 1, last[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        row[j] = std::min(row[j], before[j - 2] + 1);
    }
    std::swap(before, last);
    std::swap(last, row);
  }
  return last[b.size()];
}

// The name of a long option as typed ("--name" or "--name=value"); "" for anything else.
std::string_view LongOptionName(std::string_view arg) {
  if (!arg.starts_with("--")) return {};
  return arg.substr(
      2, arg.find('=') == std::string_view::npos ? std::string_view::npos : arg.find('=') - 2);
}

// For an option `sub` does not have: its nearest long option, when they differ by at most
// two edits or one starts the other (record --compression, trace-cmd's spelling, is
// cstool's --compress), an edit counting for less than a prefix (--fromat is --format,
// not --from); "" otherwise.
std::string NearestOption(const CLI::App& sub, std::string_view arg) {
  arg = LongOptionName(arg);
  if (arg.size() < 3) return "";  // "--" itself, or too short to resemble anything
  // In half edits: a prefix is one and a half.
  constexpr size_t kPrefix = 3, kTooFar = 6;
  std::string best;
  size_t best_distance = kTooFar;
  for (const CLI::Option* o : sub.get_options()) {
    for (const std::string& name : o->get_lnames()) {
      const size_t edits = 2 * EditDistance(arg, name);
      const size_t d =
          name.starts_with(arg) || arg.starts_with(name) ? std::min(kPrefix, edits) : edits;
      if (d < best_distance) {
        best_distance = d;
        best = "--" + name;
      }
    }
  }
  return best;
}

// The subcommand a mistyped command word is nearest to (at most two edits), or "".
std::string NearestCommand(std::string_view word) {
  std::string best;
  size_t best_distance = 3;
  for (const Subcommand& s : kSubcommands)
    if (const size_t d = EditDistance(word, s.name); d < best_distance) {
      best_distance = d;
      best = std::string(s.name);
    }
  return best;
}

// CLI11's "Could not convert: --tid = abc" said as what the option takes: "--tid takes a
// whole number, not 'abc'".
std::string ConversionText(const CLI::App& sub, const std::string& what) {
  constexpr std::string_view kPrefix = "Could not convert: ";
  const size_t equals = what.find(" = ");
  if (!what.starts_with(kPrefix) || equals == std::string::npos) return what;
  const std::string name = what.substr(kPrefix.size(), equals - kPrefix.size());
  const std::string value = what.substr(equals + 3);
  const CLI::Option* option = sub.get_option_no_throw(name);
  const std::string type = option ? option->get_type_name() : "";
  std::string takes = "another kind of value";
  if (type == "INT" || type == "UINT" || type == "N")
    takes = "a whole number";
  else if (type == "FLOAT" || type == "NUMBER")
    takes = "a number";
  else if (type == "SECS")
    takes = "a number of seconds";
  else if (type == "DURATION")
    takes = "a number of seconds or a duration with its unit (300ms, 2s, 500us)";
  else if (!type.empty())
    takes = type;
  return fmt::format("{} takes {}, not '{}'", name, takes, value);
}

// CLI11's list of unexpected arguments without the "--" that ends cstool's own options
// (`record --bogus -- true` named "-- --bogus").
std::string ExtrasText(const CLI::App& sub) {
  std::vector<std::string> extras;
  for (const std::string& arg : sub.remaining())
    if (arg != "--") extras.push_back(arg);
  if (extras.empty()) return "";
  return fmt::format("The following argument{} not expected: {}",
                     extras.size() == 1 ? " was" : "s were", fmt::join(extras, " "));
}

// The subcommand that has the long option `arg` (--stacks is record's, not report's), or "".
std::string CommandWithOption(const std::map<std::string, CLI::App*>& subapps,
                              std::string_view arg) {
  arg = LongOptionName(arg);
  if (arg.empty()) return "";
  for (const auto& [name, sub] : subapps)
    for (const CLI::Option* o : sub->get_options())
      for (const std::string& lname : o->get_lnames())
        if (lname == arg) return name;
  return "";
}

// Whether option `opt` takes the separate word `next` as its value: always when it needs
// one; when the value is optional ([=VALUE]), only a word its check accepts (--dump 123),
// as getopt takes an optional value only attached.
bool TakesSeparateValue(CLI::Option& opt, const std::string& next) {
  if (opt.get_items_expected_max() == 0) return false;  // a flag
  if (opt.get_items_expected_min() > 0) return true;
  if (next.starts_with("-")) return false;
  try {
    std::string value = next;
    return (*opt.get_validator(0))(value).empty();
  } catch (const CLI::OptionNotFound&) {
    return false;  // no check: only an attached value
  }
}

// `cstool record -o x.dat ls -a`: as in perf and trace-cmd, a subcommand's options end at
// the first word of the command it runs, so the command's own options stay its own (-a is
// record's too: taken as record's, it silently traced every task). Puts "--" before that
// word unless the arguments have one already. `words`: the arguments after the
// subcommand's name.
struct CommandStart {
  size_t at = std::string::npos;         // where "--" was put (npos: nowhere)
  std::set<const CLI::Option*> options;  // the subcommand's options before it
};
CommandStart EndOptionsAtCommand(CLI::App& sub, std::vector<std::string>& words) {
  CommandStart start;
  if (sub.get_option_no_throw("command") == nullptr) return start;
  if (std::find(words.begin(), words.end(), "--") != words.end()) return start;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.size() < 2 || w[0] != '-') {  // the command's first word
      words.insert(words.begin() + static_cast<std::ptrdiff_t>(i), "--");
      start.at = i;
      return start;
    }
    const std::string next = i + 1 < words.size() ? words[i + 1] : "";
    if (w.starts_with("--")) {
      CLI::Option* opt = sub.get_option_no_throw(w.substr(0, w.find('=')));
      if (opt == nullptr) return {};  // not an option of `sub`: the parse names it
      start.options.insert(opt);
      if (w.find('=') == std::string::npos && TakesSeparateValue(*opt, next)) ++i;
      continue;
    }
    // -x, -xVALUE, or flags run together (-ab): the first that takes a value takes the
    // rest of the word, or the next word when it is the last.
    for (size_t c = 1; c < w.size(); ++c) {
      CLI::Option* opt = sub.get_option_no_throw(std::string{'-', w[c]});
      if (opt == nullptr) return {};
      start.options.insert(opt);
      if (opt->get_items_expected_max() == 0) continue;
      if (c + 1 == w.size() && TakesSeparateValue(*opt, next)) ++i;
      break;
    }
  }
  return {};
}

// `cstool record CMD ... -o FILE` with no -o before CMD: the -o is the command's (the rule
// above), which a new user rarely means; the recording goes to the default file. Said,
// not refused (gcc -o is the command's). `start`: what EndOptionsAtCommand found in `words`.
void NoteOutputAfterCommand(const std::string& name, const CLI::App& sub,
                            const std::vector<std::string>& words, const CommandStart& start) {
  const CLI::Option* output = sub.get_option_no_throw("--output");
  if (output == nullptr || start.at >= words.size() || start.options.contains(output)) return;
  auto is_output = [](const std::string& w) {
    return w == "-o" || w == "--output" || w.starts_with("--output=");
  };
  for (size_t i = start.at + 1; i < words.size(); ++i)
    if (is_output(words[i])) {
      fmt::print(stderr,
                 "cstool {}: note: '{}' after the command is the command's (cstool {}'s options "
                 "go before it: cstool {} -o FILE CMD ...); recording into {}\n",
                 name, words[i], name, name, output->get_default_str());
      return;
    }
}

// A report written to a full disk is lost: the command fails and says so, as with -o. (A
// reader that went away, `| head`, ends it by SIGPIPE, here or before, as for any tool,
// unless SIGPIPE is ignored: then EPIPE is said like any other write error.)
int FinishStandardOutput(const std::string& name, int status) {
  std::cout.flush();
  const bool flushed = std::fflush(stdout) == 0;
  if (flushed && !std::ferror(stdout) && !std::cout.fail()) return status;
  // The failed write's errno (the flush's, or an earlier write's when nothing failed
  // since): only a write error's is named, not another call's left over.
  const int err = errno;
  const bool write_error =
      err == ENOSPC || err == EIO || err == EFBIG || err == EDQUOT || err == EPIPE || err == EBADF;
  fmt::print(stderr, "cstool {}: cannot write to standard output{}\n", name,
             write_error ? fmt::format(": {}", std::strerror(err)) : std::string());
  return status == 0 ? static_cast<int>(ExitCode::kFailure) : status;
}

// The first option of `sub` given an empty value ("-p ''", "-C ''"), by its name; ""
// when none was. CLI11 reads such a value as 0 or as the option's absence, which is
// neither what was typed nor an error. (Positionals may be empty: a command's arguments;
// so may an option's value that may be left out, as --compress's.)
std::string EmptyOptionValue(const CLI::App& sub) {
  // Where an empty value is documented as the default: the whole trace, this host.
  static constexpr std::string_view kEmptyMeansDefault[] = {"--html-range", "--host"};
  for (const CLI::Option* o : sub.get_options()) {
    if (std::find(std::begin(kEmptyMeansDefault), std::end(kEmptyMeansDefault), o->get_name()) !=
        std::end(kEmptyMeansDefault))
      continue;
    if (o->get_positional() || o->get_type_size_max() == 0 || o->get_expected_min() == 0 ||
        o->count() == 0)
      continue;
    for (const std::string& value : o->results())
      if (value.empty()) return o->get_name();
  }
  return "";
}

int Main(int argc, char** argv) {
  CLI::App app{
      "cstool: where every nanosecond of a program's threads went, and why every "
      "context switch happened.",
      "cstool"};
  app.set_version_flag("--version",
                       fmt::format("cstool {} (commit {})", CSTOOL_VERSION, CSTOOL_BUILD_COMMIT));
  app.require_subcommand(1);
  app.fallthrough(false);

  std::map<std::string, RunFn> runners;
  std::map<std::string, CLI::App*> subapps;
  for (const Subcommand& s : kSubcommands) {
    CLI::App* sub = app.add_subcommand(std::string(s.name), std::string(s.summary));
    runners[std::string(s.name)] = s.setup(*sub);
    subapps[std::string(s.name)] = sub;
  }
  std::string help_topic;
  CLI::App* help = app.add_subcommand("help", "Show help for cstool or one subcommand");
  help->add_option("subcommand", help_topic, "Subcommand to describe");

  const auto top_help = [&] {
    return app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
  };
  // Like git: no command shows what there is (a usage error all the same).
  if (argc == 1) {
    fmt::print(stderr, "{}", top_help());
    return static_cast<int>(ExitCode::kUsage);
  }
  // Like git: name the unknown command instead of CLI11's generic complaint, and the one
  // that does it for the words a user of the manual pages would try.
  // (`next`: the word after it, which may be the command, as in `cstool run.dat report`.)
  const auto not_a_command = [&subapps](std::string_view word, std::string_view next) {
    static const std::map<std::string_view, std::string_view> kDoneBy = {
        {"export", "cstool report FILE --format sqlite|jsonl -o OUT (man 5 cstool-export)"},
        {"timeline", "cstool report FILE --timeline OUT.pftrace"},
        {"check", "cstool report FILE --check"},
        {"dump", "cstool record --dump"},
        // perf sched's subcommands: where their answers are.
        {"sched",
         "cstool report FILE (perf sched latency's numbers: the THREADS and WAKERS "
         "tables, --sort longest_wait)"},
        {"latency", "cstool report FILE --sort longest_wait (MAXWAIT: perf sched's max delay)"},
        {"timehist",
         "cstool report FILE --timeline OUT.pftrace, or --format sqlite|jsonl (a "
         "row per switch and slice)"},
        {"map",
         "cstool report FILE --html OUT.html or --timeline OUT.pftrace (a track per "
         "CPU)"}};
    const auto done_by = kDoneBy.find(word);
    std::string hint = ".";
    std::error_code ec;
    if (done_by != kDoneBy.end()) {
      hint = fmt::format("; that is {}.", done_by->second);
    } else if (std::filesystem::is_regular_file(word, ec)) {
      // A file first: the command goes before it.
      hint = fmt::format(". A file goes after the command: cstool {} {}.",
                         subapps.count(std::string(next)) != 0 ? next : "report", word);
    } else if (const std::string near = NearestCommand(word); !near.empty()) {
      hint = fmt::format(". Did you mean '{}'?", near);
    }
    fmt::print(stderr, "cstool: '{}' is not a cstool command{} See 'cstool --help'.\n", word, hint);
    return static_cast<int>(ExitCode::kUsage);
  };
  if (argv[1][0] != '-' && subapps.count(argv[1]) == 0 && std::string_view(argv[1]) != "help")
    return not_a_command(argv[1], argc > 2 ? argv[2] : "");
  std::vector<std::string> args(argv, argv + argc);
  if (auto it = subapps.find(args[1]); it != subapps.end()) {
    std::vector<std::string> words(args.begin() + 2, args.end());
    const CommandStart start = EndOptionsAtCommand(*it->second, words);
    NoteOutputAfterCommand(args[1], *it->second, words, start);
    args.resize(2);
    args.insert(args.end(), words.begin(), words.end());
  }
  std::vector<char*> arg_pointers;
  arg_pointers.reserve(args.size() + 1);
  for (std::string& a : args) arg_pointers.push_back(a.data());
  argc = static_cast<int>(arg_pointers.size());
  arg_pointers.push_back(nullptr);
  argv = arg_pointers.data();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
      return app.exit(e);  // --help, --version
    // One line in cstool's own form, "cstool NAME: ...", like every other error.
    std::string name;
    for (const auto& [n, sub] : subapps)
      if (sub->parsed()) name = n;
    const std::string who = name.empty() ? "cstool" : "cstool " + name;
    std::string text = e.what();
    if (!name.empty() && dynamic_cast<const CLI::ConversionError*>(&e) != nullptr)
      text = ConversionText(*subapps[name], text);
    if (!name.empty() && dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr)
      if (std::string extras = ExtrasText(*subapps[name]); !extras.empty()) text = extras;
    // Each unexpected word gets its own line where one says more than CLI11's (a typo's
    // nearest option, another command's option, ...); CLI11's line then goes unless a word
    // is left that no line names (the value after a typo'd option is that option's).
    std::vector<std::string> hints;
    bool all_named = true;
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && !name.empty()) {
      CLI::App& sub = *subapps[name];
      const std::vector<std::string> remaining = sub.remaining();  // (a copy each call)
      // The option a hint named takes the next word as its value (it takes one, and the
      // word did not hold it after "=").
      bool next_is_value = false;
      const auto takes_value = [](const CLI::App& app, const std::string& option,
                                  std::string_view word) {
        const CLI::Option* o = app.get_option_no_throw(option);
        return o != nullptr && o->get_items_expected_max() > 0 &&
               word.find('=') == std::string_view::npos;
      };
      for (const std::string& arg : remaining) {
        const size_t hints_before = hints.size();
        bool named_takes_value = false;
        if (std::string near = NearestOption(sub, arg); !near.empty()) {
          hints.push_back(
              fmt::format("{}: {} is not an option of {}; did you mean {}?", who, arg, name, near));
          named_takes_value = takes_value(sub, near, arg);
        } else if (std::error_code ec;
                   name == "report" && !arg.starts_with("-") &&
                   sub.get_option("file")->count() > 0 &&
                   std::filesystem::is_regular_file(arg, ec) &&
                   std::filesystem::is_regular_file(sub.get_option("file")->as<std::string>(),
                                                    ec) &&
                   std::none_of(remaining.begin(), remaining.end(),
                                [](const std::string& a) { return a.starts_with("-"); })) {
          // A second recording: comparing two is diff's.
          hints.push_back(
              fmt::format("{}: report reads one recording; to compare two: cstool "
                          "diff {} -- {}",
                          who, sub.get_option("file")->as<std::string>(), arg));
        } else if ((arg == "-i" || arg == "--input") &&
                   sub.get_option_no_throw("file") != nullptr &&
                   sub.get_option_no_throw("file")->get_positional()) {
          // trace-cmd report -i FILE, perf sched -i FILE: here the file is the argument.
          hints.push_back(
              fmt::format("{}: the recording is {}'s argument, without {}: cstool {} FILE", who,
                          name, arg, name));
        } else if ((arg == "-p" || arg == "--pid") && sub.get_option_no_throw("pid") != nullptr &&
                   sub.get_option_no_throw("pid")->get_positional()) {
          // record and report take -p PID; a command whose argument is the pid does not.
          hints.push_back(fmt::format("{}: the pid is {}'s argument, without {}: cstool {} PID",
                                      who, name, arg, name));
        } else if (std::string owner = CommandWithOption(subapps, arg); !owner.empty()) {
          hints.push_back(
              fmt::format("{}: {} is an option of 'cstool {}', not of {}", who, arg, owner, name));
          named_takes_value =
              takes_value(*subapps.at(owner), "--" + std::string(LongOptionName(arg)), arg);
        }
        const bool named = hints.size() > hints_before;
        // A value may be a negative number, never another option.
        const bool value =
            next_is_value && (!arg.starts_with("-") ||
                              (arg.size() > 1 && std::isdigit(static_cast<unsigned char>(arg[1]))));
        if (!named && !value && arg != "--") all_named = false;
        next_is_value = named && named_takes_value;
      }
    }
    if (hints.empty() || !all_named) fmt::print(stderr, "{}: {}\n", who, text);
    for (const std::string& hint : hints) fmt::print(stderr, "{}\n", hint);
    fmt::print(stderr, "See '{} --help'.\n", who);
    return static_cast<int>(ExitCode::kUsage);
  }

  if (help->parsed()) {
    if (help_topic.empty()) {  // app.help() would describe the selected subcommand, help
      fmt::print("{}", top_help());
      return 0;
    }
    auto it = subapps.find(help_topic);
    if (it == subapps.end()) return not_a_command(help_topic, "");
    fmt::print("{}", it->second->help(app.get_name()));  // "Usage: cstool NAME", as --help
    return 0;
  }

  for (auto& [name, sub] : subapps) {
    if (!sub->parsed()) continue;
    if (const std::string empty = EmptyOptionValue(*sub); !empty.empty()) {
      fmt::print(stderr, "cstool {}: {}: an empty value (give one, or leave the option out)\n",
                 name, empty);
      fmt::print(stderr, "See 'cstool {} --help'.\n", name);
      return static_cast<int>(ExitCode::kUsage);
    }
    StderrMessages messages(name);  // "cstool NAME: warning: ..."
    try {
      return FinishStandardOutput(name, runners[name](messages));
    } catch (const Error& e) {
      fmt::print(stderr, "cstool {}: {}\n", name, e.what());
      return static_cast<int>(e.code());
    } catch (const std::exception& e) {
      fmt::print(stderr, "cstool {}: {}\n", name, e.what());
      return static_cast<int>(ExitCode::kFailure);
    }
  }
  return static_cast<int>(ExitCode::kUsage);
}

}  // namespace
}  // namespace cstool::cmd

int main(int argc, char** argv) { return cstool::cmd::Main(argc, argv); }
