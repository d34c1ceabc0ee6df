#include "base/version.h"

namespace cstool {
const char* Version() { return CSTOOL_VERSION; }
}  // namespace cstool
