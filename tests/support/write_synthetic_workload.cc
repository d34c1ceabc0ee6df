// cstool_synthetic_trace CPUS EVENTS OUT.dat [OUT_V7.dat]: writes WriteSyntheticWorkload's
// file (and its v7+zstd conversion). The release build trains its profile on it
// (scripts/pgo-build.sh): the recordings it makes there have the machine's few CPUs, and
// a profile without many CPUs left the merge of many streams 27 % slower than no profile.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "tests/support/synthetic_trace.h"
#include "tests/support/synthetic_workload.h"

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: %s CPUS EVENTS OUT.dat [OUT_V7.dat]\n", argv[0]);
    return 2;
  }
  const int cpus = std::atoi(argv[1]);
  const long long events = std::atoll(argv[2]);
  if (cpus < 1 || events < 1) {
    std::fprintf(stderr, "%s: CPUS and EVENTS must be positive\n", argv[0]);
    return 2;
  }
  try {
    cstool::WriteSyntheticWorkload(cpus, static_cast<uint64_t>(events), argv[3]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 1;
  }
  if (argc == 5 && !cstool::ConvertToV7Zstd(argv[3], argv[4])) {
    std::fprintf(stderr, "%s: no v7 conversion (trace-cmd convert failed or is missing)\n",
                 argv[0]);
    return 1;
  }
  return 0;
}
