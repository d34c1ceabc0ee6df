// libFuzzer target: arbitrary bytes as a trace.dat file through `cstool report`.
// Build: make fuzz (a clang build in build-fuzz with -DCSTOOL_FUZZ=ON); seeds are in
// tests/fuzz/corpus/. A crash becomes a file in tests/fuzz/regressions/, replayed by
// tests/unit/cmd/fuzz_regression_test.cc.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_report_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const cstool::SyscallTable syscalls;
  cstool::fuzz::ReportOnBytes(data, size, syscalls);
  return 0;
}
