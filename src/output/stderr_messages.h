// The Messages sink of the command line: one line each on stderr, labelled with the
// running command ("cstool record: warning: ..."); the progress line only on a terminal.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "base/messages.h"

namespace cstool {

class StderrMessages final : public Messages {
 public:
  // `command`: the subcommand's name as typed ("record", "nmi-inject").
  explicit StderrMessages(std::string command, std::FILE* stream = stderr);

  void Warning(std::string_view text) override;
  void Status(std::string_view text) override;
  void Detail(std::string_view text) override;
  void Progress(std::string_view text) override;

 private:
  std::string prefix_;  // "cstool CMD"
  std::FILE* stream_;
  bool terminal_;
};

}  // namespace cstool
