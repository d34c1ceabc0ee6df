// An earlier recording under the name a new file is written to is not lost to it: it
// becomes NAME.old (replacing an older one), as perf record keeps perf.data.old. Both
// `record` and `record --recover` write such a file.
#pragma once

#include <filesystem>
#include <optional>

#include "base/messages.h"

namespace cstool {

// Moves `out` to `out`.old and says so; only a regular file with something in it
// (`-o /dev/null` stays what it is). Returns where it went, nullopt when there was nothing
// to keep. Throws cstool::Error when it cannot be moved (the caller decides whether to
// write over it).
std::optional<std::filesystem::path> KeepPreviousOutput(const std::filesystem::path& out,
                                                        Messages& messages);

// Throws a usage error, before anything is recorded, when keeping `out` as `out`.old would
// lose a file that is no recording: `out` itself (a mistyped `-o main.c`), or the `out`.old
// it would replace. Only recordings are moved aside and replaced.
void CheckPreviousOutputCanBeKept(const std::filesystem::path& out);

}  // namespace cstool
