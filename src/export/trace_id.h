// Which recording and which machine export rows belong to.
#pragma once

#include <string>

namespace cstool {

// A fingerprint of the file's bytes (16 hex digits): the same recording exported twice,
// from any path or machine, gets the same id, so appending it again is caught.
// Throws cstool::Error when the file cannot be read.
std::string TraceIdOf(const std::string& path);

// This machine's host name (gethostname), "unknown" when it has none.
std::string LocalHostName();

}  // namespace cstool
