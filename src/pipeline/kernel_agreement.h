// The "kernel agrees: N/M threads" line at the end of `cstool record`: the same check as
// `cstool report --check` (check/kernel_check.h) run on the file just written, with the
// report's default thread selection.
#pragma once

#include <string>

namespace cstool {

// "kernel agrees: N/M threads (...)"; "kernel agrees: not checked (<why>)" when the
// file cannot be analysed or holds no kernel counters. Never throws.
std::string KernelAgreementLine(const std::string& file);

}  // namespace cstool
