// The subcommand table's interface: each cmd/<sub>.cc adds its options to a CLI11
// sub-app and returns the function that runs it once parsing succeeded, given where
// its warnings and status lines go (labelled with the subcommand's name).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string_view>

#include "base/messages.h"

namespace cstool::cmd {

using RunFn = std::function<int(Messages& messages)>;
using SetupFn = RunFn (*)(CLI::App& sub);

struct Subcommand {
  std::string_view name;
  std::string_view summary;
  SetupFn setup;
};

RunFn SetupRecord(CLI::App& sub);
RunFn SetupReport(CLI::App& sub);
RunFn SetupDiff(CLI::App& sub);
RunFn SetupIrq(CLI::App& sub);
RunFn SetupNmiInject(CLI::App& sub);
RunFn SetupMsa(CLI::App& sub);

}  // namespace cstool::cmd
