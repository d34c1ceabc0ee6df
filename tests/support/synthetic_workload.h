// A synthetic trace shaped like a syscall-heavy workload on many CPUs, for benchmarks and
// for the release build's profile (scripts/pgo-build.sh): each CPU runs four threads of
// its own that take turns, in bursts (syscall pairs; the running thread wakes the next one
// and sleeps; a timer interrupt with its softirq; now and then a fork), so that the state
// machine sees a consistent schedule, as in a real recording of many CPUs; the CPU whose
// clock is behind writes next, so the streams interleave in time. Formats come from
// /sys/kernel/tracing/events when it is readable, else from the snapshot in
// tests/fixtures/formats/events.
#pragma once

#include <cstdint>
#include <string>

namespace cstool {

// Writes a v6 trace.dat of about `events` events over `cpus` CPUs to `path` (throws
// cstool::Error when it cannot).
void WriteSyntheticWorkload(int cpus, uint64_t events, const std::string& path);

}  // namespace cstool
