// Outputs never replace what cannot be made again. `cstool report --timeline run.dat` (the
// output's name forgotten) takes the recording as the output and reads ./cstool.dat
// instead: the recording was overwritten, and the report was of another file. A fleet's
// database (`--format sqlite -o fleet.db`) given to a table or JSON report's `-o`, its
// `--format` forgotten, would lose every host's rows the same way.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cstool {

// What an existing file holds that an output must not replace.
enum class KeptFile { kNone, kRecording, kSqliteDatabase };

// What `path` holds (kNone when it is absent, no regular file, or neither). Throws a usage
// error when it is a regular file this process cannot read: it cannot tell, and an output
// must not replace it unseen.
KeptFile KeptFileAt(const std::string& path);

// Throws a usage error when `path` is an existing recording or SQLite database; `option`
// names the output option that gave it ("--timeline", "-o").
void RefuseToOverwriteKeptFile(const std::string& path, std::string_view option);

// Throws a usage error when `path` is an existing recording only: for `--format sqlite -o`,
// which adds to a database (the writer refuses any other file that is not one).
void RefuseToOverwriteRecording(const std::string& path, std::string_view option);

// Throws a usage error when two of a command's outputs, given as (option, path) pairs
// ("" for an output not asked for), are one file: the second written replaced the first
// (`--html out.json --timeline out.json` kept only the page).
void RefuseSharedOutputs(const std::vector<std::pair<std::string_view, std::string>>& outputs);

}  // namespace cstool
