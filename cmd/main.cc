// cstool entry point: one declarative table of subcommands, one run wrapper that turns
// errors into a single message line and an exit status (2 for usage, 1 for failures).
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/errors.h"
#include "cmd/commands.h"
#include "output/stderr_messages.h"

namespace cstool::cmd {
namespace {

constexpr Subcommand kSubcommands[] = {
    {"record", "Record scheduler, IRQ and syscall events into a trace.dat file", SetupRecord},
    {"report", "Per-thread microstates and cause-labelled context switches", SetupReport},
    {"diff", "Compare recordings before and after a change, thread by thread", SetupDiff},
    {"irq", "Which interrupts stole time from which tasks; IRQ affinities", SetupIrq},
    {"nmi-inject", "Generate timer/IPI/NMI interrupts on one CPU at a rate", SetupNmiInject},
    {"msa", "Live microstates of a running process, prstat -m style", SetupMsa},
};

// Edit distance between two option names (insertions, deletions, substitutions).
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// For an option `sub` does not have: its nearest long option, when one starts the other
// or they differ by at most two letters (record --compression, trace-cmd's spelling, is
// cstool's --compress); "" otherwise.
std::string NearestOption(const CLI::App& sub, std::string_view arg) {
  if (!arg.starts_with("--")) return "";
  arg = arg.substr(
      2, arg.find('=') == std::string_view::npos ? std::string_view::npos : arg.find('=') - 2);
  if (arg.size() < 3) return "";  // "--" itself, or too short to resemble anything
  std::string best;
  size_t best_distance = 3;
  for (const CLI::Option* o : sub.get_options()) {
    for (const std::string& name : o->get_lnames()) {
      const size_t d = name.starts_with(arg) || arg.starts_with(name) ? 1 : EditDistance(arg, name);
      if (d < best_distance) {
        best_distance = d;
        best = "--" + name;
      }
    }
  }
  return best;
}

int Main(int argc, char** argv) {
  CLI::App app{
      "cstool: where every nanosecond of a program's threads went, and why every "
      "context switch happened.",
      "cstool"};
  app.set_version_flag("--version", std::string("cstool ") + CSTOOL_VERSION);
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
  const auto not_a_command = [](std::string_view word) {
    static const std::map<std::string_view, std::string_view> kDoneBy = {
        {"export", "cstool report FILE --format sqlite|jsonl -o OUT (man 5 cstool-export)"},
        {"timeline", "cstool report FILE --timeline OUT.pftrace"},
        {"check", "cstool report FILE --check"},
        {"dump", "cstool record --dump"}};
    const auto done_by = kDoneBy.find(word);
    fmt::print(stderr, "cstool: '{}' is not a cstool command{}. See 'cstool --help'.\n", word,
               done_by == kDoneBy.end() ? "" : fmt::format("; that is {}", done_by->second));
    return static_cast<int>(ExitCode::kUsage);
  };
  if (argv[1][0] != '-' && subapps.count(argv[1]) == 0 && std::string_view(argv[1]) != "help")
    return not_a_command(argv[1]);
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
    fmt::print(stderr, "{}: {}\n", who, e.what());
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && !name.empty()) {
      CLI::App& sub = *subapps[name];
      // `cstool record ls -la`: the command's own options read as cstool's. Only when
      // every unexpected word comes after the command's first: `--stak ls` is a typo.
      const CLI::Option* command = sub.get_option_no_throw("command");
      const std::vector<std::string_view> words(argv + 1, argv + argc);
      const auto sub_at = std::find(words.begin(), words.end(), name);
      const bool separated = std::find(sub_at, words.end(), "--") != words.end();
      auto first = words.end();
      if (command != nullptr && command->count() > 0)
        first = std::find(sub_at, words.end(), command->results().front());
      const std::vector<std::string> unexpected = sub.remaining();
      const bool after_command =
          first != words.end() &&
          std::all_of(unexpected.begin(), unexpected.end(), [&](const std::string& arg) {
            return std::find(sub_at, first, arg) == first;
          });
      if (!separated && after_command) {
        std::string line = fmt::format("{} [OPTIONS] --", who);
        for (auto word = first; word != words.end(); ++word) line += fmt::format(" {}", *word);
        fmt::print(stderr, "{}: the traced command's options go after '--': {}\n", who, line);
      } else {
        for (const std::string& arg : unexpected)
          if (std::string near = NearestOption(sub, arg); !near.empty())
            fmt::print(stderr, "{}: {} is not an option of {}; did you mean {}?\n", who, arg, name,
                       near);
      }
    }
    fmt::print(stderr, "See '{} --help'.\n", who);
    return static_cast<int>(ExitCode::kUsage);
  }

  if (help->parsed()) {
    if (help_topic.empty()) {  // app.help() would describe the selected subcommand, help
      fmt::print("{}", top_help());
      return 0;
    }
    auto it = subapps.find(help_topic);
    if (it == subapps.end()) return not_a_command(help_topic);
    fmt::print("{}", it->second->help(app.get_name()));  // "Usage: cstool NAME", as --help
    return 0;
  }

  for (auto& [name, sub] : subapps) {
    if (!sub->parsed()) continue;
    StderrMessages messages(name);  // "cstool NAME: warning: ..."
    try {
      return runners[name](messages);
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
