// `cstool diff`: option parsing only; the work is in commands/diff_command.
#include <algorithm>
#include <iostream>
#include <memory>

#include "cmd/commands.h"
#include "cmd/limit_option.h"
#include "cmd/reader_option.h"
#include "commands/diff_command.h"

namespace cstool::cmd {
namespace {

// --help in the order the command line takes the recordings (see the positionals below).
class DiffHelpFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* /*app*/, std::string name) const override {
    return "Usage: " + name + " [OPTIONS] BASE... -- NEW...\n   or: " + name +
           " [OPTIONS] BASE NEW\n";
  }
  std::string make_positionals(const CLI::App* app) const override {
    std::vector<const CLI::Option*> positionals =
        app->get_options([](const CLI::Option* o) { return o->get_positional(); });
    std::reverse(positionals.begin(), positionals.end());
    return make_group("Positionals", true, positionals);
  }
};

}  // namespace

RunFn SetupDiff(CLI::App& sub) {
  auto opts = std::make_shared<DiffOptions>();
  sub.add_option("--format", opts->format, "Output format: table, json or csv")
      ->capture_default_str();
  sub.add_option("--html", opts->html,
                 "Also write a self-contained HTML page with paired bars and the tables");
  AddLimitOption(sub, opts->limit, "Table rows per section (0: all)");
  sub.add_flag("--all-threads", opts->all_threads,
               "Also compare threads outside the recorded workloads");
  sub.add_flag("--salvage", opts->salvage,
               "Compare what a damaged recording still holds (stops or skips at the damage)");
  AddReaderOption(sub, opts->reader);
  AddBufferOption(sub, opts->buffer);
  AddJobsOption(sub, opts->jobs);
  // BASE... -- NEW...: CLI11 gives positionals to the first option that takes them, and a
  // subcommand keeps "--" (in remaining()) only while a positional still lacks its first
  // value. So NEW is declared first and refuses every file until "--" was seen; BASE
  // takes the rest. (Validators run as each positional is parsed: validate_positionals.)
  sub.validate_positionals();
  CLI::App* self = &sub;
  // NEW is not required() here: RunDiff says how to give it (CLI11 only that it is needed).
  sub.add_option("NEW", opts->new_files, "Recordings after the change (after --)")
      ->check(CLI::Validator(
          [self](std::string&) {
            const std::vector<std::string> seen = self->remaining();
            return std::find(seen.begin(), seen.end(), "--") != seen.end()
                       ? std::string()
                       : std::string("before --");
          },
          "", ""));
  sub.add_option("BASE", opts->base_files, "Recordings before the change (before --)")->required();
  sub.footer(
      "Examples:\n"
      "  cstool diff before.dat after.dat\n"
      "  cstool diff --html diff.html b1.dat b2.dat b3.dat -- n1.dat n2.dat n3.dat\n"
      "Two recordings need no --. Options go before --; with several recordings per side "
      "each value is their mean and "
      "min..max spread, and * flags a change larger than the spread of both sides.");
  sub.formatter(std::make_shared<DiffHelpFormatter>());
  return [opts, self](Messages& messages) {
    // Two recordings and no --: the first is before the change, the second after, as
    // diff(1) and perf diff take them. ("--" with no NEW after it stays an error.)
    const std::vector<std::string> rest = self->remaining();
    if (opts->new_files.empty() && opts->base_files.size() == 2 &&
        std::find(rest.begin(), rest.end(), "--") == rest.end()) {
      opts->new_files = {opts->base_files.back()};
      opts->base_files.pop_back();
    }
    return RunDiff(*opts, std::cout, messages);
  };
}

}  // namespace cstool::cmd
