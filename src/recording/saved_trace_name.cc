#include "recording/saved_trace_name.h"

#include <fmt/core.h>

#include <array>

namespace cstool {

void WarnIfSavedTraceLooksLikeOutput(std::string_view path, Messages& messages) {
  constexpr std::array<std::string_view, 6> kOutputEndings = {".json", ".jsonl", ".csv",
                                                              ".txt",  ".html",  ".db"};
  for (std::string_view ending : kOutputEndings)
    if (path.ends_with(ending)) {
      messages.Warning(fmt::format(
          "-o {} saves the raw trace (trace.dat, for cstool report), not this command's "
          "output, which goes to standard output (redirect it with >)",
          path));
      return;
    }
}

}  // namespace cstool
