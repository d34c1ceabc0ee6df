#pragma once

namespace cstool {
const char* Version();
}  // namespace cstool
