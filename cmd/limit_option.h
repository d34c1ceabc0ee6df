// --limit ROWS: how many rows a table shows (report --critical-path, diff).
#pragma once

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstddef>
#include <string>

namespace cstool::cmd {

// --limit ROWS: a count of table rows, 0 for all.
inline CLI::Option* AddLimitOption(CLI::App& sub, size_t& rows, const std::string& help) {
  return sub.add_option("--limit", rows, help)
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& s) {
            // CLI11's NonNegativeNumber prints its range in 310 digits.
            size_t v = 0;
            const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
            return ec == std::errc() && end == s.data() + s.size()
                       ? std::string()
                       : "takes a number of rows (0: all), not '" + s + "'";
          },
          "ROWS", "rows"));
}

}  // namespace cstool::cmd
