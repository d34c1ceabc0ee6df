// A whole file read into memory as text: /proc and tracefs files too, whose size stat
// gives as 0, so the reading is streamed rather than sized up front.
#pragma once

#include <optional>
#include <string>

namespace cstool {

// The file's contents; std::nullopt when it cannot be opened.
std::optional<std::string> ReadWholeFile(const std::string& path);

}  // namespace cstool
