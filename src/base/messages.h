// What cstool has to tell the user besides its output goes through Messages, never
// straight to a stream: warnings and status lines from any library, the recorder's
// progress line. The command line chooses the sink and labels each line with the
// running command ("cstool irq: warning: ..."), like bpftrace's Output, which even
// warnings go through. Library code never prints.
#pragma once

#include <string_view>

namespace cstool {

class Messages {
 public:
  virtual ~Messages() = default;

  // Something the user should know that does not stop the command:
  // "cstool CMD: warning: TEXT".
  virtual void Warning(std::string_view text) = 0;
  // What the command did or is doing: "cstool CMD: TEXT".
  virtual void Status(std::string_view text) = 0;
  // A line that continues the status before it (a row of a table), as is.
  virtual void Detail(std::string_view text) = 0;
  // A transient "cstool CMD: TEXT" line that the next one replaces; "" clears it.
  // Sinks that cannot rewrite a line (not a terminal) drop it.
  virtual void Progress(std::string_view text) = 0;
};

// Drops everything.
class NullMessages final : public Messages {
 public:
  void Warning(std::string_view) override {}
  void Status(std::string_view) override {}
  void Detail(std::string_view) override {}
  void Progress(std::string_view) override {}
};

}  // namespace cstool
