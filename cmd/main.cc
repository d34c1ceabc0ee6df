// cstool entry point: one declarative table of subcommands, one run wrapper that turns
// errors into a single message line and an exit status (2 for usage, 1 for failures).
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

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

  // Like git: name the unknown command instead of CLI11's generic complaint.
  if (argc > 1 && argv[1][0] != '-' && subapps.count(argv[1]) == 0 &&
      std::string_view(argv[1]) != "help") {
    fmt::print(stderr, "cstool: '{}' is not a cstool command. See 'cstool --help'.\n", argv[1]);
    return static_cast<int>(ExitCode::kUsage);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : static_cast<int>(ExitCode::kUsage);
  }

  if (help->parsed()) {
    if (help_topic.empty()) {  // app.help() would describe the selected subcommand, help
      fmt::print("{}",
                 app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal));
      return 0;
    }
    auto it = subapps.find(help_topic);
    if (it == subapps.end()) {
      fmt::print(stderr, "cstool: no such subcommand '{}'. See 'cstool --help'.\n", help_topic);
      return static_cast<int>(ExitCode::kUsage);
    }
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
