// -N SECS for the commands that record (record, irq): a positive, finite number of
// seconds, or a duration with its unit (300ms). Leaving -N out is the only way to say "no
// time limit", so -N 0 (which once meant "forever" silently) and negative values are usage
// errors that say so. nmi-inject's -N takes the same text; there 0 runs until Ctrl-C, as
// without -N it runs its default time.
#pragma once

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/duration_text.h"
#include "base/errors.h"

namespace cstool::cmd {

// An option's text of seconds, or of a duration with its unit as --trigger takes it
// ("300ms", "2s"), as the seconds CLI11 then reads.
inline std::string SecondsOfDuration(std::string s) {
  if (const std::optional<int64_t> ns = ParseDurationNs(s))
    return fmt::format("{}", static_cast<double>(*ns) / 1e9);
  return s;
}

// -N takes seconds, or a duration with its unit.
inline CLI::Option* AddDurationOption(CLI::App& sub, double& seconds, const std::string& help) {
  return sub.add_option("-N,--duration", seconds, help)
      ->transform(SecondsOfDuration)
      ->type_name("DURATION");
}

// Throws a usage error when -N was given and is not a positive number of seconds;
// `without` says what the command does with no -N ("record until Ctrl-C").
inline void CheckDuration(const CLI::Option& option, double seconds, std::string_view without) {
  if (option.count() == 0 || (seconds > 0 && std::isfinite(seconds))) return;
  const std::string given =
      option.results().empty() ? fmt::format("{}", seconds) : option.results().back();
  throw Error(fmt::format("-N {}: the duration must be a positive number of seconds; omit -N to {}",
                          given, without),
              ExitCode::kUsage);
}

}  // namespace cstool::cmd
