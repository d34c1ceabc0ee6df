#include "cmd/commands.h"
#include "core/errors.h"

namespace cstool::cmd {
RunFn SetupRecord(CLI::App& sub) {
  (void)sub;
  return []() -> int { throw Error("not built yet"); };
}
}  // namespace cstool::cmd
