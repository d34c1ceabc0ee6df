// Runs a function in a forked child so that a crash inside a library (libtracecmd on a
// damaged compressed file) becomes an error instead of killing cstool.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace cstool {

// Calls `fn` in a child process (its result and side effects are discarded) and returns
// how it died ("killed by signal 11 (Segmentation fault)") or nullopt if it returned.
// The child's stderr goes to /dev/null. Throws cstool::Error if fork() fails.
std::optional<std::string> CrashOfIsolatedCall(const std::function<void()>& fn);

}  // namespace cstool
