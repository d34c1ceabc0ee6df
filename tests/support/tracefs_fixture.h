// Inputs for tests that build trace files by hand: the tracefs texts of a 6.18 kernel
// (tests/fixtures/tracefs-6.18: header_page, header_event, event formats) and a writer of
// host-endian numbers into ring-buffer pages.
#pragma once

#include <cstring>
#include <string>

#include "tests/support/files.h"

namespace cstool::testing {

// tests/fixtures/tracefs-6.18/NAME ("" if missing).
inline std::string TracefsFixture(const std::string& name) {
  return ReadWholeFile(std::string(CSTOOL_SOURCE_DIR) + "/tests/fixtures/tracefs-6.18/" + name);
}

// Writes `v` into `page` at byte `off`, in host byte order.
template <typename T>
void PutAt(std::string& page, size_t off, T v) {
  std::memcpy(page.data() + off, &v, sizeof v);
}

}  // namespace cstool::testing
