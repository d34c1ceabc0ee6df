#include "output/stderr_messages.h"

#include <fmt/core.h>
#include <unistd.h>

#include <utility>

namespace cstool {

StderrMessages::StderrMessages(std::string command, std::FILE* stream)
    : prefix_("cstool " + std::move(command)),
      stream_(stream),
      terminal_(::isatty(::fileno(stream)) == 1) {}

void StderrMessages::Warning(std::string_view text) {
  fmt::print(stream_, "{}: warning: {}\n", prefix_, text);
}

void StderrMessages::Status(std::string_view text) {
  fmt::print(stream_, "{}: {}\n", prefix_, text);
}

void StderrMessages::Detail(std::string_view text) { fmt::print(stream_, "{}\n", text); }

void StderrMessages::Progress(std::string_view text) {
  if (!terminal_) return;
  if (text.empty()) {
    fmt::print(stream_, "\r\033[K");
  } else {
    fmt::print(stream_, "\r{}: {}\033[K", prefix_, text);
    std::fflush(stream_);
  }
}

}  // namespace cstool
